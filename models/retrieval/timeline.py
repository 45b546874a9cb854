"""Questions about a span of time around an event: "What did Hanna do in the week before the trip to Osaka?"

The memory that answers names neither the trip nor the week ("Hanna sprained her wrist on 2 September
2023"): it is found by its date, not its words. memory.query reads the span from the question (`window`),
takes the first ranking's best hit as the event the span is measured from, and lets in the memories of
the same user whose own day falls in the span (`in_window`), right after that event.

A memory's day is the day it tells of, not always the day it was written: "on 4 July 2023", "yesterday",
"last Monday" are read against the memory's `created_at` (`event_day`); a memory with no such words
happened the day it was written.

The spans and the reading of days were chosen on the development conversational set (`python -m
bench.conversational --set life_log`; docs/benchmarks.md, "Conversational sets").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

# A span's length in days, by the word that names it.
SPANS = {"day": 1, "few days": 4, "week": 7, "fortnight": 14, "month": 31}
# How far before its writing a memory's day can lie and still be read ("last Sunday" is at most a week
# back): the rows read for a span reach this much further than the span.
REACH = timedelta(days=8)
MAX_LET_IN = 8  # at most this many memories of the span are let in
ANCHORS = 2  # the first ranking's leaders each taken as the event a span is measured from

_SPAN = re.compile(
    r"\b(?:in|during)?\s*the\s+(day|few days|week|fortnight|month)\s+(before|after)\s+\S", re.I
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
_WEEKDAYS = {
    name: number
    for number, name in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())
}
_MONTH = "(" + "|".join(_MONTHS) + ")"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_LAST_WEEKDAY = re.compile(r"\blast\s+(" + "|".join(_WEEKDAYS) + r")\b", re.I)
_DAYS_AGO = re.compile(r"\b(\d{1,2}|a|one|two|three|four|five|six)\s+days?\s+ago\b", re.I)
_SMALL = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
# Relative words, longest first ("the day before yesterday" before "yesterday"), as days before writing.
_RELATIVE = (
    (re.compile(r"\bthe day before yesterday\b", re.I), 2),
    (re.compile(r"\byesterday\b", re.I), 1),
    (re.compile(r"\blast week\b", re.I), 7),
    (re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I), 0),
)


@dataclass(frozen=True)
class Window:
    days: int
    before: bool


def window(question: str | None) -> Window | None:
    """The span the question asks about ("in the week after ..."), or None."""
    found = _SPAN.search(question or "")
    if not found:
        return None
    return Window(SPANS[found.group(1).lower()], found.group(2).lower() == "before")


def event_day(content: str, written: datetime) -> date:
    """The day a memory tells of: an explicit date it gives, else a relative one read against the day it
    was written, else that day."""
    day = written.date()
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy"), (_ISO, "iso")):
        found = pattern.search(content)
        if found:
            try:
                return _explicit(found.groups(), order)
            except ValueError:  # "31 February": not a day; read on
                continue
    for pattern, back in _RELATIVE:
        if pattern.search(content):
            return day - timedelta(days=back)
    found = _LAST_WEEKDAY.search(content)
    if found:  # the latest such weekday strictly before the day of writing
        back = (day.weekday() - _WEEKDAYS[found.group(1).lower()]) % 7 or 7
        return day - timedelta(days=back)
    found = _DAYS_AGO.search(content)
    if found:
        count = found.group(1).lower()
        return day - timedelta(days=int(count) if count.isdigit() else _SMALL[count])
    return day


def _explicit(groups: Sequence[str], order: str) -> date:
    if order == "dmy":
        return date(int(groups[2]), _MONTHS[groups[1].lower()], int(groups[0]))
    if order == "mdy":
        return date(int(groups[2]), _MONTHS[groups[0].lower()], int(groups[1]))
    return date(int(groups[0]), int(groups[1]), int(groups[2]))


def reach(anchor: Any, span: Window) -> tuple[datetime, datetime]:
    """The `created_at` range whose memories may tell of a day in the span around `anchor` (a hit)."""
    day = event_day(anchor.content or "", anchor.created_at)
    start = datetime.combine(day, datetime.min.time())
    if span.before:
        return start - timedelta(days=span.days), start + REACH + timedelta(days=1)
    return start, start + timedelta(days=span.days + 1) + REACH


def in_window(anchor: Any, span: Window, rows: Sequence[Any]) -> list[Any]:
    """The rows (hits of the anchor's user, read over `reach`) whose day falls in the span around the
    anchor's day, the anchor's own day excluded, nearest the anchor's day first; at most MAX_LET_IN."""
    day = event_day(anchor.content or "", anchor.created_at)
    inside = []
    for row in rows:
        if row.id == anchor.id:
            continue
        offset = (event_day(row.content or "", row.created_at) - day).days
        if (-span.days <= offset < 0) if span.before else (0 < offset <= span.days):
            inside.append((abs(offset), -row.id, row))
    inside.sort(key=lambda item: item[:2])
    return [row for _, _, row in inside[:MAX_LET_IN]]


def interleaved(spans: Sequence[Sequence[Any]]) -> list[Any]:
    """The memories of several anchors' spans, taking each span's next in turn, each memory once."""
    out: list[Any] = []
    seen: set[int] = set()
    for rank in range(max((len(s) for s in spans), default=0)):
        for found in spans:
            if rank < len(found) and found[rank].id not in seen:
                seen.add(found[rank].id)
                out.append(found[rank])
    return out
