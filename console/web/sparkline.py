"""A small server-rendered SVG sparkline of core tokens over time: a step line, session ends as dots."""

from __future__ import annotations

from html import escape

from models.console_queries import TokenSeries


def sparkline(
    series: TokenSeries | None, *, width: int = 120, height: int = 28, budget: int | None = None
) -> str:
    """SVG markup (numbers only). The y axis runs from zero to the larger of the peak and the budget."""
    if series is None or len(series.points) < 2:
        return (
            f'<svg class="spark empty" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="no history yet"><line x1="2" y1="{height - 3}" x2="{width - 2}" '
            f'y2="{height - 3}"/></svg>'
        )
    points = series.points
    start, end = points[0][0], points[-1][0]
    span = max((end - start).total_seconds(), 1.0)
    peak = max(max(v for _, v in points), budget or 0, 1)
    pad = 2.0

    def x(at) -> float:
        return pad + (width - 2 * pad) * min(max((at - start).total_seconds() / span, 0.0), 1.0)

    def y(value: int) -> float:
        return height - pad - (height - 2 * pad) * value / peak

    path = [f"M{x(points[0][0]):.1f},{y(points[0][1]):.1f}"]
    for (_, _), (at, value) in zip(points, points[1:], strict=False):
        path.append(f"H{x(at):.1f}V{y(value):.1f}")
    parts = [
        f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="core tokens over time: {points[0][1]:,} to {points[-1][1]:,}">'
    ]
    if budget:
        parts.append(
            f'<line class="budget" x1="{pad}" x2="{width - pad}" y1="{y(budget):.1f}" y2="{y(budget):.1f}"/>'
        )
    parts.append(f'<path d="{"".join(path)}"/>')
    for at, tokens, status in series.sessions:
        if start <= at <= end:
            parts.append(
                f'<circle class="session {escape(status)}" cx="{x(at):.1f}" cy="{y(tokens):.1f}" r="2">'
                f"<title>{escape(status)} session: {tokens:,} tokens after</title></circle>"
            )
    parts.append(f'<circle class="now" cx="{x(end):.1f}" cy="{y(points[-1][1]):.1f}" r="2"/>')
    parts.append("</svg>")
    return "".join(parts)
