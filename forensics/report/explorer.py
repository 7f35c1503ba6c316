"""The JupyterLab explorer: pick group, partition, time range and detectors; figures and the
evidence table follow. Its ``params`` are the same values ``load_incident`` / ``select`` take."""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd
from IPython.display import display

from .data import check_window, time_span
from .detectors import DETECTOR_NAMES
from .escape import esc

STEPS = 200
ALL = "(all)"


def _times(result: dict) -> list[pd.Timestamp]:
    first, last = time_span(result)
    if first is None:
        return []
    if first == last:
        return [first]
    return list(pd.date_range(first.floor("s"), last.ceil("s"), periods=STEPS))


def _window_index(times: list[pd.Timestamp], window) -> tuple[int, int]:
    """Slider positions covering ``window`` (the whole range without one)."""
    last = max(len(times) - 1, 0)
    span = check_window(window)
    if not times or span is None:
        return (0, last)
    start, end = span
    low = max([i for i, t in enumerate(times) if start is None or t <= start] or [0])
    high = min([i for i, t in enumerate(times) if end is None or t >= end] or [last])
    return (low, max(low, high))


def _label(stamp: pd.Timestamp) -> str:
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


class Explorer:
    """Widgets over one ``Incident``; ``.params`` gives the current selection as
    ``{"group", "window", "topic", "partition", "detectors"}`` for ``Incident.select``."""

    def __init__(self, incident):
        self.incident = incident
        full = incident.full
        partitions = sorted({(o.get("topic"), o.get("partition")) for o in full.get("ownership") or [] if o.get("topic") is not None}, key=str)
        present = sorted({f["detector"] for f in full.get("findings") or []})
        self.group = widgets.Dropdown(options=[ALL, *incident.groups], value=incident.params.get("group") or ALL, description="group")
        self.partition = widgets.Dropdown(options=[(ALL, None)] + [(f"{t}-{p}", (t, p)) for t, p in partitions], value=None, description="partition")
        times = _times(full)
        self.window = widgets.SelectionRangeSlider(
            options=[(_label(t), _label(t)) for t in times] or [("-", "-")], index=_window_index(times, incident.params.get("window")),
            description="time", layout=widgets.Layout(width="95%"), continuous_update=False,
        )
        self.detectors = widgets.SelectMultiple(options=[d for d in DETECTOR_NAMES if d in present] or list(DETECTOR_NAMES),
                                                value=tuple(present), description="detectors", rows=min(8, max(3, len(present))))
        self.figures = widgets.Output()
        self.evidence = widgets.Output()
        self.tabs = widgets.Tab(children=[self.figures, self.evidence])
        self.tabs.set_title(0, "figures")
        self.tabs.set_title(1, "findings and evidence")
        for control in (self.group, self.partition, self.window, self.detectors):
            control.observe(lambda _change: self.refresh(), names="value")
        self.box = widgets.VBox([widgets.HBox([self.group, self.partition]), self.window, self.detectors, self.tabs])
        self.refresh()

    @property
    def params(self) -> dict:
        """The selection as ``Incident.select`` / ``load_incident`` keyword arguments."""
        topic, partition = self.partition.value or (None, None)
        times = self.window.options
        whole = len(times) < 2 or self.window.index == (0, len(times) - 1)
        return {
            "group": None if self.group.value == ALL else self.group.value,
            "window": None if whole else tuple(self.window.value),
            "topic": topic,
            "partition": partition,
            "detectors": list(self.detectors.value),
        }

    def selected(self):
        """The incident narrowed to the current selection."""
        return self.incident.select(**self.params)

    def refresh(self) -> None:
        incident = self.selected()
        self.figures.clear_output()
        with self.figures:
            for figure in (incident.timeline(), incident.rebalance_phases(), incident.committed_offsets(), incident.restore_progress()):
                display(figure)
        self.evidence.clear_output()
        with self.evidence:
            display(incident.findings_table())
            for index in range(len(incident.result.get("findings") or [])):
                display(incident.finding(index))

    def _ipython_display_(self):
        display(self.box)

    def _repr_html_(self) -> str:
        return f"<p>{esc('Explorer: open this notebook in JupyterLab to use the widgets.')}</p>"
