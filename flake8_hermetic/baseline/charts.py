"""The burn-down drawn: a table, unicode bars for a terminal, a stacked SVG.

Hand-written on purpose: the pack's one runtime dependency is flake8, and
the shapes needed here (bars, a stacked area chart) take a page of code,
not a plotting library.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

from flake8_hermetic.baseline.history import Point

BLOCKS = " ▏▎▍▌▋▊▉█"  # eighths of a cell
BAR_WIDTH = 40
# distinguishable, colour-blind-safe (Okabe-Ito), then repeated
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def codes_of(points: Sequence[Point]) -> list[str]:
    """Every code that ever had an entry, the most indebted (at its peak) first."""
    peak: dict[str, int] = {}
    for point in points:
        for code, count in point.counts.items():
            peak[code] = max(peak.get(code, 0), count)
    return sorted(peak, key=lambda code: (-peak[code], code))


def _label(point: Point) -> tuple[str, str]:
    return (point.date or "now", point.commit[:9] or "-")


def table(points: Sequence[Point]) -> list[str]:
    """One row per commit, oldest first: date, commit, total, then each code."""
    codes = codes_of(points)
    header = ["date", "commit", "total", *codes]
    rows = [[*_label(p), str(p.total), *(str(p.counts.get(code, 0)) for code in codes)] for p in points]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(row[2:], widths[2:])]
        lines.append("  ".join(cells).rstrip())
    return lines


def bar(value: int, largest: int, width: int = BAR_WIDTH) -> str:
    """``value`` as a bar of eighth-cell blocks, ``width`` cells for ``largest``."""
    if largest <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value * width * 8 / largest))
    full, part = divmod(eighths, 8)
    return BLOCKS[8] * full + (BLOCKS[part] if part else "")


def terminal(points: Sequence[Point]) -> list[str]:
    """A horizontal bar per commit, the total at its end."""
    largest = max((p.total for p in points), default=0)
    labels = [_label(p) for p in points]
    dates = max((len(date) for date, _ in labels), default=0)
    commits = max((len(commit) for _, commit in labels), default=0)
    return [
        f"{date.ljust(dates)}  {commit.ljust(commits)}  {bar(p.total, largest)} {p.total}"
        for (date, commit), p in zip(labels, points)
    ]


def svg(points: Sequence[Point], title: str) -> str:
    """A self-contained SVG: the entries per code stacked over the commits."""
    codes = codes_of(points)
    left, top, plot_w, plot_h, legend_w = 60, 40, 640, 300, 150
    width, height = left + plot_w + legend_w, top + plot_h + 70
    largest = max((p.total for p in points), default=0) or 1
    step = plot_w / max(len(points) - 1, 1)

    def x(index: int) -> float:
        return left + index * step if len(points) > 1 else left + plot_w / 2

    def y(value: float) -> float:
        return top + plot_h - value * plot_h / largest

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="{top - 16}" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    below = [0] * len(points)
    for number, code in enumerate(codes):
        above = [base + p.counts.get(code, 0) for base, p in zip(below, points)]
        outline = [(x(i), y(v)) for i, v in enumerate(above)]
        outline += [(x(i), y(v)) for i, v in reversed(list(enumerate(below)))]
        if len(points) == 1:  # one commit: a bar, not a line
            outline = [(x(0) - 20, y(above[0])), (x(0) + 20, y(above[0])), (x(0) + 20, y(below[0])),
                       (x(0) - 20, y(below[0]))]
        colour = PALETTE[number % len(PALETTE)]
        coordinates = " ".join(f"{px:.1f},{py:.1f}" for px, py in outline)
        parts.append(f'<polygon points="{coordinates}" fill="{colour}" fill-opacity="0.85" stroke="{colour}">'
                     f"<title>{escape(code)}</title></polygon>")
        legend_y = top + 14 + number * 18
        parts.append(f'<rect x="{left + plot_w + 20}" y="{legend_y - 10}" width="12" height="12" fill="{colour}"/>')
        parts.append(f'<text x="{left + plot_w + 38}" y="{legend_y}">{escape(code)} '
                     f"({points[-1].counts.get(code, 0)})</text>")
        below = above
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#333"/>')
    for tick in sorted({0, largest // 2, largest}):
        parts.append(f'<text x="{left - 8}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick}</text>')
    every = max(1, len(points) // 8)
    for index, point in enumerate(points):
        if index % every and index != len(points) - 1:
            continue
        date, commit = _label(point)
        parts.append(f'<text x="{x(index):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{escape(date)}</text>')
        parts.append(f'<text x="{x(index):.1f}" y="{top + plot_h + 32}" text-anchor="middle" '
                     f'fill="#666">{escape(commit[:7])}</text>')
    parts.append(f'<text x="{left}" y="{height - 10}" fill="#666">entries per code, one point per commit '
                 "that changed the baseline, oldest first</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
