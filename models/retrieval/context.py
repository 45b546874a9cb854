"""The agent's context block: what it holds in its system prompt (docs/spec/000-requirements.md, "The
Knife"; docs/spec/001's `for_prompt`) — every active core memory, then the active journals of the journal
window, each oldest origin date first (id breaking ties), served by GET /api/v1/context.

Built for a prompt cache and a conditional GET:

- `entries` reads the block's rows in one statement. Asked for `digest_only`, it leaves the text in the
  database and reads its MD5 instead (PostgreSQL computes it; SQLite, in process, reads the text and
  hashes it here), which is all an ETag needs: the 304 path never moves the memories' text.
- `page` cuts the ordered entries by a token cap, resuming after a cursor: each memory falls on exactly
  one page, and the cursor is a position (section, origin, id), not a row, so a memory deleted between
  two pages moves nothing else.
- `etag` hashes exactly what the response shows, so it changes if and only if the block does.
- `render_text` writes the documented text layout (docs/api.md, "Context block"): stable sections, oldest
  first, the often-changing usage line last, so what did not change is a byte-identical prefix; the pages'
  texts, concatenated, are the unpaged text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select

from models.db import db
from models.errors import ValidationFailed
from models.memories.categories import in_categories
from models.memories.memory import AgentMemory

SECTIONS = ("core", "journal")
FORMAT_VERSION = "1"  # part of every ETag: a change of the layout must not answer 304 to an old copy
_T = AgentMemory.__table__


class BadCursor(ValidationFailed):
    """A cursor this endpoint did not hand out (422, naming `cursor`)."""


@dataclass(frozen=True)
class Entry:
    """One memory of the block. `content` is None when only the digest was read."""

    id: int
    memory_type: str
    created_at: datetime
    tokens: int
    tags: tuple[str, ...]
    category: str | None
    constitutional: bool
    digest: str
    content: str | None

    @property
    def key(self) -> tuple[int, datetime, int]:
        """The block's order: core before journal, then origin date, then id."""
        return SECTIONS.index(self.memory_type), self.created_at, self.id


@dataclass(frozen=True)
class Page:
    entries: list[Entry]
    total: int  # memories in the whole block
    next_cursor: str | None  # None on the last page

    @property
    def tokens(self) -> int:
        return sum(e.tokens for e in self.entries)


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def entries(
    agent_id: int,
    categories: Sequence[str | None],
    *,
    now: datetime,
    journal_window: timedelta,
    digest_only: bool = False,
) -> list[Entry]:
    """The block's memories in its order: active core memories, then active journals created within
    `journal_window` before `now`, in `categories` (None: those without one). Soft-deleted rows never."""
    if not categories:
        return []
    postgresql = db.session.get_bind().dialect.name == "postgresql"
    text = func.md5(_T.c.content) if digest_only and postgresql else _T.c.content
    core = _T.c.memory_type == "core"
    journal = (_T.c.memory_type == "journal") & (_T.c.created_at >= now - journal_window)
    rows = db.session.execute(
        select(
            _T.c.id,
            _T.c.memory_type,
            _T.c.created_at,
            _T.c.token_estimate,
            _T.c.tags,
            _T.c.category,
            _T.c.constitutional,
            text,
        )
        .where(
            _T.c.agent_id == agent_id,
            _T.c.deleted_at.is_(None),
            core | journal,
            in_categories(_T.c.category, categories),
        )
        .order_by(case((core, 0), else_=1), _T.c.created_at, _T.c.id)
    ).all()
    digested = digest_only and postgresql
    return [
        Entry(
            id=row[0],
            memory_type=row[1],
            created_at=row[2],
            tokens=row[3],
            tags=tuple(t for t in (row[4] or []) if isinstance(t, str)),
            category=row[5],
            constitutional=bool(row[6]),
            digest=row[7] if digested else _md5(row[7]),
            content=None if digest_only else row[7],
        )
        for row in rows
    ]


