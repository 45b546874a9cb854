"""What every command shares: output for people or `--json` for scripts, agent lookup, time parsing, and
domain errors turned into a one-line message and an exit code."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

import click
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError

from models import Agent, DomainError
from models.parsing import BadInput, parse_utc

JSON_KEY = "memconsole.json"


def _want_json(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[JSON_KEY] = True


JSON_FLAG = click.Option(
    ["--json", "as_json"],
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_want_json,
    help="Print one JSON object (what you get anyway when stdout is not a terminal).",
)


def json_output() -> bool:
    """JSON when asked (`--json`) or when stdout is not a terminal (scripts, pipes, tests)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.meta.get(JSON_KEY)) or not sys.stdout.isatty()


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, list | tuple):
        return (
            ", ".join(_cell(v) for v in value)
            if value and not isinstance(value[0], dict)
            else f"{len(value)} item(s)"
        )
    if isinstance(value, dict):
        return ", ".join(f"{k} {_cell(v)}" for k, v in value.items())
    return str(value)


def table(rows: list[dict[str, Any]]) -> str:
    """Aligned columns, one row a line; numbers right-aligned."""
    if not rows:
        return "(none)"
    columns = list(rows[0])
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(row.get(c), int | float) or row.get(c) is None for row in rows) for c in columns
    ]

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric, strict=True)
        ).rstrip()

    out = [line([c.replace("_", " ") for c in columns]), line(["-" * w for w in widths])]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def human(payload: dict[str, Any]) -> str:
    """A report for people: scalar fields as aligned "key  value" lines, lists of records as tables."""
    scalars = {k: v for k, v in payload.items() if not (isinstance(v, list) and v and isinstance(v[0], dict))}
    lists = {k: v for k, v in payload.items() if k not in scalars}
    parts = []
    if scalars:
        width = max(len(k) for k in scalars)
        parts.append("\n".join(f"{k.replace('_', ' ').ljust(width)}  {_cell(v)}" for k, v in scalars.items()))
    for key, rows in lists.items():
        parts.append(f"{key.replace('_', ' ')}:\n{table(rows)}")
    return "\n\n".join(parts)


def emit(payload: dict[str, Any]) -> None:
    """Every command that reports a result prints it once: one JSON object with `--json` or off a
    terminal, a readable table on a terminal."""
    if json_output():
        click.echo(json.dumps(payload, default=str, sort_keys=True))
    else:
        click.echo(human(payload))


def fail(message: str, code: int = 1) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def resolve_agent(name_or_id: str) -> Agent:
    agent = Agent.lookup(name_or_id)
    if agent is None:
        fail(f"no agent named or numbered {name_or_id!r}")
    return agent


def parse_when(value: str) -> datetime:
    """ISO 8601; a time without an offset is taken as UTC. Returns naive UTC (models/parsing.py)."""
    try:
        moment = parse_utc(value, field="--to")
    except BadInput:
        moment = None
    if moment is None:
        fail(f"{value!r} is not an ISO 8601 date or time (e.g. 2026-11-22T04:00:00Z)")
    return moment


NOT_MIGRATED = (
    "the database has no tables yet: run `flask --app wsgi db upgrade` first (scripts/up.sh does it)"
)


def _not_migrated(err: DBAPIError) -> bool:
    """A missing table (SQLite "no such table", PostgreSQL's undefined_table, SQLSTATE 42P01)."""
    text = str(getattr(err, "orig", err)).lower()
    return (
        "no such table" in text
        or getattr(getattr(err, "orig", None), "sqlstate", None) == "42P01"
        or ("relation" in text and "does not exist" in text)
    )


def run_with_messages(invoke, ctx: click.Context):
    """A refused change, or an un-migrated database, is a clear one-line error and exit code 1,
    never a traceback."""
    try:
        return invoke(ctx)
    except DomainError as err:
        fail(err.message)
    except (OperationalError, ProgrammingError) as err:
        if _not_migrated(err):
            fail(NOT_MIGRATED)
        raise


class DomainErrorsAsMessages(click.Group):
    """A group whose commands turn refusals and an un-migrated database into one-line errors."""

    def invoke(self, ctx: click.Context):
        return run_with_messages(super().invoke, ctx)


class CommandWithMessages(click.Command):
    """The same, for a command outside a group (demo, refine)."""

    def invoke(self, ctx: click.Context):
        return run_with_messages(super().invoke, ctx)
