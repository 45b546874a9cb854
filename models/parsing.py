"""One parsing path for untrusted values: times, ids and text from a URL, a form, a JSON body, a
model's tool call or the command line.

It lives in `models/` because every layer takes such values: the console's routes, the agent API's
request models, the refinement tools (a model's arguments are untrusted too) and the CLI. Each of
them calls these functions instead of its own `fromisoformat`, so one rule holds everywhere
(docs/explanation/security.md):

- a time is ISO 8601 with any offset (none means UTC) and comes back as naive UTC, the way every
  column stores it; a moment outside years 1-9999 once moved to UTC is clamped to the first or last
  representable microsecond (an offset cannot turn a valid filter into an error);
- an id is a positive integer that fits the id columns (PostgreSQL `integer`); anything else is
  simply not found;
- text never carries NUL, which neither database stores;
- a value pydantic refuses is reported by field path and rule, never quoting the input (which may be
  memory content).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from typing import TYPE_CHECKING

from models.errors import DomainError

if TYPE_CHECKING:
    from pydantic import ValidationError

MAX_ID = 2**31 - 1  # PostgreSQL `integer`, the type of every id column
NO_NUL = r"^[^\x00]*$"  # the pattern form, for pydantic fields and OpenAPI
_MAX_ID_DIGITS = len(str(MAX_ID))
_DIGITS = re.compile(r"^[0-9]+$")


class BadInput(DomainError):
    """A value the request cannot be served with: 400 and a message saying what form is expected."""

    code = "bad_input"
    http_status = 400


def to_utc(moment: datetime) -> datetime:
    """An aware time as naive UTC (clamped to years 1-9999); a naive one is already UTC."""
    if moment.tzinfo is None:
        return moment
    try:
        return moment.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:
        # Only the first and last day of the calendar can overflow: 0001-01-01 at +14:00 is still
        # year 0 in UTC, 9999-12-31 at -14:00 already year 10000.
        return datetime.min if moment.year == 1 else datetime.max


def parse_utc(value: str | datetime | date | None, *, field: str = "time", end_of_day: bool = False):
    """ISO 8601 (`2026-11-22`, `2026-11-22T04:00`, `...Z`, `...+05:30`) as naive UTC, or None for
    an empty value. A bare date is its first microsecond, or its last with `end_of_day`. Anything else
    is `BadInput` naming `field`."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return to_utc(value)
    if isinstance(value, date):
        return datetime.combine(value, time.max if end_of_day else time.min)
    text = str(value).strip()
    if not text:
        return None
    if "\x00" in text or len(text) > 64:
        raise BadInput(f"{field} must be an ISO 8601 date or time, e.g. 2026-11-22T04:00:00Z", field=field)
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(
            f"{field} must be an ISO 8601 date or time, e.g. 2026-11-22T04:00:00Z", field=field
        ) from None
    if end_of_day and len(text) == 10:  # a bare date means the whole day
        moment = datetime.combine(moment.date(), time.max)
    return to_utc(moment)


def parse_id(value: str | int | None) -> int | None:
    """A row id from untrusted text: None unless it is a positive integer that fits the id columns."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 1 <= value <= MAX_ID else None
    text = (value or "").strip()
    if not _DIGITS.match(text) or len(text) > _MAX_ID_DIGITS:
        return None
    number = int(text)
    return number if 1 <= number <= MAX_ID else None


def parse_int(value: str | None, *, default: int, low: int, high: int) -> int:
    """A small number (a page, a limit) from untrusted text: `default` when absent or malformed,
    clamped to [low, high] otherwise, so no value reaches SQL out of range."""
    text = (value or "").strip()
    if not _DIGITS.match(text):
        return default
    if len(text) > 12:  # int() of a huge digit string is slow, and the answer is `high` anyway
        return high
    return max(low, min(int(text), high))


def has_nul(value: str | None) -> bool:
    return value is not None and "\x00" in value


def clean_text(value: str | None, *, field: str = "text", max_length: int | None = None) -> str:
    """Untrusted text: NUL is refused (400), surrounding space dropped, then cut to `max_length`."""
    text = (value or "").strip()
    if has_nul(text):
        raise BadInput(f"{field} must not contain NUL characters", field=field)
    return text[:max_length] if max_length is not None else text


def validation_problems(err: ValidationError, where: str) -> list[dict[str, str]]:
    """pydantic's refusal as [{field, rule, message}], the field a dotted path (`where` when the
    value itself was refused). The input is left out: it may be memory content."""
    return [
        {
            "field": ".".join(str(p) for p in item["loc"]) or where,
            "rule": item["type"],
            "message": item["msg"],
        }
        for item in err.errors(include_url=False, include_input=False, include_context=False)
    ]


def describe_problems(err: ValidationError, where: str) -> str:
    """The same as one line: "field: message; field: message"."""
    return "; ".join(f"{p['field']}: {p['message']}" for p in validation_problems(err, where))
