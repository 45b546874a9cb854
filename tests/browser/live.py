"""A real HTTP server for the app in a background thread, and Debian's Chromium through Playwright.

Importable by the browser tests and by `take_screenshots.py`. Chromium is launched with the flags
that keep it off the network; no browser is ever downloaded.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from flask import Flask
from werkzeug.serving import make_server

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")  # Debian's; never a downloaded browser
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--metrics-recording-only",
]


class LiveServer:
    """werkzeug's threaded server on 127.0.0.1 and a free port, serving the given app. Leaving it waits for
    the requests still being served: werkzeug makes their threads daemons, which `server_close` does not
    wait for, so a request the browser gave up on as its context closed (a page's periodic refresh) could
    go on holding a database connection past the test's app, whose engine's disposal closes only the
    connections checked in. Such a connection is collected unclosed during a later test: psycopg's
    ResourceWarning, an error under the suite's warning filters, as one PostgreSQL run saw at the start of
    the browser tests that follow the jobs page's."""

    def __init__(self, app: Flask) -> None:
        self.server = make_server("127.0.0.1", 0, _closed_before_sent(app), threaded=True)
        self.server.daemon_threads = False  # socketserver's server_close() then joins every request's thread
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="live-server", daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def _closed_before_sent(app: Flask):
    """The app, each response read whole and closed before werkzeug writes it. When the browser drops a
    connection (a favicon fetch cut short as the page moves on), werkzeug's server can fail while it
    drains the request and then skip the response's `close()`; the file `send_file` opened for a static
    asset is collected unclosed, a ResourceWarning, which the suite's warning filters turn into a failure
    of whichever test runs then. The console's responses are small, so reading them whole costs nothing
    here."""

    def closed_first(environ: dict, start_response) -> Iterable[bytes]:
        response = app(environ, start_response)
        try:
            return [b"".join(response)]
        finally:
            close = getattr(response, "close", None)
            if close is not None:
                close()

    return closed_first


@contextmanager
def chromium() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def sign_in(page, base_url: str, email: str, password: str) -> None:
    page.goto(base_url + "/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"^(?!.*/login).*$"))
