"""The JupyterLab explorer: pick group, partition, time range and detectors; figures and the
evidence table follow. Its ``params`` are the same values ``load_incident`` / ``select`` take."""

from __future__ import annotations

import ipywidgets as widgets
import pandas as pd
from IPython.display import display

from .data import check_window, group_of, time_span
from .detectors import DETECTOR_NAMES
from .escape import esc

STEPS = 200
ALL = "(all)"
ALL_PARTITIONS = (None, None)
"""The partition dropdown's value for every partition (``None`` would show an empty dropdown)."""


def _times(result: dict) -> list[pd.Timestamp]:
    """The slider's stops: whole seconds from the first to the last time, at most ``STEPS``,
    so that no two stops have the same label."""
    first, last = time_span(result)
    if first is None:
        return []
    start, end = first.floor("s"), max(last.ceil("s"), first.floor("s") + pd.Timedelta(seconds=1))
    step = max(1, -(-int((end - start).total_seconds()) // (STEPS - 1)))
    times = list(pd.date_range(start, end, freq=f"{step}s"))
    return times if times[-1] >= end else [*times, times[-1] + pd.Timedelta(seconds=step)]


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
    """A stop's value: the ISO time ``window`` takes."""
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def window_text(start: str, end: str) -> str:
    """The selected window as a reader says it: ``2024-04-16 06:00:00 to 06:20:12 UTC`` (the
    date again only when it changes)."""
    first, last = pd.Timestamp(start), pd.Timestamp(end)
    shown = "%H:%M:%S" if first.date() == last.date() else "%Y-%m-%d %H:%M:%S"
    return f"{first:%Y-%m-%d %H:%M:%S} to {last.strftime(shown)} UTC"


def _partitions(result: dict, group) -> list[tuple[str, tuple]]:
    """``(label, (topic, partition))`` of every partition owned in ``group`` (all groups for None)."""
    owned = {
        (o["topic"], o.get("partition"))
        for o in result.get("ownership") or []
        if o.get("topic") is not None and (group is None or group_of(o) == group)
    }
    return [(f"{t}-{p}", (t, p)) for t, p in sorted(owned, key=lambda tp: (str(tp[0]), -1 if tp[1] is None else tp[1]))]


class Explorer:
    """Widgets over one ``Incident``; ``.params`` gives the current selection as
    ``{"group", "window", "topic", "partition", "detectors"}`` for ``Incident.select``."""

    def __init__(self, incident):
        self.incident = incident
        full = incident.full
        present = sorted({f["detector"] for f in full.get("findings") or []})
        self.group = widgets.Dropdown(options=[ALL, *incident.groups], value=incident.params.get("group") or ALL, description="group")
        self.partition = widgets.Dropdown(options=self._partition_options(), value=ALL_PARTITIONS, description="partition")
        times = _times(full)
        # No readout: a whole ISO time pair does not fit the slider's fixed-width readout
        # (it showed ``...T08:20:012``); the window is written out in full beside it instead.
        self.window = widgets.SelectionRangeSlider(
            options=[(_label(t), _label(t)) for t in times] or [("-", "-")],
            index=_window_index(times, incident.params.get("window")),
            description="time",
            layout=widgets.Layout(flex="1 1 auto", width="auto"),
            continuous_update=False,
            readout=False,
        )
        self.window_label = widgets.Label(layout=widgets.Layout(flex="0 0 auto", width="auto"))
        self.window_label.add_class("forensics-window")
        self.detectors = widgets.SelectMultiple(
            options=[d for d in DETECTOR_NAMES if d in present] or list(DETECTOR_NAMES),
            value=tuple(present),
            description="detectors",
            rows=min(8, max(3, len(present))),
        )
        self.figures = widgets.Output()
        self.evidence = widgets.Output()
        self.tabs = widgets.Tab(children=[self.figures, self.evidence])
        self.tabs.set_title(0, "figures")
        self.tabs.set_title(1, "findings")
        self._quiet = False
        self.group.observe(lambda _change: self._group_changed(), names="value")
        for control in (self.partition, self.window, self.detectors):
            control.observe(lambda _change: self._quiet or self.refresh(), names="value")
        self.box = widgets.VBox(
            [widgets.HBox([self.group, self.partition]), widgets.HBox([self.window, self.window_label]), self.detectors, self.tabs]
        )
        self.refresh()

    def _partition_options(self) -> list[tuple[str, tuple]]:
        group = None if self.group.value == ALL else self.group.value
        return [(ALL, ALL_PARTITIONS), *_partitions(self.incident.full, group)]

    def _group_changed(self) -> None:
        """Offer the partitions of the group picked (back to all of them), then refresh once."""
        self._quiet = True
        try:
            self.partition.options = self._partition_options()
            self.partition.value = ALL_PARTITIONS
        finally:
            self._quiet = False
        self.refresh()

    @property
    def params(self) -> dict:
        """The selection as ``Incident.select`` / ``load_incident`` keyword arguments."""
        topic, partition = self.partition.value or ALL_PARTITIONS
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
        self.window_label.value = window_text(*self.window.value) if len(self.window.options) > 1 else ""
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
