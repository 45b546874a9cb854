"""Command-line interface: `flask --app wsgi <command>` or the `memconsole` alias."""

from __future__ import annotations

import click
from flask import Flask

from .common import JSON_FLAG


def register_commands(app: Flask) -> None:
    from .agents import agent_cli, memory_cli
    from .checkpoints import checkpoints_cli
    from .embeddings import embeddings_cli
    from .history import audit_cli, sessions_cli
    from .maintenance import admin_cli, demo_command, rollback_cli
    from .refine import refine_command
    from .rq import rq_cli

    for command in (
        agent_cli,
        memory_cli,
        rollback_cli,
        admin_cli,
        demo_command,
        refine_command,
        rq_cli,
        sessions_cli,
        audit_cli,
        embeddings_cli,
        checkpoints_cli,
    ):
        _with_json_option(command)
        app.cli.add_command(command)


LONG_RUNNING = {"worker", "scheduler"}  # they serve until stopped and report nothing


def _with_json_option(command: click.Command) -> None:
    """Give every command of ours `--json`, so the choice is the same everywhere (see `emit`)."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_json_option(sub)
    elif command.name not in LONG_RUNNING and not any(p.name == "as_json" for p in command.params):
        command.params.append(JSON_FLAG)
