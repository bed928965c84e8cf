"""The SVG charts: results.svg and size_report.svg, and the drawing (svg_chart, Panel, Point) comparison.svg uses.

In: aggregates, or size summaries. Out: one self-contained SVG, panels in a grid, every label placed inside
its canvas. Each format keeps one marker, dash and colour in every chart (format_style).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from ._article import FORMATS
from .matrix import group_key

if TYPE_CHECKING:
    from .aggregates import Aggregate
    from .gate import Verdict
    from .matrix import GroupKey, Plan
    from .sizes import SizeSummary


# Pictures: plain SVG written here, no plotting library, deterministic bytes. Each format keeps one marker,
# line style and colour in every chart (by its place in FORMATS), named in a legend, so a chart reads in
# grey too; filled marks are on the Pareto front. Ticks fall at 1-2-5 steps, an axis whose values span
# more than 10x is logarithmic, labels are placed where their estimated boxes overlap no other label
# (a leader line joins a moved label to its mark), and every mark carries its figures as data-*
# attributes, which the tests read back.
SVG_PANEL = (420, 280)  # width, height of one panel's plotting area
SVG_GAP = (90, 100)  # room around a panel: left for the y ticks, below for the x ticks and label
SVG_COLUMNS = 3  # panels per row: a page, not a 2,000-px strip
FORMAT_MARKERS = ("circle", "square", "triangle", "diamond", "triangle-down", "cross", "plus", "star", "hexagon", "x")
FORMAT_DASHES = ("", "7,3", "2,2", "8,3,2,3", "1,3", "12,4", "4,2,1,2", "6,2,2,2,2,2", "3,5", "10,2")
FORMAT_COLOURS = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#8C564B",
    "#7F7F7F",
    "#BCBD22",
)
LABEL_SIZE = 10  # font size of mark labels
# a character of sans-serif text is taken as this share of its size wide: over most fonts' average, so what the chart
# lays out (labels, the legend, the footnote) stays inside its canvas in any renderer
CHAR_EM = 0.62


def text_width(text: str, size: int = LABEL_SIZE) -> float:
    """The width a line of text is laid out as: text_width('json', 10) -> 24.8."""
    return CHAR_EM * size * len(text)


def format_style(fmt: str) -> tuple[str, str, str]:
    """(marker, dash pattern, colour) of a format, the same in every chart: FORMATS order, cycling past ten."""
    k = list(FORMATS).index(fmt) if fmt in FORMATS else len(FORMATS)
    return (
        FORMAT_MARKERS[k % len(FORMAT_MARKERS)],
        FORMAT_DASHES[k % len(FORMAT_DASHES)],
        FORMAT_COLOURS[k % len(FORMAT_COLOURS)],
    )


def nice_ticks(lo: float, hi: float, log: bool = False, most: int = 8) -> list[float]:
    """Round ticks covering [lo, hi]: 1-2-5 steps on a linear axis (0, 20,000, 40,000...), 1-2-5 per decade on a
    log one (100, 200, 500, 1,000...)."""
    if hi <= lo:
        hi = lo + 1
    if log:
        ticks = [m * 10**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1) for m in (1, 2, 5)]
        inside = [t for t in ticks if lo <= t <= hi]
        return (
            inside
            if len(inside) <= most
            else [t for t in inside if str(int(t) if t >= 1 else t).lstrip("0.")[0] == "1"]
        )
    raw = (hi - lo) / max(most - 1, 1)
    step = next(
        m * 10 ** math.floor(math.log10(raw)) for m in (1, 2, 5, 10) if m * 10 ** math.floor(math.log10(raw)) >= raw
    )
    first = math.ceil(lo / step - 1e-9) * step
    return [round(first + k * step, 10) for k in range(int((hi - first) / step + 1e-9) + 1)]


def _tick_label(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 or value == int(value) else f"{value:g}"


def _svg_text(x: float, y: float, text: str, anchor: str = "start", size: int = 11, cls: str = "") -> str:
    safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    klass = f' class="{cls}"' if cls else ""
    return (
        f'<text{klass} x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-family="sans-serif">{safe}</text>'
    )


def _marker(shape: str, x: float, y: float, colour: str, filled: bool, attrs: str = "", r: float = 5.0) -> str:
    fill = colour if filled else "white"
    common = f'class="mark" fill="{fill}" stroke="{colour}" stroke-width="1.5" {attrs}'
    polygons = {
        "triangle": [(0, -1.2), (1.1, 0.8), (-1.1, 0.8)],
        "triangle-down": [(0, 1.2), (1.1, -0.8), (-1.1, -0.8)],
        "diamond": [(0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)],
        "star": [
            (
                math.cos(math.pi / 2 + k * math.pi / 5) * (1.3 if k % 2 == 0 else 0.55),
                -math.sin(math.pi / 2 + k * math.pi / 5) * (1.3 if k % 2 == 0 else 0.55),
            )
            for k in range(10)
        ],
        "hexagon": [(math.cos(k * math.pi / 3) * 1.15, math.sin(k * math.pi / 3) * 1.15) for k in range(6)],
    }
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" {common}/>'
    if shape == "square":
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}" {common}/>'
    if shape in polygons:
        pts = " ".join(f"{x + dx * r:.1f},{y + dy * r:.1f}" for dx, dy in polygons[shape])
        return f'<polygon points="{pts}" {common}/>'
    arms = [(-1, 0, 1, 0), (0, -1, 0, 1)] if shape == "plus" else [(-1, -1, 1, 1), (-1, 1, 1, -1)]  # plus, cross, x
    path = " ".join(f"M{x + a * r:.1f},{y + b * r:.1f} L{x + c * r:.1f},{y + d * r:.1f}" for a, b, c, d in arms)
    return (
        f'<path d="{path}" class="mark" fill="none" stroke="{colour}" stroke-width="{2.5 if filled else 1.2}" {attrs}/>'
    )


Box = tuple[float, float, float, float]  # (left, top, right, bottom)
# a legend entry: (format, what it stands for), or (name, what, its (marker, dash, colour))
LegendEntry = tuple[str, str] | tuple[str, str, tuple[str, str, str]]


def label_box(x: float, y: float, text: str, size: int = LABEL_SIZE) -> Box:
    """The estimated box (left, top, right, bottom) of a start-anchored label with its baseline at y."""
    return x, y - size, x + text_width(text, size), y + 0.25 * size


def _overlap(a: Box, b: Box) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def place_labels(
    marks: list[tuple[float, float, str]],
    bounds: tuple[float, float, float, float],
    taken: list[Box] | None = None,
    soft: list[Box] | tuple[()] = (),
) -> list[tuple[float, float, bool]]:
    """(x, y, moved) for each mark's label: the first of a ring of places around the mark, then further above
    and below, whose box overlaps no label placed before, no mark and nothing soft (a whisker), inside bounds; the
    least bad one when none is free, where crossing something soft costs a tenth of covering a label. moved: not the
    first place, so a leader line joins it to its mark."""
    taken = list(taken or [])
    taken += [(mx - 6, my - 6, mx + 6, my + 6) for mx, my, _ in marks]
    placed: dict[int, tuple[float, float, bool]] = {}
    for k in sorted(range(len(marks)), key=lambda k: (marks[k][1], marks[k][0])):
        mx, my, text = marks[k]
        width = text_width(text)
        offsets = [(8, -6), (8, 14), (-8 - width, -6), (-8 - width, 14)]
        offsets += [
            (dx, dy)
            for step in range(1, 21)
            for dy in (-6 - 13 * step, 14 + 13 * step)
            for dx in (8, -8 - width, 40, -40 - width, 120, -120 - width)
        ]
        best: tuple[float, float, bool] = (mx + offsets[0][0], my + offsets[0][1], False)
        best_cost: float | None = None
        for n, (dx, dy) in enumerate(offsets):
            box = label_box(mx + dx, my + dy, text)
            outside = (box[0] < bounds[0]) + (box[2] > bounds[2]) + (box[1] < bounds[1]) + (box[3] > bounds[3])
            cost = sum(_overlap(box, t) for t in taken) + 0.1 * sum(_overlap(box, t) for t in soft) + 1e4 * outside
            if best_cost is None or cost < best_cost:
                best, best_cost = (mx + dx, my + dy, n > 0), cost
            if cost == 0:
                break
        taken.append(label_box(best[0], best[1], text))
        placed[k] = best
    return [placed[k] for k in range(len(marks))]


class Axis:
    """One axis of a panel: data range to pixels, linear or logarithmic."""

    def __init__(self, lo: float, hi: float, start: float, length: float, log: bool, flip: bool = False) -> None:
        self.log = log and lo > 0
        self.lo, self.hi = (math.log10(lo), math.log10(hi)) if self.log else (lo, hi)
        self.start, self.length, self.flip = start, length, flip

    def __call__(self, v: float) -> float:
        v = math.log10(max(v, 10**self.lo)) if self.log else v
        share = (v - self.lo) / (self.hi - self.lo) if self.hi > self.lo else 0.5
        return self.start + self.length * (1 - share if self.flip else share)


def value_range(values: list[float], log: bool, pad: float = 0.08) -> tuple[float, float]:
    """A range around values that does not start at 0 when they do not: on a log axis, padded in ratio."""
    lo, hi = min(values), max(values)
    if log:
        return lo / (1 + 4 * pad), hi * (1 + 4 * pad)
    span = (hi - lo) or abs(hi) or 1.0
    return lo - pad * span, hi + pad * span


def wants_log(values: list[float]) -> bool:
    positive = [v for v in values if v > 0]
    return len(positive) == len(values) and bool(positive) and max(positive) > 10 * min(positive)


SVG_LEGEND_GAP = 20  # px between two legend entries on a line


def legend_layout(widths: list[float], left: float, right: float) -> list[tuple[float, int]]:
    """(x, row) of each legend entry, left to right, a new row when the next would pass right: ([100, 100], 0, 150) ->
    [(0, 0), (0, 1)]."""
    placed, x, row = [], left, 0
    for w in widths:
        if x > left and x + w > right:
            x, row = left, row + 1
        placed.append((x, row))
        x += w + SVG_LEGEND_GAP
    return placed


@dataclass(slots=True, frozen=True)
class Point:
    """One mark of a panel."""

    format: str  # its marker and colour (format_style), unless style says otherwise
    x: float
    y: float
    data: dict[str, object]  # its data- attributes, in this order: what a reader of the SVG can pick up
    label: str = ""  # shown beside it ("" none)
    low: float | None = None  # its whisker's ends, in y
    high: float | None = None
    filled: bool = False
    style: tuple[str, str, str] | None = None  # (marker, dash, colour), where marks stand for models


@dataclass(slots=True, frozen=True)
class Line:
    format: str
    points: Sequence[tuple[float, float]]


@dataclass(slots=True, frozen=True)
class Panel:
    """One chart of svg_chart's grid."""

    title: str
    x_label: str
    y_label: str
    x: tuple[float, float, bool] | list[tuple[int, str]]  # (lo, hi, log), or categories [(x, label)]
    y: tuple[float, float, bool]
    points: list[Point]
    lines: list[Line] = field(default_factory=list)
    vline: tuple[float, str] | None = None  # (value, label): a limit across the panel
    hline: tuple[float, str] | None = None


