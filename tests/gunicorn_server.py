"""gunicorn (2 workers x 8 threads) on the suite's database, for tests that need real processes.

A helper module, not a test module: tests that start the server import `serve` from here.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUNICORN = Path(sys.executable).with_name("gunicorn")
TIMEOUT = 30  # seconds, for the server's start and every request


def workers(master: int) -> int:
    """Live children of the gunicorn master (its workers)."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            count += fields[1] == str(master) and fields[0] != "Z"
    return count


def get_status(port: int, path: str) -> int | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    except OSError:
        return None
    finally:
        conn.close()


@contextmanager
def serve(database_url: str, redis_url: str, log: Path | None = None, **settings: str) -> Iterator[int]:
    """gunicorn on 127.0.0.1 and a free port; the port. Stopped in any case.

    The listening socket is bound here (port 0) and inherited (fd://), so no port can be taken in
    between. --preload (the factory opens no connection) makes both workers ready when forked.
    `settings` are more environment variables for the server (infra/config.py reads them). `log`: a file
    that gets everything the server writes — the app's log, gunicorn's, and its access log, turned on as
    an operator might — instead of the test's own output.
    """
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "SECRET_KEY": "test-secret",
        **settings,
    }
    cmd = [str(GUNICORN), "-w", "2", "-k", "gthread", "--threads", "8", "--preload", "--timeout", str(TIMEOUT),
           "--graceful-timeout", "5",
           "-b", f"fd://{listener.fileno()}", "--log-level", "warning", "wsgi:app"]  # fmt: skip
    if log is not None:
        cmd[-1:-1] = ["--access-logfile", "-"]
    out = open(log, "ab") if log is not None else None  # noqa: SIM115 - closed in the finally below
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, pass_fds=(listener.fileno(),), start_new_session=True,
                            stdout=out, stderr=subprocess.STDOUT if out else None)  # fmt: skip
    listener.close()
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert proc.poll() is None, f"gunicorn exited with status {proc.returncode}"
            assert time.monotonic() < deadline, "gunicorn did not come up"
            if workers(proc.pid) == 2 and get_status(port, "/healthz") == 200:
                break
            time.sleep(0.1)
        yield port
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the session started above: the master and its workers
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if out is not None:
            out.close()
