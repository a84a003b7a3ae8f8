"""SVG charts drawn on the server: bars per business date (trade records received), and bars stacked by
warning code per business date. Each bar is a `<rect>` carrying its date, code and value as data
attributes and a `<title>` (the browser's tooltip), so the numbers are there without JavaScript."""

from __future__ import annotations

import datetime as dt

from hq.dashboard.layout import text

WIDTH, HEIGHT, MARGIN = 760, 180, 28
# Distinguishable colours for warning codes, in order of the codes' names (the legend names each).
PALETTE = ("#4a78b5", "#e07b39", "#5aa469", "#c44e52", "#8172b2", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")


def _frame(label: str, inner: str, first: dt.date | None, last: dt.date | None, top: int) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{text(label)}">'
        f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH}" y2="{HEIGHT - MARGIN}" stroke="#999"/>'
        f'<text x="2" y="12" font-size="11">{top}</text><text x="2" y="{HEIGHT - MARGIN}" font-size="11">0</text>'
        f'<text x="{MARGIN}" y="{HEIGHT - 8}" font-size="11">{first or ""}</text>'
        f'<text x="{WIDTH}" y="{HEIGHT - 8}" font-size="11" text-anchor="end">{last or ""}</text>'
        f"{inner}</svg>"
    )


def _slot(count: int) -> float:
    return (WIDTH - MARGIN) / max(count, 1)


def records_chart(per_date: list[tuple[dt.date, int]]) -> str:
    """One bar per business date: the trade records received (every batch's record_count)."""
    top = max((value for _, value in per_date), default=0) or 1
    slot, plot = _slot(len(per_date)), HEIGHT - 2 * MARGIN
    bars = []
    for index, (date, value) in enumerate(per_date):
        height = plot * value / top
        bars.append(
            f'<rect class="bar" data-date="{date}" data-value="{value}" x="{MARGIN + index * slot + 1:.1f}" '
            f'y="{HEIGHT - MARGIN - height:.1f}" width="{max(slot - 2, 1):.1f}" height="{height:.1f}">'
            f"<title>{date}: {value} trade records</title></rect>"
        )
    first, last = (per_date[0][0], per_date[-1][0]) if per_date else (None, None)
    return _frame("Trade records received per business date", "".join(bars), first, last, top)


def warnings_chart(per_date: list[tuple[dt.date, dict[str, int]]], codes: list[str]) -> str:
    """Bars per business date stacked by warning code, and a legend of the codes with their colours."""
    colour = {code: PALETTE[index % len(PALETTE)] for index, code in enumerate(codes)}
    top = max((sum(counts.values()) for _, counts in per_date), default=0) or 1
    slot, plot = _slot(len(per_date)), HEIGHT - 2 * MARGIN
    bars = []
    for index, (date, counts) in enumerate(per_date):
        base = float(HEIGHT - MARGIN)
        for code, value in counts.items():
            height = plot * value / top
            base -= height
            bars.append(
                f'<rect data-date="{date}" data-code="{text(code)}" data-value="{value}" fill="{colour[code]}" '
                f'x="{MARGIN + index * slot + 1:.1f}" y="{base:.1f}" width="{max(slot - 2, 1):.1f}" '
                f'height="{height:.1f}"><title>{date}: {value} {text(code)}</title></rect>'
            )
    first, last = (per_date[0][0], per_date[-1][0]) if per_date else (None, None)
    svg = _frame("Warnings by code per business date", "".join(bars), first, last, top)
    legend = "".join(
        f'<li data-code="{text(code)}"><svg width="10" height="10"><rect width="10" height="10" '
        f'fill="{colour[code]}"/></svg> {text(code)}</li>'
        for code in codes
    )
    return svg + (f'<ul class="legend">{legend}</ul>' if codes else '<p class="note">No warnings in these dates.</p>')
