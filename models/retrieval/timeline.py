"""Questions about a span of time around an event: "What did Hanna do in the week before the trip to Osaka?",
"Who was on call for the payments pager the week after the all-hands?"

The memory that answers names neither the event nor the week ("Hanna sprained her wrist on 2 September
2023"): it is found by its date, not its words. memory.query reads the span and the words naming the event
from the question (`window`); takes as the events the span is measured from the best hit for the event's
own words and the first ranking's leaders (`anchored`); and lets in, right after them, the memories whose
own day falls in the span — first the anchor's user's (`in_window`), then, whoever they are of, those the
question's own ranking found among its first RANKED (`ranked_in_window`).

A memory's day is the day it tells of, not always the day it was written: "on 4 July 2023", "on 16 June",
"the week of July 14", "yesterday", "last Monday" are read against the memory's `created_at`
(`event_day`; a date without a year is taken in the year that puts it nearest the writing); a memory with
no such words happened the day it was written.

The spans, the anchors and the reading of days were chosen on the development conversational sets
(`python -m bench.conversational --set life_log,team_chat`; docs/benchmarks.md, "Conversational sets").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

# A span's length in days, by the word that names it.
SPANS = {"day": 1, "few days": 4, "week": 7, "fortnight": 14, "month": 31}
# How far before its writing a memory's day can lie and still be read ("last Sunday" is at most a week
# back): the rows read for a span reach this much further than the span.
REACH = timedelta(days=8)
MAX_LET_IN = 8  # at most this many memories of the span are let in
ANCHORS = 2  # the first ranking's leaders each taken as the event a span is measured from
RANKED = 30  # how deep the first ranking is read for its own memories of the span

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
# A day and month without a year ("on 16 June", "the 9th of June", "July 14"): the year that puts the day
# nearest the memory's writing.
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b", re.I)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!:\d)", re.I)
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
    event: str = ""  # the words naming the event ("the trip to Osaka")


def window(question: str | None) -> Window | None:
    """The span the question asks about ("in the week after ..."), or None."""
    found = _SPAN.search(question or "")
    if not found:
        return None
    event = (question or "")[found.end() - 1 :].strip(" ?.!")
    return Window(SPANS[found.group(1).lower()], found.group(2).lower() == "before", event)


@lru_cache(maxsize=4096)  # pure; a memory's day is read again by every question whose span it falls near
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
    for pattern, order in ((_DAY_MONTH, "dm"), (_MONTH_DAY, "md")):
        found = pattern.search(content)
        if found:
            try:
                return _nearest_year(found.groups(), order, day)
            except ValueError:
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


def _nearest_year(groups: Sequence[str], order: str, written: date) -> date:
    """A day and month without a year, in the year (of the writing's, the one before or after) that puts it
    nearest the day of writing."""
    day, month = (groups[0], groups[1]) if order == "dm" else (groups[1], groups[0])
    options = []
    for year in (written.year - 1, written.year, written.year + 1):
        try:
            options.append(date(year, _MONTHS[month.lower()], int(day)))
        except ValueError:  # 29 February of a year without one
            continue
    if not options:
        raise ValueError(f"no such day: {day} {month}")
    return min(options, key=lambda d: abs((d - written).days))


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
        if _in_span(offset, span):
            inside.append((abs(offset), -row.id, row))
    inside.sort(key=lambda item: item[:2])
    return [row for _, _, row in inside[:MAX_LET_IN]]


def anchored(events: Sequence[Any], hits: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The anchors — the best hit for the event's own words (`events`, "the all-hands" of "Who was on call
    the week after the all-hands?") and the first ranking's ANCHORS leaders, each once — and the first
    ranking with the anchors at its head."""
    anchors = list({hit.id: hit for hit in [*events[:1], *hits[:ANCHORS]]}.values())
    ids = {hit.id for hit in anchors}
    return anchors, [*anchors, *(hit for hit in hits if hit.id not in ids)]


def ranked_in_window(anchors: Sequence[Any], span: Window, ranked: Sequence[Any]) -> list[Any]:
    """The hits of `ranked` (the first ranking past its anchors), whoever they are of, whose day falls in the
    span around one of the anchors' days, in the ranking's order; at most MAX_LET_IN."""
    days = [event_day(anchor.content or "", anchor.created_at) for anchor in anchors]
    inside = []
    for hit in ranked:
        told = event_day(hit.content or "", hit.created_at)
        if any(_in_span((told - day).days, span) for day in days):
            inside.append(hit)
            if len(inside) == MAX_LET_IN:
                break
    return inside


def _in_span(offset: int, span: Window) -> bool:
    """Whether a day `offset` days from the event's is in the span (the event's own day is not)."""
    return -span.days <= offset < 0 if span.before else 0 < offset <= span.days


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
