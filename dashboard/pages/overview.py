"""The overview: today's and this week's calls, what waits on the team, and calls per day by outcome.

Everything is aggregated in SQL by `calls.selectors` (a constant number of queries whatever the data size);
this module only shapes the numbers, and draws the chart as server-side SVG (no script, shows in screenshots).
Days are the organization's local days: they start at its local midnight, whatever the DST offset that day.
"""

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django import forms
from django.utils import timezone
from django.views.generic import TemplateView

from calls import selectors

from ..forms import DashboardForm
from ..mixins import OrgMixin

CHART_DAYS = (14, 30)

# Known outcomes get stable colours; any other outcome takes the next colour of the spare palette.
OUTCOME_COLOURS = {
    "order": "#3b5bdb",
    "booking": "#1f9d63",
    "message": "#8e44ad",
    "callback": "#e08a00",
    "escalation": "#c0362c",
    "info": "#159aa8",
    "order_canceled": "#7d8fdc",
    "spam": "#9aa3af",
    "wrong_number": "#c4cad3",
}
SPARE_COLOURS = ("#d6336c", "#5c940d", "#a61e4d", "#364fc7", "#e67700", "#495057")
MAX_SERIES = 7  # more outcomes than this are drawn together as "Other"
NO_OUTCOME = "(none)"

# Chart geometry, in SVG user units (the SVG scales to its container through its viewBox).
WIDTH, HEIGHT = 720, 240
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 36, 8, 10, 26


class ChartRangeForm(DashboardForm):
    days = forms.TypedChoiceField(
        label="Days shown", choices=[(d, f"{d} days") for d in CHART_DAYS], coerce=int, required=False
    )


def outcome_label(outcome: str | None) -> str:
    return outcome.replace("_", " ").capitalize() if outcome else NO_OUTCOME


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    title: str


def _nice_max(value: int) -> int:
    """A round top for the y axis (>= value), so the four grid lines get whole, readable numbers."""
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000):
        if value <= step * 4:
            return step * 4
    return ((value // 4000) + 1) * 4000


def build_chart(rows: list[dict], *, days: int, today) -> dict:
    """Stacked bars per day by outcome, plus per-day and overall average scores, from `calls_per_day` rows."""
    first_day = today - timedelta(days=days - 1)
    day_list = [first_day + timedelta(days=i) for i in range(days)]
    totals_by_outcome: dict[str, int] = {}
    for row in rows:
        key = row["outcome"] or NO_OUTCOME
        totals_by_outcome[key] = totals_by_outcome.get(key, 0) + row["calls"]
    ordered = sorted(totals_by_outcome, key=lambda o: (-totals_by_outcome[o], o))
    shown = ordered if len(ordered) <= MAX_SERIES else ordered[: MAX_SERIES - 1]
    spare = iter(SPARE_COLOURS * 3)
    series = [{"key": o, "label": outcome_label(o if o != NO_OUTCOME else None),
               "colour": OUTCOME_COLOURS.get(o) or next(spare), "total": totals_by_outcome[o]} for o in shown]
    if len(shown) < len(ordered):
        series.append({"key": "__other__", "label": "Other", "colour": "#6c757d",
                       "total": sum(totals_by_outcome[o] for o in ordered[len(shown):])})
    series_key = {s["key"]: s for s in series}

    grid = {d: {} for d in day_list}
    score_sum = {d: 0 for d in day_list}
    scored = {d: 0 for d in day_list}
    for row in rows:
        if row["day"] not in grid:
            continue
        key = row["outcome"] or NO_OUTCOME
        key = key if key in series_key else "__other__"
        grid[row["day"]][key] = grid[row["day"]].get(key, 0) + row["calls"]
        score_sum[row["day"]] += row["score_sum"] or 0
        scored[row["day"]] += row["scored"]

    per_day = [sum(grid[d].values()) for d in day_list]
    top = _nice_max(max(per_day, default=0) or 1)
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM
    slot = plot_w / days
    bar_w = slot * 0.68
    bars: list[Bar] = []
    labels = []
    label_every = 1 if days <= 14 else 3
    for i, day in enumerate(day_list):
        x = PAD_LEFT + i * slot + (slot - bar_w) / 2
        y = PAD_TOP + plot_h
        for s in series:
            n = grid[day].get(s["key"], 0)
            if not n:
                continue
            h = plot_h * n / top
            y -= h
            bars.append(Bar(round(x, 2), round(y, 2), round(bar_w, 2), round(h, 2), s["colour"],
                            f"{day:%b %-d}: {n} {s['label'].lower()}"))
        if (days - 1 - i) % label_every == 0:
            labels.append({"x": round(x + bar_w / 2, 2), "text": f"{day:%b %-d}"})
    gridlines = [{"y": round(PAD_TOP + plot_h - plot_h * k / 4, 2), "value": top * k // 4} for k in range(5)]
    table = [
        {"day": d, "total": per_day[i], "by_series": [grid[d].get(s["key"], 0) for s in series],
         "score": round(score_sum[d] / scored[d]) if scored[d] else None}
        for i, d in enumerate(day_list)
    ]
    all_scored = sum(scored.values())
    return {
        "days": days, "width": WIDTH, "height": HEIGHT, "bars": bars, "series": series, "gridlines": gridlines,
        "labels": labels, "axis_x": PAD_LEFT, "axis_right": WIDTH - PAD_RIGHT, "label_y": HEIGHT - 8,
        "total": sum(per_day), "table": table,
        "average_score": round(sum(score_sum.values()) / all_scored) if all_scored else None,
        "scored_calls": all_scored,
    }


def day_starts(now: datetime, zone, *, days: int) -> tuple:
    """(today, its start, the start of the week, the start of the chart's first day): local midnights in `zone`.

    Aware arithmetic within one zone moves the wall clock, so N days back is local midnight even across a DST
    change (then that day is 23 or 25 hours long)."""
    today = now.astimezone(zone).date()
    today_start = datetime.combine(today, time.min, tzinfo=zone)
    week_start = today_start - timedelta(days=today.weekday())  # weeks start on Monday
    return today, today_start, week_start, today_start - timedelta(days=days - 1)


class OverviewView(OrgMixin, TemplateView):
    """The org's day at a glance. Every member sees it."""

    template_name = "dashboard/overview/overview.html"

    def get_context_data(self, **kwargs):
        range_form = ChartRangeForm(self.request.GET or None)
        days = CHART_DAYS[0]
        if range_form.is_bound and range_form.is_valid() and range_form.cleaned_data["days"]:
            days = range_form.cleaned_data["days"]
        today, today_start, week_start, chart_since = day_starts(timezone.now(), self.org.zone, days=days)
        counts = selectors.call_overview(org=self.org, today_start=today_start, week_start=week_start)
        chart = build_chart(selectors.calls_per_day(org=self.org, since=chart_since), days=days, today=today)
        outcomes = [{**row, "label": outcome_label(row["outcome"])} for row in counts["outcomes"]]
        return super().get_context_data(
            range_form=range_form, days=days, chart_days=CHART_DAYS, counts=counts, outcomes=outcomes,
            orders_waiting=counts["orders"]["new"] + counts["orders"]["in_progress"], chart=chart,
            today=today, week_start=week_start.date(), **kwargs,
        )
