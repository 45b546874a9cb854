"""Read-side bookkeeping, batched: `last_accessed_at` touches and other fire-and-forget rows.

A memory read by memory.query gets its `last_accessed_at` set (the TTL policy of docs/spec/003-memory-system.md §7
reads it), but a read is not a change: no audit record, and no write on the request's hot path.
Touches collect in a buffer (one per app and process, in `app.extensions`) and are written in one
UPDATE per batch when the buffer is old or large enough, on a connection of their own. This module is the one writer of
`agent_memories` outside the mutation path (`models.changes`), and it writes nothing but `last_accessed_at`.

Losing a buffer (a killed process) loses a few seconds of access times, never a memory change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from flask import current_app
from sqlalchemy import or_, update

from models.db import db, utcnow
from models.memories.memory import AgentMemory

log = logging.getLogger(__name__)

FLUSH_SECONDS = 2.0
FLUSH_SIZE = 2000
CHUNK = 500


class Batch:
    """A thread-safe buffer with a writer; `flush_if_due` writes it when old or big enough."""

    def __init__(self, name: str, writer: Callable[[list[Any]], None]) -> None:
        self.name = name
        self._writer = writer
        self._lock = threading.Lock()
        self._items: list[Any] = []
        self._since = time.monotonic()

    def add(self, items: Iterable[Any]) -> None:
        with self._lock:
            if not self._items:
                self._since = time.monotonic()
            self._items.extend(items)

    def __len__(self) -> int:
        return len(self._items)

    def due(self, max_age: float = FLUSH_SECONDS, max_size: int = FLUSH_SIZE) -> bool:
        return bool(self._items) and (
            len(self._items) >= max_size or time.monotonic() - self._since >= max_age
        )

    def flush(self) -> int:
        """Write everything buffered now. Errors are logged (type only) and the batch is dropped."""
        with self._lock:
            items, self._items = self._items, []
        if not items:
            return 0
        try:
            self._writer(items)
        except Exception as err:  # bookkeeping must never fail the request that happens to flush it
            log.warning("dropped %d buffered %s rows: %s", len(items), self.name, type(err).__name__)
            return 0
        return len(items)

    def flush_if_due(self, max_age: float = FLUSH_SECONDS, max_size: int = FLUSH_SIZE) -> int:
        return self.flush() if self.due(max_age, max_size) else 0


def _write_touches(items: list[tuple[int, datetime]]) -> None:
    latest: dict[int, datetime] = {}
    for memory_id, when in items:
        if memory_id not in latest or when > latest[memory_id]:
            latest[memory_id] = when
    # One timestamp per batch keeps it to one UPDATE per chunk; the batch spans a few seconds.
    stamp = max(latest.values())
    ids = sorted(latest)  # a fixed lock order, so concurrent flushes cannot deadlock each other
    table = AgentMemory.__table__
    with db.engine.begin() as conn:
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            conn.execute(
                update(table)
                .where(
                    table.c.id.in_(chunk),
                    or_(table.c.last_accessed_at.is_(None), table.c.last_accessed_at < stamp),
                )
                .values(last_accessed_at=stamp)
            )


_create_lock = threading.Lock()
EXTENSION_KEY = "memory_batches"


def batch(name: str, writer: Callable[[list[Any]], None]) -> Batch:
    """The current app's buffer of this name, created on first use."""
    batches = current_app.extensions.setdefault(EXTENSION_KEY, {})
    found = batches.get(name)
    if found is None:
        with _create_lock:
            found = batches.setdefault(name, Batch(name, writer))
    return found


def _batches() -> list[Batch]:
    return [b for b in list(current_app.extensions.get(EXTENSION_KEY, {}).values()) if isinstance(b, Batch)]


def flush_due(max_age: float = FLUSH_SECONDS) -> int:
    """Write every buffer of the current app that is due."""
    return sum(b.flush_if_due(max_age) for b in _batches())


def flush_all() -> int:
    """Write every buffer of the current app now (the flusher thread, tests, shutdown)."""
    return sum(b.flush() for b in _batches())


def start_flusher(app: Any, interval: float = FLUSH_SECONDS) -> threading.Thread:
    """A daemon thread writing this app's buffers every `interval` seconds, off every request's path.

    One per app and process (gunicorn workers each start their own after the fork)."""
    batches = app.extensions.setdefault(EXTENSION_KEY, {})
    thread = batches.get("_flusher")
    if thread is not None and thread.is_alive():
        return thread
    with _create_lock:
        thread = batches.get("_flusher")
        if thread is not None and thread.is_alive():
            return thread

        def run() -> None:
            while True:
                time.sleep(interval)
                with app.app_context():
                    flush_all()

        thread = threading.Thread(target=run, name="memory-bookkeeping-flusher", daemon=True)
        batches["_flusher"] = thread
        thread.start()
    return thread


def touch(memory_ids: Iterable[int], when: datetime | None = None) -> None:
    """Note that these memories were read (written later, in a batch)."""
    when = when or utcnow()
    batch("last_accessed_at", _write_touches).add((memory_id, when) for memory_id in memory_ids)


def flush_access() -> int:
    """Write all buffered touches now."""
    return batch("last_accessed_at", _write_touches).flush()
