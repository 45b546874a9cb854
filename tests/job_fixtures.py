"""Job functions used only by tests. RQ imports jobs by dotted name, so they live at module level here."""

from __future__ import annotations


class JobExploded(RuntimeError):
    """The error `explode` raises, distinct enough to recognise in a recorded traceback."""


def explode(message: str) -> None:
    """A job that fails: RQ must record the exception, not swallow it."""
    raise JobExploded(message)


def echo(value):
    """A job that succeeds and returns its argument."""
    return value


def process_ids() -> dict[str, int]:
    """Where the job ran: its own pid and its parent's (the worker's, when run in a forked work horse)."""
    import os

    return {"pid": os.getpid(), "ppid": os.getppid()}


def kill_own_process() -> None:
    """A job whose process dies without a word, as a work horse killed by the OOM killer does."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
