"""`checkpoints import --agent AGENT (--sqlite PATH | --postgres URL) [--thread ID ...]`: move an existing
LangGraph deployment's checkpoints into an agent's (docs/how-to/import-checkpoints.md).

The copying, its resumability and its read-back check are the client's `import_checkpoints`
(client/memconsole_client/langgraph_import.py); here the target is the agent's checkpoint tables written
in-process (the models the API's LangGraph endpoints call), since a CLI holds no agent token. Needs
`memconsole-client[langgraph,sqlite]` (or `[langgraph,postgres]`) installed beside the console.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import click
from flask.cli import with_appcontext

from .common import DomainErrorsAsMessages, emit, fail, resolve_agent

MISSING = (
    "checkpoints import needs LangGraph beside the console: pip install 'memconsole-client[langgraph,{}]'"
)


def _agent_saver(agent_id: int):
    """A LangGraph saver on one agent's checkpoint tables (put, put_writes, get_tuple: what an import uses)."""
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        BaseCheckpointSaver,
        CheckpointTuple,
        get_checkpoint_id,
        get_serializable_checkpoint_metadata,
    )

    from models.integrations import langgraph_checkpoint_reads as lg_reads
    from models.integrations import langgraph_checkpoint_writes as lg_writes
    from models.integrations import langgraph_checkpoints as lg

    class AgentCheckpointSaver(BaseCheckpointSaver):
        def _blob(self, value: Any) -> lg.Blob:
            return lg.Blob(*self.serde.dumps_typed(value))

        def _load(self, blob: lg.Blob) -> Any:
            return self.serde.loads_typed((blob.type, blob.data or b""))

        def put(self, config, checkpoint, metadata, new_versions):
            c = config["configurable"]
            document = dict(checkpoint)
            values = document.pop("channel_values", {})
            blobs = {
                (ch, lg.version_key(v)): self._blob(values[ch]) if ch in values else lg.Blob("empty", None)
                for ch, v in new_versions.items()
            }
            thread_id, ns = str(c["thread_id"]), c.get("checkpoint_ns", "")
            lg_writes.put_checkpoint(
                agent_id,
                thread_id=thread_id,
                checkpoint_ns=ns,
                checkpoint=document,
                parent_checkpoint_id=c.get("checkpoint_id"),
                metadata=dict(get_serializable_checkpoint_metadata(config, metadata)),
                blobs=blobs,
            )
            return {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": checkpoint["id"],
                }
            }

        def put_writes(self, config, writes, task_id, task_path=""):
            c = config["configurable"]
            lg_writes.put_writes(
                agent_id,
                thread_id=str(c["thread_id"]),
                checkpoint_ns=c.get("checkpoint_ns", ""),
                checkpoint_id=c["checkpoint_id"],
                task_id=task_id,
                task_path=task_path,
                writes=[
                    lg_writes.Write(WRITES_IDX_MAP.get(ch, i), ch, self._blob(v))
                    for i, (ch, v) in enumerate(writes)
                ],
            )

        def get_tuple(self, config):
            c = config["configurable"]
            thread_id, ns = str(c["thread_id"]), c.get("checkpoint_ns", "")
            record = lg_reads.get_checkpoint(agent_id, thread_id, ns, get_checkpoint_id(config))
            if record is None:
                return None

            def at(checkpoint_id: str | None):
                return {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": ns,
                        "checkpoint_id": checkpoint_id,
                    }
                }

            values = {ch: self._load(b) for ch, b in record.channel_values.items()}
            return CheckpointTuple(
                config=at(record.checkpoint_id),
                checkpoint={**record.checkpoint, "channel_values": values},
                metadata=record.metadata,
                parent_config=at(record.parent_checkpoint_id) if record.parent_checkpoint_id else None,
                pending_writes=[(task, ch, self._load(b)) for task, ch, b in record.pending_writes],
            )

    return AgentCheckpointSaver()


def _sqlite_source(path: str):
    """LangGraph's SQLite saver on the file, after checking it holds LangGraph's tables (the saver would
    otherwise create them in whatever file it was given)."""
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError:
        fail(MISSING.format("sqlite"))
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError:
        tables = set()  # not an SQLite file at all
    if not {"checkpoints", "writes"} <= tables:
        conn.close()
        fail(f"{Path(path).name} holds no LangGraph checkpoints (no `checkpoints` and `writes` tables)")
    return SqliteSaver(conn), conn.close


def _postgres_source(url: str):
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError:
        fail(MISSING.format("postgres"))
    # The console's own DATABASE_URL spelling (SQLAlchemy's driver suffix) is accepted too.
    url = url.replace("postgresql+psycopg://", "postgresql://", 1)
    conn = None
    try:
        conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        conn.execute("SELECT 1 FROM checkpoints LIMIT 1")
    except psycopg.Error as err:  # the URL may hold a password: name the error, not the URL
        if conn is not None:
            conn.close()
        fail(f"cannot read LangGraph checkpoints from --postgres: {type(err).__name__}")
    return PostgresSaver(conn), conn.close


@click.group("checkpoints", cls=DomainErrorsAsMessages)
def checkpoints_cli() -> None:
    """LangGraph checkpoints kept for agents."""


@checkpoints_cli.command("import")
@click.option(
    "--agent", "agent_ref", required=True, help="The agent (name or id) whose checkpoints they become."
)
@click.option(
    "--sqlite", "sqlite_path", type=click.Path(exists=True, dir_okay=False), help="A SqliteSaver file."
)
@click.option("--postgres", "postgres_url", help="A PostgresSaver's database URL.")
@click.option(
    "--thread", "threads", multiple=True, help="Only this thread (repeatable); default: every thread."
)
@with_appcontext
def import_command(
    agent_ref: str, sqlite_path: str | None, postgres_url: str | None, threads: tuple[str, ...]
) -> None:
    """Copy every checkpoint and pending write of a LangGraph SQLite or PostgreSQL saver into AGENT's.

    Checkpoints the agent already holds are skipped, so running it again finishes an interrupted import;
    each checkpoint is read back and compared. Exit code 1 when any differs (they are listed)."""
    if bool(sqlite_path) == bool(postgres_url):
        fail("give exactly one source: --sqlite PATH or --postgres URL")
    try:
        from memconsole_client.langgraph_import import import_checkpoints
    except ImportError:
        fail(MISSING.format("sqlite" if sqlite_path else "postgres"))
    agent = resolve_agent(agent_ref)
    source, close = _sqlite_source(sqlite_path) if sqlite_path else _postgres_source(postgres_url or "")
    try:
        report = import_checkpoints(source, _agent_saver(agent.id), thread_ids=list(threads) or None)
    finally:
        close()
    emit({"agent": agent.name, **report.as_dict()})
    if not report.ok:
        raise SystemExit(1)
