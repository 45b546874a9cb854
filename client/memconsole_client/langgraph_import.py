"""Moving an existing LangGraph deployment in: copy every thread, checkpoint and pending write from any
`BaseCheckpointSaver` (LangGraph's in-memory, SQLite or PostgreSQL saver, or another of ours) into a
target saver, normally `ConsoleCheckpointSaver` (docs/how-to/import-checkpoints.md).

Resumable and idempotent: a checkpoint whose id the target already holds is not copied again (only the
pending writes the source has gained since are added), so an interrupted import is finished by running
it again. Every checkpoint is read back from the target and compared with the source: the document,
metadata, parent, each channel value and each pending write (values compared as the target's serializer
writes them, so objects without `__eq__` compare too).

A `CheckpointTuple` carries neither a write's `task_path` nor its original index: writes are stored per
task in the order the source returns them, the special channels (interrupts, errors, resumes) at
LangGraph's fixed indexes, which is what a resumed graph reads.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP, BaseCheckpointSaver, CheckpointTuple


@dataclass
class ImportReport:
    """What an import did. `mismatched` names checkpoints whose read-back differs from the source (the
    target is left as it was for them: an existing id is never overwritten)."""

    threads: int = 0
    checkpoints_copied: int = 0
    checkpoints_present: int = 0
    writes_copied: int = 0
    verified: int = 0
    mismatched: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatched

    def as_dict(self) -> dict[str, Any]:
        return {
            "threads": self.threads,
            "checkpoints_copied": self.checkpoints_copied,
            "checkpoints_present": self.checkpoints_present,
            "writes_copied": self.writes_copied,
            "verified": self.verified,
            "mismatched": list(self.mismatched),
        }


def _config(thread_id: str, ns: str, checkpoint_id: str | None) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}


def _key(t: CheckpointTuple) -> tuple[str, str, str]:
    c = t.config["configurable"]
    return str(c["thread_id"]), c.get("checkpoint_ns", ""), c["checkpoint_id"]


Call = tuple[str, tuple[Any, ...]]  # a target saver's method (put, put_writes) and its arguments


def _json(value: Any) -> str:
    """A JSON document as the target stores it (ints, strings, lists; tuples become lists)."""
    return json.dumps(value, sort_keys=True, default=str)


class _Copier:
    def __init__(self, source: BaseCheckpointSaver, target: BaseCheckpointSaver) -> None:
        self.source, self.target = source, target
        self.report = ImportReport()
        self._threads: set[str] = set()

    def _bytes(self, value: Any) -> tuple[str, bytes]:
        return self.target.serde.dumps_typed(value)

    def _writes(self, t: CheckpointTuple) -> Counter[tuple[str, str, tuple[str, bytes]]]:
        return Counter((task, channel, self._bytes(v)) for task, channel, v in t.pending_writes or ())

    @staticmethod
    def _writes_calls(key: tuple[str, str, str], writes: Sequence[tuple[str, str, Any]]) -> list[Call]:
        """A task's writes in one call, its special channels in another: LangGraph writes them apart, and
        the normal writes keep indexes 0..n-1 in the source's order."""
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task, channel, value in writes:
            by_task.setdefault(task, []).append((channel, value))
        config = _config(*key)
        calls: list[Call] = []
        for task, items in by_task.items():
            normal = [(c, v) for c, v in items if c not in WRITES_IDX_MAP]
            special = [(c, v) for c, v in items if c in WRITES_IDX_MAP]
            calls += [("put_writes", (config, group, task, "")) for group in (normal, special) if group]
        return calls

    def _mismatch(self, t: CheckpointTuple, back: CheckpointTuple | None) -> str | None:
        if back is None:
            return "not found after writing"
        src, dst = dict(t.checkpoint), dict(back.checkpoint)
        src_values, dst_values = src.pop("channel_values", {}), dst.pop("channel_values", {})
        if _json(src) != _json(dst):
            return "checkpoint document differs"
        if set(src_values) != set(dst_values) or any(
            self._bytes(src_values[ch]) != self._bytes(dst_values[ch]) for ch in src_values
        ):
            return "channel values differ"
        if _json(t.metadata) != _json(back.metadata):
            return "metadata differs"
        parent = (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        if parent != (back.parent_config or {}).get("configurable", {}).get("checkpoint_id"):
            return "parent differs"
        if self._writes(t) - self._writes(back):
            return "pending writes missing"
        return None

    def start(self, t: CheckpointTuple) -> RunnableConfig:
        """Count the thread; the config that reads this checkpoint back from the target."""
        key = _key(t)
        if key[0] not in self._threads:
            self._threads.add(key[0])
            self.report.threads += 1
        return _config(*key)

    def plan(self, t: CheckpointTuple, present: CheckpointTuple | None) -> list[Call]:
        """The target's calls that copy `t`, given what the target already holds under its id."""
        key = _key(t)
        writes = list(t.pending_writes or ())
        if present is None:
            parent = (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            versions = dict(t.checkpoint.get("channel_versions", {}))
            self.report.checkpoints_copied += 1
            self.report.writes_copied += len(writes)
            put: Call = ("put", (_config(key[0], key[1], parent), t.checkpoint, t.metadata, versions))
            return [put, *self._writes_calls(key, writes)]
        # Present from an earlier run: add only the writes the source has gained since.
        self.report.checkpoints_present += 1
        missing = self._writes(t) - self._writes(present)
        self.report.writes_copied += sum(missing.values())
        tasks = {task for task, _, _ in missing}
        return self._writes_calls(key, [w for w in writes if w[0] in tasks])

    def check(self, t: CheckpointTuple, back: CheckpointTuple | None) -> None:
        problem = self._mismatch(t, back)
        if problem:
            thread_id, ns, checkpoint_id = _key(t)
            self.report.mismatched.append(
                {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint_id,
                    "problem": problem,
                }
            )
        else:
            self.report.verified += 1


def _source_tuples(
    source: BaseCheckpointSaver, thread_ids: Iterable[str] | None
) -> Iterator[CheckpointTuple]:
    if thread_ids is None:
        yield from source.list(None)
        return
    for thread_id in thread_ids:
        yield from source.list({"configurable": {"thread_id": str(thread_id)}})


def import_checkpoints(
    source: BaseCheckpointSaver,
    target: BaseCheckpointSaver,
    *,
    thread_ids: Iterable[str] | None = None,
) -> ImportReport:
    """Copy every checkpoint (of every namespace) and pending write of `source` into `target`, or only
    those of `thread_ids`; checkpoints already in the target are kept, and each is read back and compared.

    ```python
    from langgraph.checkpoint.sqlite import SqliteSaver
    from memconsole_client.langgraph import ConsoleCheckpointSaver
    from memconsole_client.langgraph_import import import_checkpoints

    with SqliteSaver.from_conn_string("checkpoints.sqlite") as source:
        report = import_checkpoints(source, ConsoleCheckpointSaver(base_url=url, token=token))
    assert report.ok, report.mismatched
    ```
    """
    copier = _Copier(source, target)
    for t in _source_tuples(source, thread_ids):
        config = copier.start(t)
        for method, args in copier.plan(t, target.get_tuple(config)):
            getattr(target, method)(*args)
        copier.check(t, target.get_tuple(config))
    return copier.report


async def aimport_checkpoints(
    source: BaseCheckpointSaver,
    target: BaseCheckpointSaver,
    *,
    thread_ids: Iterable[str] | None = None,
) -> ImportReport:
    """`import_checkpoints` through the savers' async methods: for async-only sources
    (`AsyncSqliteSaver`, `AsyncPostgresSaver`)."""
    copier = _Copier(source, target)
    configs: list[RunnableConfig | None] = (
        [None] if thread_ids is None else [{"configurable": {"thread_id": str(t)}} for t in thread_ids]
    )
    for wanted in configs:
        async for t in source.alist(wanted):
            config = copier.start(t)
            for method, args in copier.plan(t, await target.aget_tuple(config)):
                await getattr(target, "a" + method)(*args)
            copier.check(t, await target.aget_tuple(config))
    return copier.report


__all__ = ["ImportReport", "aimport_checkpoints", "import_checkpoints"]
