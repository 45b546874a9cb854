"""The `api` blueprint object, apart from its routes so route modules import it without a cycle."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import Blueprint

from models.db import retrying

from .spec import Api


class RetryingBlueprint(Blueprint):
    """A blueprint whose every view is one unit of work run through `models.db.retrying`: when the
    database aborts it for a deadlock or a serialization failure (another writer of the same agent won),
    the view runs again, whole, instead of the agent being told the database is unavailable. A view that
    has committed a write before the abort is not run again (the error stands; console/errors.py)."""

    def add_url_rule(
        self, rule: str, endpoint: str | None = None, view_func: Callable | None = None, **options: Any
    ) -> None:
        if view_func is not None:
            view_func = _retried(view_func)
        super().add_url_rule(rule, endpoint, view_func, **options)


def _retried(view: Callable) -> Callable:
    @functools.wraps(view)
    def run(*args: Any, **kwargs: Any) -> Any:
        return retrying(lambda: view(*args, **kwargs))

    return run


bp = RetryingBlueprint("api", __name__, url_prefix="/api/v1")
api = Api(bp, title="Memory console agent API", version="1.0.0")
