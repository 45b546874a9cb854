"""One refinement-type job per agent at a time, across worker processes.

A Redis lock that a heartbeat thread keeps alive (it lapses within `REFINEMENT_LOCK_TTL` seconds of a
crash), backed by a partial unique index in the database (one `running` session per agent). Daily
consolidation takes the same lock, so it never runs beside a session of the same agent.
"""

from __future__ import annotations

import logging
import threading

from redis import Redis
from redis.lock import Lock

log = logging.getLogger(__name__)


def lock_key(agent_id: int) -> str:
    return f"memconsole:refine:agent:{agent_id}"


class AgentBusy(Exception):
    """Another refinement session holds this agent."""


class SingleFlight:
    """A Redis lock per agent, extended by a heartbeat thread while the session runs."""

    def __init__(self, connection: Redis, agent_id: int, ttl: float) -> None:
        self.lock = Lock(connection, lock_key(agent_id), timeout=ttl, thread_local=False)
        self.ttl = ttl
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> SingleFlight:
        if not self.lock.acquire(blocking=False):
            raise AgentBusy("another refinement session is running for this agent")
        self._thread = threading.Thread(target=self._beat, name="refine-heartbeat", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.lock.reacquire()
            except Exception:  # lost the lock (Redis restarted): the DB index still guards us
                log.warning("refinement lock could not be extended")
                return

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.lock.release()
        except Exception:
            log.warning("refinement lock had already lapsed")
