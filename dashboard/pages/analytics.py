"""Analytics: the call figures of GET /v1/analytics/calls per location over a chosen range of local days, as
server-side SVG bar charts (the overview's approach: no script) with the numbers behind them, each figure a link to
the calls list filtered to the calls it counts.

Two aggregates from the calls rollup (calls.analytics): per location, and per day for the calls-per-day chart.
"""

import uuid
from datetime import date, timedelta
from urllib.parse import urlencode

from django import forms
from django.urls import reverse
from django.views.generic import TemplateView

from calls import analytics
from orgs.models import Location

from ..forms import DayRangeForm
from ..mixins import OrgMixin
from .overview import _nice_max

NO_LOCATION = "No location"

# (figure, label, the calls list's filters that list the calls it counts, how it is shown)
FIGURES = [
    ("calls", "Calls", {}, "count"),
    ("real_engagements", "Real engagements", {"classification": "real_engagement"}, "count"),
    ("escalation_rate", "Escalation rate", {"disposition": "escalated"}, "percent"),
    ("average_duration_seconds", "Average duration", {}, "duration"),
    ("average_quality_score", "Average quality score", {"scorable": "yes"}, "score"),
    ("bookings", "Bookings", {"booked": "yes"}, "count"),
    ("orders", "Orders", {"outcome": "order"}, "count"),
    ("unanswered_questions", "Unanswered questions", {"unanswered": "yes"}, "count"),
]

# Bar chart geometry, in SVG user units (the SVG scales to its container through its viewBox).
WIDTH, ROW, PAD_LEFT, PAD_RIGHT, PAD_TOP = 480, 26, 150, 70, 6
DAYS_WIDTH, DAYS_HEIGHT, DAYS_PAD_LEFT, DAYS_PAD_BOTTOM = 720, 200, 36, 24


