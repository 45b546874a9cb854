"""The agent's context block: what it holds in its system prompt (docs/spec/000-requirements.md, "The
Knife"; docs/spec/001's `for_prompt`) — every active core memory; then every other active memory of the
categories configured `context: all` that the agent reads, whatever its type (docs/spec/003-memory-system.md
§5: small, stable categories injected whole; `whole` below); then the active journals of the journal window;
each section oldest origin date first (id breaking ties), served by GET /api/v1/context.

Built for a prompt cache and a conditional GET:

- Each memory has a signature, a 64-bit hash of everything the block shows of it (`_signature`), and a
  block's digest is their sum. PostgreSQL computes both where the rows are: `digest` is one aggregate
  row, so the 304 path moves no memory; `entries` and `json_block` read the rows with the same sum in
  the same statement. SQLite, in process, reads the text and signs it here.
- `page` cuts the ordered entries by a token cap, resuming after a cursor: each memory falls on exactly
  one page, and the cursor is a position (section, origin, id), not a row, so a memory deleted between
  two pages moves nothing else.
- `etag` hashes the digest and everything else the response shows, so it changes if and only if the
  block does.
- `render` writes the documented text layout (docs/reference/api.md, "Context block"): stable sections, oldest
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
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, Date, Numeric, String, case, cast, func, select
from sqlalchemy.dialects.postgresql import aggregate_order_by

from models.db import db
from models.errors import ValidationFailed
from models.memories.categories import in_categories
from models.memories.memory import AgentMemory

# The sections in their order. "always": the memories of `context: all` categories that are neither core nor
# journal (those keep their own sections). A block without any has the layout it always had.
SECTIONS = ("core", "always", "journal")
FORMAT_VERSION = "1"  # part of every ETag: a change of the layout must not answer 304 to an old copy
_T = AgentMemory.__table__


class BadCursor(ValidationFailed):
    """A cursor this endpoint did not hand out (422, naming `cursor`)."""


class Entry(NamedTuple):
    """One memory of the block. `sig` signs what the block shows of it (`_signature`); `content` is None
    when only the signature was read."""

    id: int
    memory_type: str
    created_at: datetime
    tokens: int
    tags: list[str]
    category: str | None
    constitutional: bool
    sig: int
    content: str | None

    @property
    def section(self) -> str:
        return self.memory_type if self.memory_type in ("core", "journal") else "always"

    @property
    def key(self) -> tuple[int, datetime, int]:
        """The block's order: core, always, journal, then origin date, then id."""
        return SECTIONS.index(self.section), self.created_at, self.id


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


def _signature(text: bool) -> ColumnElement[Any]:
    """PostgreSQL: a memory's signature, computed where the row is — a 64-bit hash of everything the block
    shows of it, its text included (an origin's date in the text form, its time in JSON). The block's
    digest is the sum of its memories' signatures: the order is part of what each one signs (origin and
    id), and a sum needs no sort, so the 304 path's digest is one aggregate row (`digest`) that moves
    neither the text nor a row, and equals the rows' own sum (`page_digest`) by construction."""
    created = cast(cast(_T.c.created_at, Date), String) if text else cast(_T.c.created_at, String)
    shown = func.concat_ws(
        "|",
        cast(_T.c.id, String),
        _T.c.memory_type,
        created,
        cast(_T.c.token_estimate, String),
        cast(_T.c.tags, String),
        func.coalesce(_T.c.category, ""),
        cast(_T.c.constitutional, String),
        _T.c.content,
    )
    return func.hashtextextended(shown, 0)


def _python_signature(row: Any, text: bool) -> int:
    """SQLite (in process, no such hash in SQL): the same parts, hashed here to 64 bits."""
    created = row.created_at.date().isoformat() if text else row.created_at.isoformat()
    parts = (row.id, row.memory_type, created, row.token_estimate, row.tags, row.category or "",
             row.constitutional, row.content)  # fmt: skip
    return int(_md5("|".join(map(str, parts)))[:16], 16)


