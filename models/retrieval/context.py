"""The agent's context block: what it holds in its system prompt (docs/spec/000-requirements.md, "The
Knife"; docs/spec/001's `for_prompt`) — every active core memory; then every other active memory of the
categories configured `context: all` that the agent reads, whatever its type (docs/spec/003-memory-system.md
§5: small, stable categories injected whole; `whole` below); then the active journals of the journal window;
each section oldest origin date first (id breaking ties), served by GET /api/v1/context.

Built for a prompt cache and a conditional GET:

- Each memory has a signature, a 64-bit hash of everything the block shows of it (`_signature`), and a
  block's digest is their sum. PostgreSQL keeps each memory's signatures with it (written at every write)
  and sums them where the rows are: `outline` is one aggregate row (the block's ids and signatures in
  order, and their sum), so the 304 path moves no text, and a block read again after one change reads
  one memory's text (`fill`), not a thousand. SQLite, in process, reads the text and signs it here.
- models/retrieval/context_layout.py writes it: each memory's part once per signature, so a changed block
  is written by writing only what changed and joining the rest, in the documented text layout or JSON.
- `page` cuts the ordered entries by a token cap, resuming after a cursor: each memory falls on exactly
  one page, and the cursor is a position (section, origin, id), not a row, so a memory deleted between
  two pages moves nothing else.
- `etag` hashes the digest and everything else the response shows, so it changes if and only if the
  block does.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, NamedTuple

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    String,
    any_,
    bindparam,
    case,
    cast,
    func,
    literal_column,
    null,
    select,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import ARRAY, aggregate_order_by
from sqlalchemy.dialects.postgresql import array as pg_array
from sqlalchemy.types import NullType

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
    """PostgreSQL: a memory's signature, a 64-bit hash of everything the block shows of it, its text
    included (its origin's date in the text form, its time in JSON) — kept with the row, written by the
    database at every write (migration 0026), so a read reads it and computes nothing. The block's digest
    is the sum of its memories' signatures: the order is part of what each one signs (origin and id), and
    a sum is the same in any order, so `outline`'s aggregate row, which moves no text, equals the rows' own
    sum (`page_digest`) by construction."""
    return literal_column("agent_memories.block_sig_text" if text else "agent_memories.block_sig", BigInteger)


def _python_signature(row: Any, text: bool) -> int:
    """SQLite (in process, no such hash in SQL): the same parts, hashed here to 64 bits."""
    created = row.created_at.date().isoformat() if text else row.created_at.isoformat()
    parts = (row.id, row.memory_type, created, row.token_estimate, row.tags, row.category or "",
             row.constitutional, row.content)  # fmt: skip
    return int(_md5("|".join(map(str, parts)))[:16], 16)


def _where(agent_id: Any, categories: Sequence[str | None], since: Any, whole: Sequence[str]) -> list[Any]:
    """The block's rows: `agent_id` and `since` (the journal window's start) are values or bind
    parameters (the statements built once below)."""
    core = _T.c.memory_type == "core"
    journal = (_T.c.memory_type == "journal") & (_T.c.created_at >= since)
    shown = core | journal
    if whole:  # every other memory of a `context: all` category
        shown = shown | (_T.c.memory_type.not_in(("core", "journal")) & _T.c.category.in_(list(whole)))
    return [
        _T.c.agent_id == agent_id,
        _T.c.deleted_at.is_(None),
        shown,
        in_categories(_T.c.category, categories),
    ]


def _order(c: Any) -> list[Any]:
    """The block's order over the columns `c` (the table's, or a subquery's)."""
    section = case((c.memory_type == "core", 0), (c.memory_type == "journal", 2), else_=1)
    return [section, c.created_at, c.id]


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
    whole: Sequence[str] = (),
) -> list[Entry]:
    """The block's memories in its order — active core memories, then the other active memories of the
    `whole` categories (those configured `context: all`), then active journals created within
    `journal_window` before `now`, in `categories` (None: those without one); soft-deleted rows never —
    each with its signature, in one statement. `content`: read the text (SQLite reads it anyway: it signs
    every row here)."""
    if not categories:
        return []
    postgresql = _postgresql()
    statement = _entries_statement(postgresql, text, content, tuple(categories), tuple(whole))
    rows = db.session.execute(statement, {"agent_id": agent_id, "since": now - journal_window}).all()
    if not postgresql:
        return [_entry(row, _python_signature(row, text), row[-1] if content else None) for row in rows]
    return _entries_of(rows)