def svg_chart(title: str, panels: list[Panel], legend: Sequence[LegendEntry], caption: str) -> str:
    """Panels in a grid of SVG_COLUMNS. legend: [(format, what it stands for)], or [(name, what, style)] where marks
    are styled by something else than the format (a model): style is (marker, dash, colour)."""
    w, h = SVG_PANEL
    gap_x, gap_y = SVG_GAP
    columns = min(len(panels), SVG_COLUMNS) or 1
    rows = math.ceil(len(panels) / columns) or 1
    entries: list[tuple[str, *tuple[object, ...]]] = [(f"{fmt}{what}", *rest) for fmt, what, *rest in legend]
    widest = max((30 + text_width(text) for text, *_ in entries), default=0)
    # a long name widens the canvas
    width = max(columns * (w + gap_x) + 40, gap_x + widest + 10, gap_x + text_width(title, 14) + 10)
    placed = legend_layout([30 + text_width(text) for text, *_ in entries], gap_x, width - 10)
    legend_rows = (placed[-1][1] + 1 if placed else 0) + 1
    notes = textwrap.wrap(caption, max(20, int((width - gap_x - 10) / (CHAR_EM * 10))), break_long_words=False) or [""]
    height = 40 + rows * (h + gap_y) + 16 * legend_rows + 14 * len(notes) + 10
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        _svg_text(gap_x, 22, title, size=14),
    ]
    for k, panel in enumerate(panels):
        left, top = gap_x + (k % columns) * (w + gap_x), 40 + 30 + (k // columns) * (h + gap_y)
        out += _svg_panel(panel, left, top, w, h)
    y = 40 + rows * (h + gap_y) + 4
    for (fmt, what, *style), (x, row) in zip(legend, placed):
        yy = y + 16 * row
        marker, dash, colour = style[0] if style else format_style(fmt)
        out.append(
            f'<line x1="{x:.1f}" y1="{yy - 4:.1f}" x2="{x + 24:.1f}" y2="{yy - 4:.1f}" '
            f'stroke="{colour}" stroke-width="1.5"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>"
        )
        out.append(
            _marker(marker, x + 12, yy - 4, colour, True, 'data-legend="1"', 4).replace(
                'class="mark"', 'class="legend-mark"'
            )
        )
        out.append(_svg_text(x + 30, yy, f"{fmt}{what}", size=10, cls="legend"))
    out += [_svg_text(gap_x, height - 8 - 14 * (len(notes) - 1 - k), line, size=10) for k, line in enumerate(notes)]
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_guides(
    panel: Panel, px: Axis, py: Axis, left: float, top: float, w: float, h: float, out: list[str]
) -> list[tuple[float, float, float, float]]:
    """A panel's vertical and horizontal guide lines (a budget, the baseline's rate) with their labels, into out;
    the boxes their labels take, which no point label may cover."""
    taken = []
    for name, line in (("vline", panel.vline), ("hline", panel.hline)):
        if not line:
            continue
        value, label = line
        if name == "vline":
            x1 = x2 = px(value)
            y1, y2, tx, ty = top, top + h, px(value) - 4, top + h - 6  # at the foot, where no rate of 1.0 sits
            anchor = "end"
            if tx - text_width(label, 9) < left:  # no room on its left: on its right
                tx, anchor = px(value) + 4 + text_width(label, 9), "end"
        else:
            y1 = y2 = py(value)
            x1, x2, tx, ty = left, left + w, left + w - 4, py(value) - 4
            anchor = "end"
        out.append(
            f'<line class="{name}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="#b00" stroke-dasharray="5,3" data-value="{value}"/>'
        )
        out.append(_svg_text(tx, ty, label, anchor, 9))
        width = text_width(label, 9)
        taken.append((tx - width, ty - 9, tx, ty + 2))
    return taken


def _svg_panel(panel: Panel, left: float, top: float, w: float, h: float) -> list[str]:
    if isinstance(panel.x, list):  # categories
        px = Axis(-0.3, len(panel.x) - 0.7 + 0.6, left, w, False)
        x_ticks = [(float(x), label) for x, label in panel.x]
    else:
        px = Axis(panel.x[0], panel.x[1], left, w, panel.x[2])
        x_ticks = [(t, _tick_label(t)) for t in nice_ticks(panel.x[0], panel.x[1], log=px.log)]
    py = Axis(panel.y[0], panel.y[1], top, h, panel.y[2], flip=True)
    out = [
        f'<g class="panel" data-title="{panel.title}" data-x-log="{px.log}" data-y-log="{py.log}">',
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="black"/>',
        _svg_text(left, top - 26, panel.title, size=12),
        _svg_text(left, top - 10, f"y: {panel.y_label}", size=10),
        _svg_text(left + w / 2, top + h + 36, panel.x_label, "middle"),
    ]
    for x, label in x_ticks:
        out.append(f'<line x1="{px(x):.1f}" y1="{top + h}" x2="{px(x):.1f}" y2="{top + h + 4}" stroke="black"/>')
        out.append(_svg_text(px(x), top + h + 16, label, "middle", 10, "tick"))
    for t in nice_ticks(panel.y[0], panel.y[1], log=py.log):
        out.append(f'<line x1="{left - 4}" y1="{py(t):.1f}" x2="{left}" y2="{py(t):.1f}" stroke="black"/>')
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + w}" y2="{py(t):.1f}" stroke="#e6e6e6"/>')
        out.append(_svg_text(left - 7, py(t) + 4, _tick_label(t), "end", 10, "tick"))
    taken = _svg_guides(panel, px, py, left, top, w, h, out)
    for line in panel.lines:
        _, dash, colour = format_style(line.format)
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points)
        out.append(
            f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"'
            + (f' stroke-dasharray="{dash}"' if dash else "")
            + "/>"
        )
    marks, whiskers = [], []
    for p in panel.points:
        x, y = px(p.x), py(p.y)
        marker, _, colour = p.style or format_style(p.format)
        data = " ".join(f'data-{k}="{v}"' for k, v in p.data.items())
        if p.low is not None and p.high is not None:
            low, high = py(p.low), py(p.high)
            out.append(
                f'<line class="whisker" x1="{x:.1f}" y1="{low:.1f}" x2="{x:.1f}" y2="{high:.1f}" '
                f'stroke="{colour}" {data}/>'
            )
            whiskers.append((x - 2, min(low, high), x + 2, max(low, high)))  # no label across it
        out.append(_marker(marker, x, y, colour, p.filled, data))
        if p.label:
            marks.append((x, y, p.label))
    for (mx, my, text), (lx, ly, moved) in zip(
        marks, place_labels(marks, (left, top, left + w, top + h), taken, whiskers)
    ):
        if moved:
            out.append(
                f'<line class="leader" x1="{mx:.1f}" y1="{my:.1f}" x2="{lx if lx > mx else lx + text_width(text):.1f}" '
                f'y2="{ly - 4:.1f}" stroke="#999" stroke-width="0.8"/>'
            )
        out.append(_svg_text(lx, ly, text, size=LABEL_SIZE, cls="label"))
    out.append("</g>")
    return out