def encode_cursor(entry: Entry) -> str:
    raw = f"{entry.memory_type}|{entry.created_at.isoformat(timespec='microseconds')}|{entry.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, datetime, int]:
    """The position a cursor stands for; anything not handed out by `encode_cursor` is a BadCursor."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        section, created, memory_id = raw.split("|")
        return SECTIONS.index(section), datetime.fromisoformat(created), int(memory_id)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise BadCursor(
            "cursor: not a cursor this endpoint returned", field="cursor", rule="cursor"
        ) from None


def page(block: list[Entry], *, cursor: str | None, max_tokens: int | None) -> Page:
    """The memories after `cursor` whose tokens sum to at most `max_tokens` (at least one: a memory larger
    than the cap has a page of its own); no cap, every memory after the cursor."""
    rest = block
    if cursor is not None:
        after = decode_cursor(cursor)
        rest = [e for e in block if e.key > after]
    taken: list[Entry] = []
    used = 0
    for entry in rest:
        if max_tokens is not None and taken and used + entry.tokens > max_tokens:
            break
        taken.append(entry)
        used += entry.tokens
    more = len(taken) < len(rest)
    return Page(taken, len(block), encode_cursor(taken[-1]) if more else None)


def etag(page_: Page, shown: dict[str, Any], *, text: bool) -> str:
    """A strong ETag of exactly what the response shows: the page's memories (their text by digest; the
    text form shows an origin's date, JSON its time) and `shown` (usage, delta, revision, paging: whatever
    else the response shows), so it changes if and only if the block does."""
    items = [
        [
            e.id,
            e.memory_type,
            e.created_at.date().isoformat() if text else e.created_at.isoformat(),
            e.tokens,
            list(e.tags),
            e.category,
            e.constitutional,
            e.digest,
        ]
        for e in page_.entries
    ]
    body = [FORMAT_VERSION, "text" if text else "json", items, shown]
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    return f'"{digest[:40]}"'


HEADINGS = {"core": "## Core memories", "journal": "## Journal, last {days} days"}


def label(entry: Entry) -> str:
    """`[#id · date · category · N tokens · constitutional · tags: a, b]`, the parts without a value left out."""
    parts = [f"#{entry.id}", entry.created_at.date().isoformat()]
    if entry.category:
        parts.append(entry.category)
    parts.append(f"{entry.tokens} tokens")
    if entry.constitutional:
        parts.append("constitutional")
    if entry.tags:
        parts.append("tags: " + ", ".join(entry.tags))
    return "[" + " · ".join(parts) + "]"


def _item(entry: Entry) -> str:
    # Continuation lines are indented, so a memory's own line breaks never start a line of the layout.
    lines = (entry.content or "").split("\n")
    return f"{label(entry)} {lines[0]}\n" + "".join(f"  {line}\n" for line in lines[1:])


def section_starts(block: Iterable[Entry]) -> set[int]:
    """The ids of the first memory of each section: a heading precedes them, on whichever page they fall."""
    seen: dict[str, int] = {}
    for entry in block:
        seen.setdefault(entry.memory_type, entry.id)
    return set(seen.values())


def render(page_: Page, *, starts: set[int], journal_days: int, delta_header: str, usage_line: str) -> str:
    """The text layout of docs/api.md, "Context block": each section's heading before its first memory,
    the memories oldest first, and on the last page the delta header and the usage line."""
    out: list[str] = []
    for entry in page_.entries:
        if entry.id in starts:
            out.append(HEADINGS[entry.memory_type].format(days=journal_days) + "\n")
        out.append(_item(entry))
    if page_.next_cursor is None:
        if delta_header:
            heading, *bullets = delta_header.split("\n")
            out.append("## " + heading.rstrip(":") + "\n" + "".join(b + "\n" for b in bullets))
        out.append("## Budget\n" + usage_line + "\n")
    return "".join(out)


def usage_line(
    core_tokens: int,
    core_count: int,
    budget: int,
    last_refinement_at: datetime | None,
    rev: int | None = None,
) -> str:
    """`1,234 of 5,000 core tokens (12 core memories), within budget; last refinement 2026-11-20 10:00 UTC`,
    then `; thread rev 7` when a thread was named."""
    state = "over budget" if core_tokens > budget else "within budget"
    refined = (
        f"last refinement {last_refinement_at.strftime('%Y-%m-%d %H:%M')} UTC"
        if last_refinement_at
        else "never refined"
    )
    line = f"{core_tokens:,} of {budget:,} core tokens ({core_count:,} core memories), {state}; {refined}"
    return line + (f"; thread rev {rev}" if rev is not None else "")
