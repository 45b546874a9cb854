"""Memory categories and per-role allowlists (docs/spec/003-memory-system.md §5), enforced on the server.

The configuration is a YAML file (the default ships as `console/allowlists.yaml`). An agent may
read and write only the categories its role lists; an agent with no role, or with a role the file
does not list, gets the system categories whose context mode is `all`.

Memories without a category (imported core memories, the refinement journal, merges across
categories) are their owner's own: allowlists govern categories, and an uncategorised memory is in
none, so `check` never refuses it — the agent reads and manages its own core memories, its identity,
whatever its role. On the wire the absence of a category is named `uncategorized`, a reserved name no
configuration may define.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml
from flask import current_app
from sqlalchemy import or_

from models.errors import DomainError

CONTEXT_MODES = ("all", "rag")
UNCATEGORIZED = "uncategorized"  # the wire name of "no category" (memory.query, bullets, the delta header)


class CategoryNotAllowed(DomainError):
    """A request named categories outside the caller's allowlist (403, naming them)."""

    code = "category_not_allowed"
    http_status = 403


@dataclass(frozen=True)
class Category:
    name: str
    context: str
    rag_length: int | None = None
    system: bool = False


@dataclass(frozen=True)
class CategoryConfig:
    categories: dict[str, Category]
    allowlists: dict[str, tuple[str, ...]]
    default: tuple[str, ...] = field(default=())

    def allowed_for(self, role: str | None) -> tuple[str, ...]:
        """The categories an agent with this role may read and write."""
        if role and role in self.allowlists:
            return self.allowlists[role]
        return self.default

    def readable_for(self, role: str | None) -> list[str | None]:
        """What an agent with this role reaches by default: its allowlist plus its uncategorised memories
        (None)."""
        return [*self.allowed_for(role), None]

    def whole_for(self, role: str | None) -> list[str]:
        """The categories this role reads whose context mode is `all`: every active memory of them is in
        the agent's context block (models/retrieval/context.py), in the allowlist's order."""
        return [name for name in self.allowed_for(role) if self.categories[name].context == "all"]

    def check(self, role: str | None, requested: Iterable[str | None]) -> None:
        """Raise CategoryNotAllowed naming every requested category outside the role's allowlist.

        None (no category) is never refused: an uncategorised memory is its owner's own."""
        allowed = set(self.allowed_for(role))
        refused = sorted({c for c in requested if c is not None and c not in allowed})
        if refused:
            raise CategoryNotAllowed(
                "categories outside your allowlist: " + ", ".join(refused), categories=refused
            )

    def rag_caps(self, categories: Iterable[str]) -> dict[str, int]:
        """Per-category result caps (`rag_length`) for the given categories that have one."""
        caps = {}
        for name in categories:
            category = self.categories.get(name)
            if category is not None and category.rag_length:
                caps[name] = category.rag_length
        return caps


def in_categories(column: Any, categories: Iterable[str | None]) -> Any:
    """A WHERE clause: `column` is one of these categories, None standing for "no category"."""
    categories = list(categories)
    names = [c for c in categories if c is not None]
    clause = column.in_(names)
    return or_(clause, column.is_(None)) if len(names) != len(categories) else clause


def from_wire(name: str | None) -> str | None:
    """A category name from a request: `uncategorized` means no category."""
    return None if name == UNCATEGORIZED else name


def _parse(data: object, source: str) -> CategoryConfig:
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping with `categories` and `allowlists`")
    categories: dict[str, Category] = {}
    groups = data.get("categories") or {}
    if not isinstance(groups, dict):
        raise ValueError(f"{source}: `categories` must map `system` / `custom` to lists")
    for group, entries in groups.items():
        for entry in entries or []:
            if isinstance(entry, str):
                entry = {"name": entry}
            name, context = entry.get("name"), entry.get("context", "rag")
            if not isinstance(name, str) or not name or context not in CONTEXT_MODES:
                raise ValueError(f"{source}: bad category entry {entry!r}")
            if name == UNCATEGORIZED:
                raise ValueError(
                    f"{source}: {UNCATEGORIZED!r} is reserved: it names memories without a category"
                )
            rag_length = entry.get("rag_length")
            if rag_length is not None and (not isinstance(rag_length, int) or rag_length < 1):
                raise ValueError(f"{source}: rag_length of {name} must be a positive integer")
            categories[name] = Category(name, context, rag_length, system=(group == "system"))
    allowlists: dict[str, tuple[str, ...]] = {}
    for role, names in (data.get("allowlists") or {}).items():
        unknown = [n for n in names or [] if n not in categories]
        if unknown:
            raise ValueError(f"{source}: allowlist {role} names undefined categories {unknown}")
        allowlists[str(role)] = tuple(names or [])
    default = tuple(c.name for c in categories.values() if c.system and c.context == "all")
    return CategoryConfig(categories, allowlists, default)


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime: float) -> CategoryConfig:
    with open(path, encoding="utf-8") as fh:
        return _parse(yaml.safe_load(fh), path)


def load_config(path: str | None = None) -> CategoryConfig:
    """The category configuration at `path` (default: the app's `CATEGORY_CONFIG`), re-read when it changes."""
    path = path or current_app.config["CATEGORY_CONFIG"]
    return _load_cached(path, os.path.getmtime(path))