def _whisker(e: Aggregate) -> tuple[float, float]:
    """The ends of a mark's whisker: path exact's 95% interval over questions (none for one question)."""
    figure = e.metrics.path_exact
    low, high = figure.ci95 or (figure.rate, figure.rate)
    return cast(float, low), cast(float, high)


def results_svg(
    table: list[Aggregate],
    baseline: str,
    gate: Sequence[Verdict] | None = None,
    context_window: int | None = None,
) -> str:
    """Prompt tokens against path exact per format, one panel per group (encoding, size, ids, mode), each mark
    labelled with the gate's verdict; a line at the context window when prompts reach it."""
    verdict = {(group_key(v), v.format): v.verdict for v in gate or []}
    groups: dict[GroupKey, list[Aggregate]] = {}
    for e in table:
        if e.prompt_tokens is not None and e.metrics.path_exact.rate is not None:
            groups.setdefault(group_key(e), []).append(e)
    panels: list[Panel] = []
    for group, entries in groups.items():
        points = []
        for e in entries:
            said = "baseline" if e.format == baseline else verdict.get((group, e.format), "")
            low, high = _whisker(e)
            x, y = cast(float, e.prompt_tokens), cast(float, e.metrics.path_exact.rate)
            data = {"format": e.format, "tokens": x, "rate": y, "low": low, "high": high, "pareto": bool(e.pareto)}
            points.append(
                Point(e.format, x, y, {**data, "verdict": said}, f"{e.format} · {said}", low, high, bool(e.pareto))
            )
        xs = [p.x for p in points]
        reach = context_window is not None and (max(xs) >= 0.8 * context_window or any(e.overflow for e in entries))
        limit = [cast(float, context_window)] if reach else []
        log = wants_log(xs + limit)
        lo, hi = value_range(xs + limit, log)
        vline = (limit[0], f"context window {context_window:,}") if limit else None
        panels.append(
            Panel(
                " · ".join(group),
                f"prompt tokens, mean ({group.encoding})",
                "path exact",
                (lo, hi, log),
                (-0.05, 1.05, False),
                points,
                vline=vline,
            )  # fmt: skip
        )
    legend = [(fmt, " (baseline)" if fmt == baseline else "") for fmt in dict.fromkeys(e.format for e in table)]
    return svg_chart(
        "Prompt tokens against path exact match",
        panels,
        legend,
        "filled: on the Pareto front; hollow: not on it; label: the gate's verdict against the baseline; whiskers: 95% "
        "interval",
    )


