"""Command-line interface: `flask --app wsgi <command>` or the `memconsole` alias."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

import click
from flask import Flask
from flask.cli import FlaskGroup

from models import Agent, DomainError


def emit(payload: dict[str, Any]) -> None:
    """Every command that reports a result prints exactly one JSON object on stdout."""
    click.echo(json.dumps(payload, default=str, sort_keys=True))


def fail(message: str, code: int = 1) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def resolve_agent(name_or_id: str) -> Agent:
    agent = Agent.lookup(name_or_id)
    if agent is None:
        fail(f"no agent named or numbered {name_or_id!r}")
    return agent


def parse_when(value: str) -> datetime:
    """ISO 8601; a time without an offset is taken as UTC. Returns naive UTC."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        fail(f"{value!r} is not an ISO 8601 date or time (e.g. 2026-11-22T04:00:00Z)")
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


class DomainErrorsAsMessages(click.Group):
    """A refused change is a clear one-line error and exit code 1, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DomainError as err:
            fail(err.message)


def register_commands(app: Flask) -> None:
    from .agents import agent_cli, memory_cli
    from .maintenance import admin_cli, demo_command, rollback_cli
    from .refine import refine_command
    from .rq import rq_cli

    for command in (agent_cli, memory_cli, rollback_cli, admin_cli, demo_command, refine_command, rq_cli):
        app.cli.add_command(command)


def main() -> None:
    """The `memconsole` console script: the same commands as `flask --app wsgi`."""
    from console import create_app

    FlaskGroup(create_app=create_app)()
