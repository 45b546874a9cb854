"""`refine AGENT [--now]`."""

from __future__ import annotations

import click
from flask.cli import with_appcontext

from .common import CommandWithMessages, emit, fail, resolve_agent


@click.command("refine", cls=CommandWithMessages)
@click.argument("agent")
@click.option("--now", is_flag=True, help="Run the whole session in this process and print its result.")
@with_appcontext
def refine_command(agent: str, now: bool) -> None:
    """Run a refinement session for AGENT (forced: no skip for being within budget)."""
    from jobs.llm import ModelNotConfigured
    from jobs.refinement import run_refinement
    from jobs.triggers import enqueue_refinement

    row = resolve_agent(agent)
    if not now:
        session = enqueue_refinement(row.id, "cli", "admin:cli")
        emit({"session_id": session.id, "status": session.status, "job_id": session.job_id})
        return
    try:
        outcome = run_refinement(row.id, "cli", force=True)
    except ModelNotConfigured as err:  # a setting is missing: the message names it (and holds no memory text)
        fail(f"refinement failed: {err}")
    except Exception as err:  # recorded on the session as `failed`; say so plainly
        fail(f"refinement failed: {type(err).__name__}")
    emit(outcome)
    if outcome.get("status") == "busy":
        raise SystemExit(2)
