"""The dashboard's charts as data: the series (moving averages replayed, weights set on chain) and
the geometry of each SVG line chart, which ``templates/chart.html`` draws.

Nothing here writes markup: the template does, with autoescape on, so a label a miner chose (its
hotkey) reaches the page escaped like everything else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from subnet.validator.state import update_moving_average

CHART_WIDTH = 640
CHART_HEIGHT = 260
CHART_MARGIN = (16, 16, 34, 48)  # top, right, bottom, left
COLOURS = 8  # the stylesheet's series classes s0..s7


@dataclass(frozen=True)
class Series:
    label: str
    points: list[tuple[float, float]]


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    x_label: str
    y_max: float
    series: list[Series]
    x_ticks: list[tuple[float, str]] = field(default_factory=list)


# -- the moving average, replayed -------------------------------------------------------------


def replay_moving_averages(
    round_means: Sequence[float], *, alpha: float, final: float, complete: bool
) -> list[float]:
    """A hotkey's moving average after each of its rounds in ``round_means`` (oldest first).

    ``complete``: the rounds are the hotkey's whole history, so the average is
    replayed forward from 0 exactly as the validator folds rounds in. Otherwise
    the window starts mid-history and the values are recovered backwards from
    the stored ``final`` average (the one after the last round), inverting
    ``m = alpha * x + (1 - alpha) * previous``; a changed ``--scoring.alpha``
    makes that approximate, so values are kept within [0, 1].
    """
    if not round_means:
        return []
    if complete:
        values: list[float] = []
        average = 0.0
        for mean in round_means:
            average = update_moving_average(average, mean, alpha)
            values.append(average)
        return values
    if alpha >= 1.0:  # no memory: the average is the round's mean
        return [*round_means[:-1], final]
    backwards = [final]
    for mean in reversed(round_means[1:]):
        previous = (backwards[-1] - alpha * mean) / (1.0 - alpha)
        backwards.append(min(max(previous, 0.0), 1.0))
    return backwards[::-1]


def ends(values: Sequence[int]) -> list[int]:
    """The first and the last of ``values`` (once when they are the same): where the x axis is labelled."""
    if not values:
        return []
    return sorted({values[0], values[-1]})


def moving_average_chart(rounds: Sequence[tuple[int, int]], series: list[Series]) -> Chart:
    """The moving averages by round; ``rounds`` are the window's (id, number), oldest first."""
    ticks = [(float(number), f"round {number}") for number in ends([number for _, number in rounds])]
    return Chart(
        key="moving-averages",
        title="Moving average by round",
        x_label="round",
        y_max=1.0,
        series=series,
        x_ticks=ticks,
    )


def weight_chart(accepted: Sequence[tuple[int | None, Mapping[str, float]]], hotkeys: Sequence[str]) -> Chart:
    """The weights the chain took, oldest first: ``accepted`` is (block, weight per hotkey) per
    submission; a line for each of ``hotkeys`` that ever had weight."""
    series = []
    if accepted:
        for hotkey in hotkeys:
            points = [(float(index), weights.get(hotkey, 0.0)) for index, (_, weights) in enumerate(accepted)]
            if any(value > 0.0 for _, value in points):
                series.append(Series(label=hotkey, points=points))
    highest = max((value for line in series for _, value in line.points), default=0.0)
    ticks = []
    for index in ends(list(range(len(accepted)))):
        block = accepted[index][0]
        ticks.append((float(index), f"block {block}" if block is not None else f"#{index + 1}"))
    return Chart(
        key="weights",
        title="Weights set on chain",
        x_label="submission",
        y_max=nice_ceiling(highest),
        series=series,
        x_ticks=ticks,
    )


def nice_ceiling(value: float) -> float:
    for step in (0.05, 0.1, 0.2, 0.25, 0.5):
        if value <= step:
            return step
    return 1.0


# -- geometry: what the template draws ----------------------------------------------------------


@dataclass(frozen=True)
class GridLine:
    y: str  # the line's and its label's height, in the SVG's units
    label_y: str
    label: str


@dataclass(frozen=True)
class Tick:
    x: str
    label: str
    anchor: str  # text-anchor: labels at the plot's edges grow inwards


@dataclass(frozen=True)
class Dot:
    cx: str
    cy: str
    title: str


@dataclass(frozen=True)
class Line:
    label: str
    colour: str  # the stylesheet's class, s0..s7
    points: str  # the polyline's points attribute
    dots: list[Dot]


@dataclass(frozen=True)
class Plot:
    """One chart laid out in a ``CHART_WIDTH`` x ``CHART_HEIGHT`` box (empty ``lines``: nothing to draw)."""

    key: str
    title: str
    width: int
    height: int
    left: int
    right_edge: int  # where the grid lines end
    tick_y: int
    grid: list[GridLine]
    ticks: list[Tick]
    lines: list[Line]


def plot(chart: Chart) -> Plot:
    """``chart`` laid out: the value grid, the x labels, and each series as a line with its dots."""
    top, right, bottom, left = CHART_MARGIN
    plot_w, plot_h = CHART_WIDTH - left - right, CHART_HEIGHT - top - bottom
    empty = Plot(chart.key, chart.title, CHART_WIDTH, CHART_HEIGHT, left, left + plot_w, 0, [], [], [])
    if not chart.series:
        return empty
    xs = [x for line in chart.series for x, _ in line.points] + [x for x, _ in chart.x_ticks]
    x_min, x_max = min(xs), max(xs)
    x_span = (x_max - x_min) or 1.0

    def px(x: float) -> float:
        return left + (x - x_min) / x_span * plot_w if x_max > x_min else left + plot_w / 2

    def py(y: float) -> float:
        return top + plot_h - min(max(y, 0.0), chart.y_max) / chart.y_max * plot_h

    grid = []
    for step in range(5):
        y = chart.y_max * step / 4
        grid.append(GridLine(y=f"{py(y):.1f}", label_y=f"{py(y) + 4:.1f}", label=f"{y:g}"))
    ticks = []
    for x, label in chart.x_ticks:
        anchor = (
            "start" if px(x) < left + plot_w / 3 else "end" if px(x) > left + 2 * plot_w / 3 else "middle"
        )
        ticks.append(Tick(x=f"{px(x):.1f}", label=label, anchor=anchor))
    lines = [
        Line(
            label=line.label,
            colour=f"s{index % COLOURS}",
            points=" ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points),
            dots=[Dot(f"{px(x):.1f}", f"{py(y):.1f}", f"{line.label}: {y:.3f}") for x, y in line.points],
        )
        for index, line in enumerate(chart.series)
    ]
    return Plot(
        chart.key,
        chart.title,
        CHART_WIDTH,
        CHART_HEIGHT,
        left,
        left + plot_w,
        CHART_HEIGHT - 10,
        grid,
        ticks,
        lines,
    )
