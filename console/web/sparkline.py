"""A small server-rendered SVG sparkline of core tokens over time: a step line, session ends as dots,
a visible scale (the top value and zero) and a tooltip listing the values."""

from __future__ import annotations

from html import escape

from models.readmodels.token_history import TokenSeries

GUTTER = 28  # room on the left for the scale labels
TOOLTIP_POINTS = 8


def compact(value: int) -> str:
    """A scale label that fits a sparkline: 950, 1.2k, 34k, 1.5M."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return str(value)


def _tooltip(series: TokenSeries, budget: int | None) -> str:
    """The values behind the line, evenly picked, with their dates: what a hover shows."""
    points = series.points
    step = max(1, (len(points) - 1) // (TOOLTIP_POINTS - 1))
    picked = points[::step]
    if picked[-1] is not points[-1]:
        picked.append(points[-1])
    lines = [f"{at:%Y-%m-%d} UTC: {value:,}" for at, value in picked]
    head = f"Core tokens, {points[0][1]:,} → {points[-1][1]:,} (peak {max(v for _, v in points):,})"
    if budget:
        head += f"; budget {budget:,}"
    return head + "\n" + "\n".join(lines)


def sparkline(
    series: TokenSeries | None, *, width: int = 150, height: int = 32, budget: int | None = None
) -> str:
    """SVG markup (numbers only). The y axis runs from zero to the larger of the peak and the budget,
    and says so: the top value and 0 are written at the left."""
    if series is None or len(series.points) < 2:
        return (
            f'<svg class="spark empty" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="no history yet"><title>No history yet</title><line x1="{GUTTER}" '
            f'y1="{height - 3}" x2="{width - 2}" y2="{height - 3}"/></svg>'
        )
    points = series.points
    start, end = points[0][0], points[-1][0]
    span = max((end - start).total_seconds(), 1.0)
    peak = max(max(v for _, v in points), budget or 0, 1)
    pad = 3.0
    left = GUTTER

    def x(at) -> float:
        return left + (width - left - pad) * min(max((at - start).total_seconds() / span, 0.0), 1.0)

    def y(value: int) -> float:
        return height - pad - (height - 2 * pad) * value / peak

    path = [f"M{x(points[0][0]):.1f},{y(points[0][1]):.1f}"]
    for (_, _), (at, value) in zip(points, points[1:], strict=False):
        path.append(f"H{x(at):.1f}V{y(value):.1f}")
    tooltip = _tooltip(series, budget)
    parts = [
        f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="core tokens over time: {points[0][1]:,} to {points[-1][1]:,}, scale 0 to {peak:,}">'
        f"<title>{escape(tooltip)}</title>",
        f'<line class="axis" x1="{left - 2}" x2="{left - 2}" y1="{pad}" y2="{height - pad}"/>',
        f'<text x="{left - 4}" y="{pad + 6:.1f}" text-anchor="end">{compact(peak)}</text>',
        f'<text x="{left - 4}" y="{height - pad:.1f}" text-anchor="end">0</text>',
    ]
    if budget:
        parts.append(
            f'<line class="budget" x1="{left}" x2="{width - pad}" y1="{y(budget):.1f}" y2="{y(budget):.1f}"/>'
        )
    parts.append(f'<path d="{"".join(path)}"/>')
    for at, tokens, status in series.sessions:
        if start <= at <= end:
            parts.append(
                f'<circle class="session {escape(status)}" cx="{x(at):.1f}" cy="{y(tokens):.1f}" r="2">'
                f"<title>{escape(status.replace('_', ' '))} session {at:%Y-%m-%d %H:%M} UTC: {tokens:,} tokens after</title></circle>"
            )
    parts.append(f'<circle class="now" cx="{x(end):.1f}" cy="{y(points[-1][1]):.1f}" r="2"/>')
    parts.append("</svg>")
    return "".join(parts)