@lru_cache(maxsize=64)
def _entries_statement(
    postgresql: bool, text: bool, content: bool, categories: tuple[str | None, ...], whole: tuple[str, ...]
) -> Any:
    """`entries`' statement, built once per database, format and categories and bound at each run (like
    `outline`'s). Its columns are `_columns()`'s, then on PostgreSQL the signature and the content (NULL when
    not asked) — an Entry's columns (`_entries_of`); on SQLite the content, which it signs in process."""
    where = _where(bindparam("agent_id"), categories, bindparam("since"), whole)
    if postgresql:
        shown = _T.c.content if content else null()
        columns = [*_columns(), _signature(text), shown]
    else:
        columns = [*_columns(), _T.c.content]
    return select(*columns).where(*where).order_by(*_order(_T.c))


def _columns() -> list[Any]:
    """What the block shows of a memory but its text, in `_entry`'s order."""
    return [
        _T.c.id,
        _T.c.memory_type,
        _T.c.created_at,
        _T.c.token_estimate,
        cast(_T.c.tags, String).label("tags"),
        _T.c.category,
        _T.c.constitutional,
    ]


_tuple = tuple.__new__


def _entries_of(rows: Iterable[Sequence[Any]]) -> list[Entry]:
    """The entries of PostgreSQL's rows, whose columns are an Entry's (`_columns()`'s, the signature, the
    text): each made as the tuple it is, its tags parsed where it has some. A first read makes a thousand,
    and the generic constructor cost a tenth of that request's own work."""
    return [
        _tuple(
            Entry,
            (i, kind, created, tokens, [] if tags == "[]" else _tags(tags), category, locked, sig, content),
        )
        for i, kind, created, tokens, tags, category, locked, sig, content in rows
    ]


def _entry(row: Sequence[Any], sig: int, content: str | None) -> Entry:
    """An entry of a row whose first columns are `_columns()`'s."""
    memory_id, memory_type, created_at, tokens, tags, category, constitutional = row[:7]
    return Entry(
        memory_id, memory_type, created_at, tokens, _tags(tags), category, bool(constitutional), sig, content
    )


def _tags(value: Any) -> list[str]:
    """A row's tags, read as JSON text (None when left out)."""
    if not value or value == "[]":  # most have none: skip the parser
        return []
    return json.loads(value)


class Digest(NamedTuple):
    """What the ETag needs of the whole block, and how long it holds without a write: `leaves_at`, when its
    oldest journal leaves the window (None: it has none)."""

    digest: str
    memories: int
    leaves_at: datetime | None


@dataclass(frozen=True)
class Outline:
    """The block without what it shows: its memories' ids, signatures and tokens in its order (parallel
    lists: a thousand memories are three lists, not a thousand objects), each section's count, its digest."""

    ids: list[int]
    sigs: list[int]
    tokens: list[int]
    counts: tuple[int, int, int]  # memories per section, in the order of SECTIONS
    digest: Digest

    def items(self) -> list[tuple[str, int]]:
        """(section, signature) of each memory, in order: what `render` and `json_sections` write."""
        sections = [name for name, count in zip(SECTIONS, self.counts, strict=True) for _ in range(count)]
        return list(zip(sections, self.sigs, strict=True))


