"""How GET /api/v1/context writes the agent's context block (models/retrieval/context.py reads it): each
memory's part — its JSON object or its lines of the text layout (docs/reference/api.md, "Context block") —
written once per signature (`fragment`), so a caller that keeps them (console/api/context_cache.py) writes
a changed block's changed memories only and joins the rest (`fragments`); the JSON sections and the text
layout joined from (section, signature) items, the same whether they come from `entries` or `outline`:
stable sections, oldest first, the often-changing usage line last, so what did not change is a
byte-identical prefix, and the pages' texts, concatenated, are the unpaged text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from json.encoder import encode_basestring
from typing import Any

from models.retrieval.context import SECTIONS, Entry


def memory_json(entry: Entry) -> dict[str, Any]:
    """A ContextMemory's fields as JSON: the definition `_json_object` writes byte for byte without building
    it (the property test of tests/models/retrieval/test_context_layout.py compares the two)."""
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


def fragment(entry: Entry, *, text: bool) -> str:
    """What a response writes of one memory: its lines of the text layout, or its JSON object."""
    return _item(entry) if text else _json_object(entry)


# The string escaping json.dumps(..., ensure_ascii=False) uses (C where the interpreter has it).
_string = encode_basestring


def _json_object(entry: Entry) -> str:
    """`json.dumps(memory_json(entry), ensure_ascii=False)`, byte for byte (a property test holds them
    equal), written directly: a block's first read writes every memory, and json.dumps' per-call set-up
    cost more than the rest of that request's work on them. The entry is unpacked rather than read field by
    field, and its time written by the plain `isoformat` (which leaves out a zero microsecond) — each a
    tenth of this function's cost."""
    memory_id, kind, created, tokens, tags, category, locked, _, content = entry
    origin = created.isoformat() if created.microsecond else created.isoformat() + ".000000"
    return (
        f'{{"id": {memory_id}, "memory_type": {_string(kind)}, '
        f'"content": {"null" if content is None else _string(content)}, "origin_date": "{origin}Z", '
        f'"tokens": {tokens}, "tags": {"[" + ", ".join(map(_string, tags)) + "]" if tags else "[]"}, '
        f'"category": {"null" if category is None else _string(category)}, '
        f'"constitutional": {"true" if locked else "false"}}}'
    )


def fragments(
    sigs: Iterable[int], known: Mapping[int, str], read: Iterable[Entry], *, text: bool
) -> dict[int, str]:
    """Each memory's fragment by signature: those in `known` as they were written (a signature signs all
    the fragment shows), the others written now from `read` (which holds every memory `known` lacks)."""
    write = _item if text else _json_object
    written = {e.sig: write(e) for e in read if e.sig not in known}
    if not known:  # a first read: everything was just written (the extra entries of other pages harm none)
        return written
    return {sig: known[sig] if sig in known else written[sig] for sig in sigs}


def json_sections(items: Iterable[tuple[str, int]], frags: Mapping[int, str]) -> dict[str, str]:
    """The JSON arrays of the response's sections from its (section, signature) items, each memory's
    object joined as `json.dumps` joins a list."""
    parts: dict[str, list[str]] = {section: [] for section in SECTIONS}
    for section, sig in items:
        parts[section].append(frags[sig])
    return {section: "[" + ", ".join(memories) + "]" for section, memories in parts.items()}


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


def section_starts(items: Iterable[tuple[str, int]]) -> set[int]:
    """The signatures of the first memory of each section: a heading precedes them, on whichever page they
    fall."""
    seen: dict[str, int] = {}
    for section, sig in items:
        seen.setdefault(section, sig)
    return set(seen.values())


def items(entries_: Iterable[Entry]) -> list[tuple[str, int]]:
    """(section, signature) of each entry: what `render` and `json_sections` write."""
    return [(e.section, e.sig) for e in entries_]


def render(
    items_: Iterable[tuple[str, int]],
    frags: Mapping[int, str],
    *,
    starts: set[int],
    last: bool,
    journal_days: int,
    delta_header: str,
    usage_line: str,
) -> str:
    """The text layout of docs/reference/api.md, "Context block": each section's heading before its first memory,
    the memories oldest first (`frags`: their lines, by signature), and on the last page the delta header and
    the usage line."""
    out: list[str] = []
    for section, sig in items_:
        if sig in starts:
            out.append(HEADINGS[section].format(days=journal_days) + "\n")
        out.append(frags[sig])
    if last:
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