def _where(
    agent_id: int, categories: Sequence[str | None], now: datetime, window: timedelta, whole: Sequence[str]
) -> list[Any]:
    core = _T.c.memory_type == "core"
    journal = (_T.c.memory_type == "journal") & (_T.c.created_at >= now - window)
    shown = core | journal
    if whole:  # every other memory of a `context: all` category
        shown = shown | (_T.c.memory_type.not_in(("core", "journal")) & _T.c.category.in_(list(whole)))
    return [
        _T.c.agent_id == agent_id,
        _T.c.deleted_at.is_(None),
        shown,
        in_categories(_T.c.category, categories),
    ]


def _order() -> list[Any]:
    section = case((_T.c.memory_type == "core", 0), (_T.c.memory_type == "journal", 2), else_=1)
    return [section, _T.c.created_at, _T.c.id]


def _postgresql() -> bool:
    return db.session.get_bind().dialect.name == "postgresql"


def entries(
    agent_id: int,
    categories: Sequence[str | None],
    *,
    now: datetime,
    journal_window: timedelta,
    text: bool,
    content: bool = True,
    signed: bool = True,
    whole: Sequence[str] = (),
) -> tuple[list[Entry], str | None]:
    """The block's memories in its order — active core memories, then the other active memories of the
    `whole` categories (those configured `context: all`), then active journals created within
    `journal_window` before `now`, in `categories` (None: those without one); soft-deleted rows never —
    and, when `signed` is False on PostgreSQL, the whole block's digest (else None).

    `content`: read the text. `signed`: each memory's signature; PostgreSQL, unsigned, sums them in the
    statement instead (an uncorrelated subquery, run once, in the rows' own snapshot, so the digest is of
    exactly these rows) and the entries carry 0. SQLite signs every row it reads, text and all."""
    if not categories:
        return [], "0" if not signed and _postgresql() else None
    postgresql = _postgresql()
    where = _where(agent_id, categories, now, journal_window, whole)
    columns = [_T.c.id, _T.c.memory_type, _T.c.created_at, _T.c.token_estimate, cast(_T.c.tags, String),
               _T.c.category, _T.c.constitutional]  # fmt: skip
    if postgresql:
        columns.append(_signature(text).label("sig") if signed else _total(text, where).label("sig"))
    if content or not postgresql:
        columns.append(_T.c.content)
    rows = db.session.execute(select(*columns).where(*where).order_by(*_order())).all()
    block = [
        Entry(
            row.id,
            row.memory_type,
            row.created_at,
            row.token_estimate,
            json.loads(row.tags) if row.tags != "[]" else [],  # most have none: skip the parser
            row.category,
            bool(row.constitutional),
            (row.sig if signed else 0) if postgresql else _python_signature(row, text),
            row.content if content else None,
        )
        for row in rows
    ]
    if postgresql and not signed:
        return block, rows[0].sig if rows else "0"
    return block, None


def _total(text: bool, where: list[Any]) -> Any:
    """The sum of the signatures of the rows `where` selects, as text: the block's digest."""
    total = func.coalesce(func.sum(cast(_signature(text), Numeric)), 0)
    return select(cast(total, String)).where(*where).scalar_subquery()


class Digest(NamedTuple):
    """What the ETag needs of the whole block, and how long it holds without a write: `leaves_at`, when its
    oldest journal leaves the window (None: it has none)."""

    digest: str
    memories: int
    leaves_at: datetime | None


def digest(
    agent_id: int,
    categories: Sequence[str | None],
    *,
    now: datetime,
    journal_window: timedelta,
    text: bool,
    whole: Sequence[str] = (),
) -> Digest | None:
    """PostgreSQL: the whole block's digest in one row, no memory read. None elsewhere (`whole_digest` of
    `entries` instead). Equal to `page_digest` of the whole block's entries."""
    if not _postgresql():
        return None
    if not categories:
        return Digest("0", 0, None)
    where = _where(agent_id, categories, now, journal_window, whole)
    total = func.coalesce(func.sum(cast(_signature(text), Numeric)), 0)
    oldest = func.min(_T.c.created_at).filter(_T.c.memory_type == "journal")
    row = db.session.execute(select(cast(total, String), func.count(), oldest).where(*where)).one()
    return Digest(row[0], int(row[1]), row[2] + journal_window if row[2] is not None else None)