def size_report_svg(summary: list[SizeSummary], plan: Plan) -> str:
    """Mode A prompt tokens per format across sizes (with the context window where they reach it), and mode B's
    answerable share of positive questions, per encoding and ids."""
    panels: list[Panel] = []
    for encoding in [t.name for t in plan.tokenizers]:
        for ids in plan.ids:
            for mode, metric, label in (
                ("A", "prompt_tokens", f"prompt tokens, mean ({encoding})"),
                ("B", "answerable", "answerable (share of all questions)"),
            ):
                mine = [
                    e for e in summary if (e.encoding, e.ids, e.mode) == (encoding, ids, mode) and getattr(e, metric)
                ]
                if not mine:
                    continue
                points, lines = [], []
                for fmt in plan.formats:
                    series = [(plan.sizes.index(e.size), getattr(e, metric).mean) for e in mine if e.format == fmt]
                    lines.append(Line(fmt, series))
                    points += [
                        Point(
                            fmt,
                            x,
                            y,
                            {"format": fmt, "size": plan.sizes[x], metric.replace("_", "-"): y},
                            fmt if x == len(plan.sizes) - 1 else "",
                        )  # fmt: skip
                        for x, y in series
                    ]
                ys = [p.y for p in points]
                reach = mode == "A" and (max(ys) >= 0.8 * plan.context_window or any(e.overflow for e in mine))
                log = mode == "A" and wants_log(ys + ([plan.context_window] if reach else []))
                y_range = (
                    (-0.05, 1.05, False)
                    if mode == "B"
                    else (*value_range(ys + ([plan.context_window] if reach else []), log), log)
                )
                hline = (plan.context_window, f"context window {plan.context_window:,}") if reach else None
                panels.append(
                    Panel(
                        f"{encoding} · {ids} · mode {mode}",
                        "graph size",
                        label,
                        list(enumerate(plan.sizes)),
                        y_range,
                        points,
                        lines,
                        hline=hline,
                    )  # fmt: skip
                )
    modes = {p.title.rsplit(" ", 1)[-1] for p in panels}
    caption = "one line per format, labelled at its last size; mode A: every edge" + (
        "; mode B: packed into --budget, answerable share" if "B" in modes else ""
    )
    return svg_chart(
        "Prompt tokens and answerable share across graph sizes", panels, [(fmt, "") for fmt in plan.formats], caption
    )


def model_style(k: int) -> tuple[str, str, str]:
    """(marker, dash, colour) of the k-th model of a comparison."""
    return FORMAT_MARKERS[k % len(FORMAT_MARKERS)], "", FORMAT_COLOURS[k % len(FORMAT_COLOURS)]