class AnalyticsForm(DayRangeForm):
    location = forms.ModelChoiceField(label="Location", queryset=Location.objects.none(), required=False,
                                      empty_label="All locations")

    def __init__(self, *args, org, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location"].queryset = Location.objects.for_org(org).order_by("name")

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and not self.errors:
            for field, errors in analytics.range_errors(data["since"], data["until"]).items():
                for error in errors:
                    self.add_error(field, error)
        return data


def shown(value, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "percent":
        return f"{value * 100:.1f}%"
    if kind == "duration":
        minutes, seconds = divmod(round(value), 60)
        return f"{minutes}:{seconds:02d}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def calls_link(since, until, location_id, filters: dict) -> str:
    """The calls list of these local days (and location), filtered to the calls a figure counts."""
    params = {"since": since.isoformat(), "until": until.isoformat()}
    if location_id:
        params["location"] = location_id
    return f"{reverse('dashboard:calls')}?{urlencode({**params, **filters})}"


def bar_chart(title: str, rows: list[dict], kind: str) -> dict:
    """Horizontal bars, one per row (`label`, `value`, `link`)."""
    values = [row["value"] or 0 for row in rows]
    top = max(values, default=0)
    if kind == "count":
        top = _nice_max(int(top) or 1)
    elif kind == "percent":
        top = max(top, 0.01)
    top = top or 1
    bars = []
    plot = WIDTH - PAD_LEFT - PAD_RIGHT
    for index, row in enumerate(rows):
        width = plot * (row["value"] or 0) / top
        y = PAD_TOP + index * ROW
        bars.append({"y": y, "width": round(width, 2), "label": row["label"], "text": shown(row["value"], kind),
                     "link": row["link"], "text_x": round(PAD_LEFT + width + 6, 2), "mid": y + ROW / 2 - 2})
    return {"title": title, "bars": bars, "width": WIDTH, "height": PAD_TOP * 2 + ROW * len(rows),
            "pad_left": PAD_LEFT, "bar_height": ROW - 8}


def days_chart(per_day: dict, org) -> dict:
    """Calls per local day over the range, as bars, each a link to that day's calls."""
    buckets = per_day["buckets"]
    top = _nice_max(max((b["calls"] for b in buckets), default=0) or 1)
    plot_w, plot_h = DAYS_WIDTH - DAYS_PAD_LEFT - 8, DAYS_HEIGHT - 10 - DAYS_PAD_BOTTOM
    slot = plot_w / max(len(buckets), 1)
    every = max(1, len(buckets) // 10)
    bars, labels = [], []
    for index, bucket in enumerate(buckets):
        day = date.fromisoformat(bucket["key"])
        height = plot_h * bucket["calls"] / top
        x = DAYS_PAD_LEFT + index * slot + slot * 0.16
        bars.append({"x": round(x, 2), "y": round(10 + plot_h - height, 2), "width": round(slot * 0.68, 2),
                     "height": round(height, 2), "title": f"{day:%b %-d}: {bucket['calls']} calls",
                     "link": calls_link(day, day, None, {})})
        if (len(buckets) - 1 - index) % every == 0:
            labels.append({"x": round(x + slot * 0.34, 2), "text": f"{day:%b %-d}"})
    gridlines = [{"y": round(10 + plot_h - plot_h * k / 4, 2), "value": top * k // 4} for k in range(5)]
    return {"width": DAYS_WIDTH, "height": DAYS_HEIGHT, "bars": bars, "labels": labels, "gridlines": gridlines,
            "axis_x": DAYS_PAD_LEFT, "axis_right": DAYS_WIDTH - 8, "label_y": DAYS_HEIGHT - 6}


class AnalyticsView(OrgMixin, TemplateView):
    """Every member reads it; a member limited to locations sees those locations' calls only (the org's scope)."""

    template_name = "dashboard/analytics/analytics.html"

    def get_context_data(self, **kwargs):
        form = AnalyticsForm(self.request.GET or None, org=self.org)
        until = analytics.local_today(self.org)
        since, location = analytics.default_since(until), None
        if form.is_bound and form.is_valid():
            until = form.cleaned_data.get("until") or until
            since = form.cleaned_data.get("since") or analytics.default_since(until)
            location = form.cleaned_data.get("location")
            if since > until or analytics.range_errors(since, until):
                since = analytics.default_since(until)
        location_ids = [location.pk] if location else None
        per_location = analytics.call_analytics(org=self.org, since=since, until=until, group_by="location",
                                                location_ids=location_ids)
        per_day = analytics.call_analytics(org=self.org, since=since, until=until, group_by="day",
                                           location_ids=location_ids)
        names = dict(Location.objects.for_org(self.org).values_list("pk", "name"))
        outcomes = sorted(per_location["totals"]["outcomes"])
        fields = sorted(per_location["totals"]["fields"])
        rows = []
        for bucket in sorted(per_location["buckets"], key=lambda b: (b["key"] is None, names.get(_id(b["key"]), ""))):
            location_id = bucket["key"]
            label = names.get(_id(location_id), "Deleted location") if location_id else NO_LOCATION
            rows.append(_row(label, location_id, bucket, since, until, outcomes, fields, linked=bool(location_id)))
        totals = _row("All locations" if location is None else location.name, str(location.pk) if location else None,
                      per_location["totals"], since, until, outcomes, fields, linked=True)
        charts = [
            bar_chart(label, [{"label": row["label"], "value": row["raw"][figure],
                               "link": row["cells"][index]["link"]} for row in rows], kind)
            for index, (figure, label, _filters, kind) in enumerate(FIGURES)
        ]
        return super().get_context_data(
            form=form, since=since, until=until, rows=rows, totals=totals, charts=charts,
            figures=[label for _figure, label, _filters, _kind in FIGURES], outcomes=outcomes, fields=fields,
            days=days_chart(per_day, self.org), time_zone=per_location["time_zone"],
            span=(until - since + timedelta(days=1)).days, **kwargs,
        )


def _row(row_label, location_id, figures, since, until, outcomes, fields, *, linked) -> dict:
    """One line of the table: the figures as shown, each with the link to the calls it counts (None for calls
    without a location, which the calls list cannot select)."""

    def link(filters):
        return calls_link(since, until, location_id, filters) if linked else None

    return {
        "label": row_label, "raw": figures,
        "cells": [{"text": shown(figures[figure], kind), "link": link(filters), "figure": figure, "label": label}
                  for figure, label, filters, kind in FIGURES],
        "outcomes": [{"count": figures["outcomes"].get(name, 0), "link": link({"outcome": name})}
                     for name in outcomes],
        "fields": [{**figures["fields"][name], "average_text": shown(figures["fields"][name]["average"], "count")}
                   for name in fields],
    }


def _id(value):
    return uuid.UUID(value) if value else None
