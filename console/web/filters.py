"""Jinja filters for figures and times: the console's whole vocabulary is numbers, ids and dates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import Flask, g, has_request_context, request
from markupsafe import Markup, escape

from models import utcnow
from models.parsing import to_utc  # RQ hands out aware times, the models naive UTC: alike

from . import glossary
from .sparkline import sparkline

TZ_COOKIE = "tz"


def number(value: int | float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def signed(value: int | None) -> str:
    if not value:
        return "0"
    return f"{value:+,}"


@lru_cache(maxsize=64)
def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def valid_zone(name: str | None) -> str | None:
    """An IANA zone name the server knows (e.g. Europe/Paris), or None."""
    if not name or len(name) > 64 or not all(c.isalnum() or c in "/_+-" for c in name):
        return None
    return name if _zone(name) is not None else None


def common_zones() -> list[str]:
    """The zones the preferences page offers: UTC first, then every IANA zone the server knows."""
    from zoneinfo import available_timezones

    return [
        "UTC",
        *sorted(z for z in available_timezones() if "/" in z and not z.startswith(("Etc/", "SystemV/"))),
    ]


def display_zone() -> str:
    """The admin's preferred zone (a cookie set on the preferences page), UTC by default."""
    if not has_request_context():
        return "UTC"
    if "display_zone" not in g:
        g.display_zone = valid_zone(request.cookies.get(TZ_COOKIE)) or "UTC"
    return g.display_zone


def _local(value: datetime) -> datetime:
    zone = display_zone()
    aware = to_utc(value).replace(tzinfo=UTC)
    return aware if zone == "UTC" else aware.astimezone(_zone(zone))


def when(value: datetime | None, seconds: bool = False) -> str:
    """A time in the admin's zone, always with the zone named: "2026-11-22 04:00 UTC"."""
    if value is None:
        return "—"
    moment = _local(value)
    label = "UTC" if display_zone() == "UTC" else moment.tzname()
    return moment.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M") + f" {label}"


def stamp(value: datetime | None, seconds: bool = False) -> Markup:
    """Every time the console shows: absolute with its zone, and relative ("3 h ago"), in a <time>
    element whose datetime attribute is exact UTC ISO 8601."""
    if value is None:
        return Markup('<span class="muted">—</span>')
    utc = to_utc(value).isoformat(timespec="seconds") + "Z"
    return Markup(
        f'<time datetime="{utc}" title="{utc}"><span class="abs">{escape(when(value, seconds))}</span>'
        f' <span class="rel">· {escape(ago(value))}</span></time>'
    )


def iso_input(value: datetime | None) -> str:
    """A time as the ISO 8601 text the date-time fields take: UTC with a Z."""
    return to_utc(value).isoformat(timespec="seconds") + "Z" if value else ""


def local_input(value: datetime | None) -> str:
    """A time as a `datetime-local` field shows it: in the admin's zone, without an offset (the page
    names the zone next to the field, and `from_local_input` reads it back in the same zone)."""
    return _local(value).strftime("%Y-%m-%dT%H:%M:%S") if value else ""


def from_local_input(text: str | None) -> str | None:
    """A value typed into a `datetime-local` field (no offset) as ISO 8601 with the admin's zone's
    offset at that moment; a value with an offset or a Z, or anything else, is returned unchanged."""
    value = (text or "").strip()
    if len(value) < 16 or len(value) > 26 or value[10:11] != "T" or value.endswith(("Z", "z")):
        return text
    if "+" in value[10:] or "-" in value[10:]:
        return text
    try:
        naive = datetime.fromisoformat(value)
    except ValueError:
        return text
    zone = display_zone()
    return naive.replace(tzinfo=UTC if zone == "UTC" else _zone(zone)).isoformat()


def iso_utc(value: datetime | None) -> str:
    """A naive UTC time, to the microsecond, with its Z: exact, and never read in another zone."""
    return value.isoformat(timespec="microseconds") + "Z" if value else ""


def iso(value: datetime | None) -> str:
    return value.isoformat(timespec="microseconds") if value else ""


def ago(value: datetime | None, now: datetime | None = None) -> str:
    """Relative time, past or future: "3 min ago", "in 2 h"."""
    if value is None:
        return "—"
    delta = ((now or utcnow()) - to_utc(value)).total_seconds()
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
    return max(0, int((to_utc(value) - utcnow()).total_seconds() * 1000))


def duration(seconds: float | None) -> str:
    """How long something took: "40 ms", "4.2 s", "12 s", "3 min 05 s", "2 h 10 min"."""
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{max(seconds * 1000, 1):.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def size(value: int | None) -> str:
    """A size in bytes as people read it: "512 bytes", "3.2 KiB", "64 MiB", "1.5 GiB"."""
    if value is None:
        return "—"
    if value < 1024:
        return f"{value:,} byte{'' if value == 1 else 's'}"
    for unit, power in (("KiB", 1), ("MiB", 2), ("GiB", 3), ("TiB", 4)):
        scaled = value / 1024**power
        if scaled < 1024 or unit == "TiB":
            text = f"{scaled:.1f}".removesuffix(".0") if scaled < 100 else f"{scaled:,.0f}"
            return f"{text} {unit}"
    return f"{value:,} bytes"  # not reached


def plus_seconds(value: datetime | None, seconds: float) -> datetime | None:
    return value + timedelta(seconds=seconds) if value is not None else None


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"


def init_app(app: Flask) -> None:
    app.add_template_filter(number)
    app.add_template_filter(signed)
    app.add_template_filter(when)
    app.add_template_filter(stamp)
    app.add_template_filter(iso_input)
    app.add_template_filter(glossary.plain, "plain")
    app.add_template_filter(glossary.action, "action_words")
    app.add_template_filter(glossary.status, "status_words")
    app.add_template_filter(glossary.stat, "stat_words")
    app.add_template_global(glossary.term, "term")
    app.add_template_global(display_zone, "display_zone")
    app.add_template_global(utcnow, "now")
    app.add_template_filter(iso)
    app.add_template_filter(iso_utc)
    app.add_template_filter(local_input)
    app.add_template_filter(ago)
    app.add_template_filter(clock)
    app.add_template_filter(percent)
    app.add_template_filter(duration)
    app.add_template_filter(size)
    app.add_template_filter(plus_seconds)
    app.add_template_filter(ms_until)
    app.add_template_global(lambda series, **kw: Markup(sparkline(series, **kw)), "sparkline")