def whole_digest(block: Sequence[Entry], journal_window: timedelta) -> Digest:
    """`digest` of the whole block's entries, read and signed here (SQLite)."""
    journals = [e.created_at for e in block if e.section == "journal"]
    return Digest(page_digest(block), len(block), min(journals) + journal_window if journals else None)


class JsonBlock(NamedTuple):
    core: str  # a JSON array of ContextMemory objects
    always: str
    journal: str
    digest: str
    memories: int
    tokens: int


def json_block(
    agent_id: int,
    categories: Sequence[str | None],
    *,
    now: datetime,
    journal_window: timedelta,
    whole: Sequence[str] = (),
) -> JsonBlock | None:
    """PostgreSQL: the whole block's memories as the JSON arrays of GET /context (`memory_json`'s
    objects, written by the database, which builds a thousand in a fraction of what Python takes) with
    its digest, in one statement; None elsewhere (render `entries`)."""
    if not categories or not _postgresql():
        return None
    where = _where(agent_id, categories, now, journal_window, whole)
    memory = func.json_build_object(
        "id", _T.c.id,
        "memory_type", _T.c.memory_type,
        "content", _T.c.content,
        "origin_date", func.to_char(_T.c.created_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        "tokens", _T.c.token_estimate,
        "tags", _T.c.tags,
        "category", _T.c.category,
        "constitutional", _T.c.constitutional,
    )  # fmt: skip

    def array(kind: ColumnElement[bool]) -> Any:
        ordered = func.json_agg(aggregate_order_by(memory, _T.c.created_at, _T.c.id))
        return cast(func.coalesce(ordered.filter(kind), func.json_build_array()), String)

    total = func.coalesce(func.sum(cast(_signature(False), Numeric)), 0)
    row = db.session.execute(
        select(
            array(_T.c.memory_type == "core"),
            array(_T.c.memory_type.not_in(("core", "journal"))),
            array(_T.c.memory_type == "journal"),
            cast(total, String),
            func.count(),
            func.coalesce(func.sum(_T.c.token_estimate), 0),
        ).where(*where)
    ).one()
    return JsonBlock(row[0], row[1], row[2], row[3], int(row[4]), int(row[5]))


def memory_json(entry: Entry) -> dict[str, Any]:
    """A ContextMemory as JSON (what `json_block` writes on PostgreSQL), built directly: a block holds
    thousands, and a model per memory cost more than the rest of the request."""
    return {
        "id": entry.id,
        "memory_type": entry.memory_type,
        "content": entry.content,
        "origin_date": entry.created_at.isoformat(timespec="microseconds") + "Z",
        "tokens": entry.tokens,
        "tags": entry.tags,
        "category": entry.category,
        "constitutional": entry.constitutional,
    }


def page_digest(entries_: Sequence[Entry]) -> str:
    """The sum of the memories' signatures, as `digest` writes it."""
    return str(sum(e.sig for e in entries_))


def encode_cursor(entry: Entry) -> str:
    raw = f"{entry.section}|{entry.created_at.isoformat(timespec='microseconds')}|{entry.id}"
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


def etag(block_digest: str, shown: dict[str, Any], *, text: bool) -> str:
    """A strong ETag of exactly what the response shows: its memories (`page_digest` or `digest`: the sum
    of their signatures, each of which signs its place in the order too) and `shown` (usage, delta,
    revision, paging: whatever else the response shows), so it changes if and only if the block does."""
    body = [FORMAT_VERSION, "text" if text else "json", block_digest, shown]
    return '"' + hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:40] + '"'


HEADINGS = {
    "core": "## Core memories",
    "always": "## Always in context",
    "journal": "## Journal, last {days} days",
}


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
        seen.setdefault(entry.section, entry.id)
    return set(seen.values())


def render(page_: Page, *, starts: set[int], journal_days: int, delta_header: str, usage_line: str) -> str:
    """The text layout of docs/reference/api.md, "Context block": each section's heading before its first memory,
    the memories oldest first, and on the last page the delta header and the usage line."""
    out: list[str] = []
    for entry in page_.entries:
        if entry.id in starts:
            out.append(HEADINGS[entry.section].format(days=journal_days) + "\n")
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
