"""Jinja filters for figures and times: the console's whole vocabulary is numbers, ids and dates."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Flask
from markupsafe import Markup

from models import utcnow

from .sparkline import sparkline


def _naive(value: datetime) -> datetime:
    """RQ hands out aware datetimes, the models naive UTC: compare and print them alike."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def number(value: int | float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def signed(value: int | None) -> str:
    if not value:
        return "0"
    return f"{value:+,}"


def when(value: datetime | None, seconds: bool = False) -> str:
    if value is None:
        return "—"
    return _naive(value).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def iso(value: datetime | None) -> str:
    return value.isoformat(timespec="microseconds") if value else ""


def ago(value: datetime | None, now: datetime | None = None) -> str:
    """Relative time, past or future: "3 min ago", "in 2 h"."""
    if value is None:
        return "—"
    delta = ((now or utcnow()) - _naive(value)).total_seconds()
    future, seconds = delta < 0, abs(delta)
    if seconds < 60:
        text = f"{int(seconds)} s"
    elif seconds < 3600:
        text = f"{int(seconds // 60)} min"
    elif seconds < 86400 * 2:
        text = f"{seconds / 3600:.0f} h"
    else:
        text = f"{seconds / 86400:.0f} d"
    return f"in {text}" if future else f"{text} ago"


def clock(seconds: int | None) -> str:
    """A countdown as m:ss."""
    seconds = max(int(seconds or 0), 0)
    return f"{seconds // 60}:{seconds % 60:02d}"


def ms_until(value: datetime | None) -> int:
    """Milliseconds from now until `value` (0 if past): what a countdown needs, without rounding."""
    if value is None:
        return 0
    return max(0, int((_naive(value) - utcnow()).total_seconds() * 1000))


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def init_app(app: Flask) -> None:
    app.add_template_filter(number)
    app.add_template_filter(signed)
    app.add_template_filter(when)
    app.add_template_filter(iso)
    app.add_template_filter(ago)
    app.add_template_filter(clock)
    app.add_template_filter(percent)
    app.add_template_filter(ms_until)
    app.add_template_global(lambda series, **kw: Markup(sparkline(series, **kw)), "sparkline")
