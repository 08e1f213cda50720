"""Small-multiple log-log line charts drawn with Pillow (matplotlib is not a dependency).

Each :class:`Panel` plots a few series of (size, cost) points on log axes, with
decade gridlines, the measured sizes as x ticks and a legend below the axes
(so it never hides a line); :func:`draw`
lays panels out in a grid and writes one PNG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

PANEL_W, PANEL_H = 420, 390
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 62, 14, 34, 104
LEGEND_COLUMNS, LEGEND_ROW = 2, 16
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")
MARKERS = ("circle", "square", "triangle", "diamond", "circle", "square")


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]


@dataclass
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)

    def add(self, label: str, points: list[tuple[float, float]]) -> None:
        """Add a series if it has any positive point (log axes cannot show the rest)."""
        kept = sorted((x, y) for x, y in points if x > 0 and y > 0)
        if kept:
            self.series.append(Series(label, kept))


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _short(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def _marker(draw: ImageDraw.ImageDraw, kind: str, x: float, y: float, color: str) -> None:
    r = 4
    if kind == "circle":
        draw.ellipse((x - r, y - r, x + r, y + r), fill=color)
    elif kind == "square":
        draw.rectangle((x - r, y - r, x + r, y + r), fill=color)
    elif kind == "triangle":
        draw.polygon([(x, y - r - 1), (x - r - 1, y + r), (x + r + 1, y + r)], fill=color)
    else:
        draw.polygon([(x, y - r - 1), (x + r + 1, y), (x, y + r + 1), (x - r - 1, y)], fill=color)


def _draw_panel(image: Image.Image, panel: Panel, left: int, top: int) -> None:
    draw = ImageDraw.Draw(image)
    title, small = _font(14), _font(11)
    draw.text((left + MARGIN_L, top + 8), panel.title, fill="black", font=title)
    x0, y0 = left + MARGIN_L, top + MARGIN_T
    x1, y1 = left + PANEL_W - MARGIN_R, top + PANEL_H - MARGIN_B
    draw.rectangle((x0, y0, x1, y1), outline="#444444")
    points = [p for s in panel.series for p in s.points]
    if not points:
        draw.text((x0 + 10, y0 + 10), "no data", fill="gray", font=small)
        return
    xs = sorted({x for x, _ in points})
    lo_x, hi_x = math.log10(xs[0]), math.log10(xs[-1])
    if hi_x - lo_x < 1e-9:
        lo_x, hi_x = lo_x - 0.5, hi_x + 0.5
    pad_x = (hi_x - lo_x) * 0.06
    lo_x, hi_x = lo_x - pad_x, hi_x + pad_x
    lo_y = math.floor(math.log10(min(y for _, y in points)))
    hi_y = math.ceil(math.log10(max(y for _, y in points)))
    if hi_y == lo_y:
        hi_y += 1

    def at(x: float, y: float) -> tuple[float, float]:
        px = x0 + (math.log10(x) - lo_x) / (hi_x - lo_x) * (x1 - x0)
        py = y1 - (math.log10(y) - lo_y) / (hi_y - lo_y) * (y1 - y0)
        return px, py

    for decade in range(lo_y, hi_y + 1):
        _, py = at(xs[0], 10.0**decade)
        draw.line((x0, py, x1, py), fill="#dddddd")
        label = _short(10.0**decade)
        width = draw.textlength(label, font=small)
        draw.text((x0 - width - 5, py - 6), label, fill="black", font=small)
    for x in xs:
        px, _ = at(x, 10.0**lo_y)
        draw.line((px, y0, px, y1), fill="#eeeeee")
        label = _short(x)
        width = draw.textlength(label, font=small)
        draw.text((px - width / 2, y1 + 4), label, fill="black", font=small)
    draw.text((x0 + (x1 - x0) / 2 - 40, y1 + 22), panel.xlabel, fill="black", font=small)
    draw.text((left + 4, y0 - 16), panel.ylabel, fill="black", font=small)
    for index, series in enumerate(panel.series):
        color, marker = COLORS[index % len(COLORS)], MARKERS[index % len(MARKERS)]
        placed = [at(x, y) for x, y in series.points]
        if len(placed) > 1:
            draw.line(placed, fill=color, width=2)
        for px, py in placed:
            _marker(draw, marker, px, py, color)
        row, column = divmod(index, LEGEND_COLUMNS)
        lx = x0 + column * (x1 - x0) / LEGEND_COLUMNS
        ly = y1 + 42 + row * LEGEND_ROW
        _marker(draw, marker, lx + 4, ly + 6, color)
        draw.text((lx + 12, ly), series.label, fill=color, font=small)


def draw(panels: list[Panel], columns: int, path: Path) -> None:
    """Lay ``panels`` out ``columns`` wide and write the PNG to ``path``."""
    rows = math.ceil(len(panels) / columns)
    image = Image.new("RGB", (columns * PANEL_W, rows * PANEL_H), "white")
    for index, panel in enumerate(panels):
        row, column = divmod(index, columns)
        _draw_panel(image, panel, column * PANEL_W, row * PANEL_H)
    image.save(path, optimize=True)
