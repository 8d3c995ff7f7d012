"""Server-side SVG charts: readable without JavaScript, scaled to any screen by their viewBox.

Every text drawn comes from user data (team names, labels) and is XML-escaped here.
"""

import math
from datetime import UTC, datetime, timedelta
from html import escape

from markupsafe import Markup

# Ten colours told apart by most colour-blind readers (Okabe-Ito plus two from Tol's palette).
PALETTE = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
    "#56B4E9", "#F0E442", "#000000", "#882255", "#44AA99",
]  # fmt: skip

Series = dict[str, list[tuple[datetime, float]]]


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi == lo:
        return [lo]
    step = (hi - lo) / (count - 1)
    return [lo + i * step for i in range(count)]


def _fmt(value: float, span: float) -> str:
    if span == 0:
        return f"{value:.4g}"
    digits = max(0, min(6, 2 - math.floor(math.log10(span))))
    return f"{value:.{digits}f}"


def score_over_time(
    series: Series, *, maximize: bool, metric: str, end: datetime | None = None
) -> Markup:
    """Step lines of each team's best score so far; the legend is drawn by the page."""
    # A small canvas: scaled to a phone's width its 13-unit text stays legible.
    width, height = 560, 320
    right, top, bottom = 14, 30, 52
    points = [p for values in series.values() for p in values]
    if not points:
        return Markup("")
    times = [t for t, _ in points]
    start = min(times)
    stop = max(max(times), end or max(times))
    if stop - start < timedelta(minutes=1):
        stop = start + timedelta(minutes=1)
    values = [v for _, v in points]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 0.05
    lo, hi = lo - pad, hi + pad
    ticks = [(v, _fmt(v, hi - lo)) for v in _ticks(lo, hi)]
    # The plot starts right of its widest tick label (about 7.5 units a character at 13), so a
    # label never runs into the axis; the axis's title is written above the plot, not beside it.
    left = max(40, 12 + math.ceil(7.5 * max(len(label) for _, label in ticks)))
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(t: datetime) -> float:
        return left + plot_w * (t - start) / (stop - start)

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Best public {escape(metric)} over time for the top teams" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="18" class="chart-note">'
        f"{'↑ higher' if maximize else '↓ lower'} is better</text>",
    ]
    for v, label in ticks:
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{label}</text>'
        )
    span = stop - start
    moments = [start + span * i / 4 for i in range(5)]
    for i, (t, label) in enumerate(zip(moments, _time_labels(moments, span), strict=True)):
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        out.append(
            f'<text x="{x(t):.1f}" y="{height - bottom + 18}" text-anchor="{anchor}">{label}</text>'
        )
    out.append(
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}" class="axis"/>'
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" class="axis"/>'
        f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle" class="axis-title">'
        "Submission time (UTC)</text>"
        f'<text x="{width - right}" y="18" text-anchor="end" class="axis-title">'
        f"Best public {escape(metric)}</text>"
    )
    for i, (team, values_) in enumerate(series.items()):
        colour = PALETTE[i % len(PALETTE)]
        path, last = [], None
        for t, v in values_:
            if last is None:
                path.append(f"M{x(t):.1f},{y(v):.1f}")
            else:
                path.append(f"H{x(t):.1f}V{y(v):.1f}")
            last = v
        path.append(f"H{x(stop):.1f}")
        out.append(
            f'<path d="{"".join(path)}" fill="none" stroke="{colour}" stroke-width="2.2">'
            f"<title>{escape(team)}</title></path>"
        )
        for t, v in values_:
            out.append(
                f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                f"<title>{escape(team)}: {v:.6g} at {t.astimezone(UTC):%Y-%m-%d %H:%M} UTC</title>"
                "</circle>"
            )
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704 - every user string above is escaped


def _time_labels(moments: list[datetime], span: timedelta) -> list[str]:
    """The time axis's labels in the coarsest format that tells every one apart: a short span
    gets seconds rather than one minute written five times."""
    formats = ["%b %d", "%b %d %H:%M"] if span >= timedelta(days=2) else ["%H:%M", "%H:%M:%S"]
    for fmt in formats:
        labels = [t.astimezone(UTC).strftime(fmt) for t in moments]
        if len(set(labels)) == len(labels):
            return labels
    return labels


