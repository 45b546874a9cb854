"""What a change of a memory row leaves behind, in the change's own transaction: its audit record
(`history/audit.py`: full before and after snapshots), then, for a record that names a memory, the
operational event (`history/events.py`, docs/spec/003-memory-system.md §14) and, when the memory belongs
to a thread, the thread's next revision and its change-log entry (`history/changelog.py`, §1).

Every writer of `agent_memories` — the mutations, the TTL lifecycle, dedup, the Time Machine — and the
relation job's link records call these; records that name no memory (a session's start, a setting) are
plain `audit.write_audit`.
"""

from __future__ import annotations

from typing import Any

from models.history.audit import insert_audits
from models.history.changelog import record_memory_changes


def record_changes(rows: list[dict[str, Any]]) -> list[int]:
    """The audit records of one operation (each row has `audit.write_audit`'s keyword arguments), with the
    events and change-log entries they imply; the records' ids, in order."""
    records = insert_audits(rows)
    record_memory_changes([r for r in records if r["memory_id"] is not None])
    return [r["id"] for r in records]


def record_change(**row: Any) -> int:
    """One record of a memory change (see `record_changes`); its id."""
    (record_id,) = record_changes([row])
    return record_id