def outline(
    agent_id: int,
    categories: Sequence[str | None],
    *,
    now: datetime,
    journal_window: timedelta,
    text: bool,
    whole: Sequence[str] = (),
) -> Outline | None:
    """PostgreSQL: the whole block without what it shows of its memories — their ids, signatures and
    tokens in the block's order and each section's count, signed where the rows are, in one aggregate
    row — and its digest (equal to `page_digest` of `entries`). `fill` reads what the block shows of the
    memories a caller has not written yet. None elsewhere."""
    if not _postgresql():
        return None
    if not categories:
        return Outline([], [], [], (0, 0, 0), Digest("0", 0, None))
    statement = _outline_statement(text, tuple(categories), tuple(whole))
    row = db.session.execute(statement, {"agent_id": agent_id, "since": now - journal_window}).one()
    triples, core, always, journal, oldest = row
    ids, sigs, tokens = (list(column) for column in zip(*triples, strict=True)) if triples else ([], [], [])
    leaves_at = oldest + journal_window if oldest is not None else None
    digest = Digest(str(sum(sigs)), len(sigs), leaves_at)
    return Outline(ids, sigs, tokens, (core, always, journal), digest)


@lru_cache(maxsize=64)
def _outline_statement(text: bool, categories: tuple[str | None, ...], whole: tuple[str, ...]) -> Any:
    """`outline`'s statement, built once per format and categories and bound at each run: on a read after a
    change, building and keying it cost about as much as the database's work."""
    where = _where(bindparam("agent_id"), categories, bindparam("since"), whole)
    section = case((_T.c.memory_type == "core", 0), (_T.c.memory_type == "journal", 2), else_=1)
    columns = [_T.c.id, section.label("section"), _T.c.created_at, _T.c.token_estimate]
    c = select(*columns, _signature(text).label("sig")).where(*where).subquery().c

    # One array of (id, signature, tokens) triples: one sort where three arrays took three. Typeless:
    # psycopg's lists as they come, without SQLAlchemy's per-item processing.
    triple = pg_array([cast(c.id, BigInteger), c.sig, cast(c.token_estimate, BigInteger)])
    ordered = func.array_agg(aggregate_order_by(triple, c.section, c.created_at, c.id))
    return select(
        type_coerce(ordered, NullType()),
        func.count().filter(c.section == 0),
        func.count().filter(c.section == 1),
        func.count().filter(c.section == 2),
        func.min(c.created_at).filter(c.section == 2),
    )


def fill(
    outline_: Outline,
    known: Collection[int],
    agent_id: int,
    categories: Sequence[str | None],
    *,
    now: datetime,
    journal_window: timedelta,
    text: bool,
    whole: Sequence[str] = (),
) -> list[Entry] | None:
    """The memories of `outline_` whose signatures are not `known` (a caller's written fragments), read
    whole by id and checked against the outline's signatures. None when a memory changed in between (read
    the block with `entries`), or when most are unknown (one read of everything costs less)."""
    wanted = {i: sig for i, sig in zip(outline_.ids, outline_.sigs, strict=True) if sig not in known}
    if not wanted:
        return []
    if len(wanted) > len(outline_.ids) // 2:
        return None
    statement = _fill_statement(text, tuple(categories), tuple(whole))
    params = {"agent_id": agent_id, "since": now - journal_window, "ids": list(wanted)}
    rows = db.session.execute(statement, params).all()
    read = [e for e in _entries_of(rows) if e.sig == wanted[e.id]]
    return read if len(read) == len(wanted) else None


@lru_cache(maxsize=64)
def _fill_statement(text: bool, categories: tuple[str | None, ...], whole: tuple[str, ...]) -> Any:
    """`fill`'s statement, built once like `outline`'s."""
    where = _where(bindparam("agent_id"), categories, bindparam("since"), whole)
    ids = bindparam("ids", type_=ARRAY(Integer))
    return select(*_columns(), _signature(text), _T.c.content).where(*where, _T.c.id == any_(ids))


def whole_digest(block: Sequence[Entry], journal_window: timedelta) -> Digest:
    """The digest of the whole block's entries (what `outline` sums on PostgreSQL)."""
    journals = [e.created_at for e in block if e.section == "journal"]
    return Digest(page_digest(block), len(block), min(journals) + journal_window if journals else None)


def page_digest(entries_: Iterable[Entry]) -> str:
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