def confusion_heatmap(labels: list[str], matrix: list[list[int]]) -> Markup:
    """Rows are true labels, columns predicted; a cell's shade is its share of its row."""
    n = len(labels)
    if n == 0:
        return Markup("")
    cell = max(28, min(60, 480 // n))
    margin_left, margin_top = 110, 90
    width, height = margin_left + n * cell + 10, margin_top + n * cell + 10
    out = [
        f'<svg class="heatmap" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="Confusion matrix" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{margin_left + n * cell / 2}" y="14" text-anchor="middle" class="axis-title">'
        "Predicted label</text>",
        f'<text transform="translate(14 {margin_top + n * cell / 2}) rotate(-90)" '
        'text-anchor="middle" class="axis-title">True label</text>',
    ]
    for j, label in enumerate(labels):
        cx = margin_left + j * cell + cell / 2
        out.append(
            f'<text transform="translate({cx:.1f} {margin_top - 6}) rotate(-45)" '
            f'text-anchor="start">{escape(str(label)[:14])}</text>'
        )
    for i, label in enumerate(labels):
        row = matrix[i]
        total = sum(row) or 1
        cy = margin_top + i * cell
        out.append(
            f'<text x="{margin_left - 6}" y="{cy + cell / 2 + 4:.1f}" text-anchor="end">'
            f"{escape(str(label)[:14])}</text>"
        )
        for j, count in enumerate(row):
            share = count / total
            # Correct cells in blue, errors in orange: mistakes stand out at a glance.
            hue = "0, 114, 178" if i == j else "213, 94, 0"
            ink = "#fff" if share > 0.55 else "#1d232a"
            out.append(
                f'<rect x="{margin_left + j * cell}" y="{cy}" width="{cell}" height="{cell}" '
                f'fill="rgba({hue}, {0.08 + 0.92 * share:.3f})" stroke="#fff">'
                f"<title>true {escape(str(label))}, predicted {escape(str(labels[j]))}: "
                f"{count} ({share:.0%} of the row)</title></rect>"
                f'<text x="{margin_left + j * cell + cell / 2}" y="{cy + cell / 2 + 4:.1f}" '
                f'text-anchor="middle" fill="{ink}">{count}</text>'
            )
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704 - labels are escaped above


def rating_over_episodes(points: list[tuple[int, float, float]], *, k: float) -> Markup:
    """An agent's skill after each rated episode: μ as a line, μ ± σ as a band around it, and
    the board's conservative skill μ − kσ dashed (``points``: episode number, μ, σ)."""
    width, height = 560, 300
    right, top, bottom = 14, 30, 48
    if not points:
        return Markup("")
    lows = [mu - max(sigma, k * sigma) for _, mu, sigma in points]
    highs = [mu + sigma for _, mu, sigma in points]
    lo, hi = min(lows), max(highs)
    pad = (hi - lo) * 0.05 or 1.0
    lo, hi = lo - pad, hi + pad
    ticks = [(v, _fmt(v, hi - lo)) for v in _ticks(lo, hi)]
    left = max(40, 12 + math.ceil(7.5 * max(len(label) for _, label in ticks)))
    plot_w, plot_h = width - left - right, height - top - bottom
    last = max(points[-1][0], 1)

    def x(n: float) -> float:
        return left + plot_w * n / last

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        "aria-label=\"The agent's skill (mu, with mu plus or minus sigma as a band) after each "
        'episode" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="18" class="chart-note">μ ± σ (band), μ − {k:g}σ (dashed)</text>',
    ]
    for v, label in ticks:
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{label}</text>'
        )
    for i in range(5):
        n = last * i / 4
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        out.append(
            f'<text x="{x(n):.1f}" y="{height - bottom + 18}" text-anchor="{anchor}">{n:.0f}</text>'
        )
    out.append(
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}" class="axis"/>'
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" class="axis"/>'
        f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle" class="axis-title">'
        "Episodes played</text>"
    )
    upper = [f"{x(n):.1f},{y(mu + sigma):.1f}" for n, mu, sigma in points]
    lower = [f"{x(n):.1f},{y(mu - sigma):.1f}" for n, mu, sigma in reversed(points)]
    colour = PALETTE[0]
    out.append(
        f'<polygon points="{" ".join(upper + lower)}" fill="{colour}" fill-opacity="0.18" '
        'stroke="none"><title>μ ± σ</title></polygon>'
    )
    conservative = " ".join(f"{x(n):.1f},{y(mu - k * sigma):.1f}" for n, mu, sigma in points)
    out.append(
        f'<polyline points="{conservative}" fill="none" stroke="{PALETTE[1]}" stroke-width="1.6" '
        f'stroke-dasharray="5 4"><title>μ − {k:g}σ</title></polyline>'
    )
    line = " ".join(f"{x(n):.1f},{y(mu):.1f}" for n, mu, _ in points)
    out.append(
        f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2.2">'
        "<title>μ</title></polyline>"
    )
    if len(points) <= 200:  # a point per episode to hover; past that the line says enough
        for n, mu, sigma in points:
            out.append(
                f'<circle cx="{x(n):.1f}" cy="{y(mu):.1f}" r="2.5" fill="{colour}">'
                f"<title>after {n} episode{'' if n == 1 else 's'}: μ {mu:.2f} ± {sigma:.2f}"
                "</title></circle>"
            )
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704 - numbers only, no user text
