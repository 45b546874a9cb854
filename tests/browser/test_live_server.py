"""The browser tests' own server: a connection the browser drops must not leave a file open behind it."""

from __future__ import annotations

import gc
import socket
import struct

from .live import LiveServer


def test_a_static_fetch_the_client_resets_leaves_no_file_open(app):
    # Bytes after the request keep werkzeug reading the socket once the response is written, so the reset
    # lands in that read, the place where its server skips the response's close(). The file send_file
    # opened would then be collected unclosed: a ResourceWarning, which the suite's filters make an error
    # of this test.
    with (
        LiveServer(app) as live,
        socket.create_connection(("127.0.0.1", live.server.server_port), 10) as client,
    ):
        client.sendall(b"GET /static/favicon.svg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nleft over")
        response = b""
        while b"</svg>" not in response:
            chunk = client.recv(65536)
            assert chunk, response
            response += chunk
        assert response.startswith(b"HTTP/1.1 200")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends a reset
    gc.collect()  # the server has joined the request's thread on leaving
