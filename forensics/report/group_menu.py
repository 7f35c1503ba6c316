"""One consumer group at a time: a figure holds at most ``MENU_GROUPS`` groups, the worst first
(``ranked_groups``), and a dropdown that shows one of them (or all)."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from .data import TIME_KEYS, group_of
from .escape import esc


def ranked_groups(result: dict, groups) -> list[str]:
    """``groups`` in the order a reader should see them: by their worst finding (loss, then
    duplication, delay, expected; of two alike, the one found first), then those without
    findings, by name."""
    rank = {"loss": 0, "duplication": 1, "delay": 2, "expected": 3}
    among, worst = set(groups), {}
    for i, f in enumerate(result.get("findings") or []):
        if group_of(f) in among:
            worst[group_of(f)] = min(worst.get(group_of(f), (rank.get(f["verdict"], 9), i)), (rank.get(f["verdict"], 9), i))
    return sorted(groups, key=lambda g: (worst.get(g, (10, 0)), g))


MENU_GROUPS = 30
"""The most consumer groups a figure holds, in its dropdown: those a reader should see first
(``ranked_groups``). Each group adds traces (one per owner and verdict) and a visibility flag
per trace to every group's entry in the dropdown, so the figure grows with the square of the
groups. ``Incident.select(group=...)`` and the explorer show any group."""


def menu_groups(result: dict, drawn: tuple[str, ...]) -> tuple[dict, str]:
    """``result`` narrowed to the first ``MENU_GROUPS`` (``ranked_groups``) of the groups in the
    lists a figure draws (``drawn``), entries of no group kept, and a note on what was left out
    for the figure's title ("" if nothing was)."""
    groups = sorted({group_of(e) for key in drawn for e in result.get(key) or [] if group_of(e)})
    if len(groups) <= MENU_GROUPS:
        return result, ""
    shown = set(ranked_groups(result, groups)[:MENU_GROUPS])
    narrowed = {**result, **{key: [e for e in result.get(key) or [] if not group_of(e) or group_of(e) in shown] for key in TIME_KEYS}}
    return narrowed, f" ({MENU_GROUPS} of {len(groups):,} groups, worst first)"


def grouped_figure(traces: list, trace_groups: list, layout: dict, groups: list[str], per_group_layout: dict) -> go.Figure:
    """The figure of ``traces`` (each of the group at its place in ``trace_groups``) and
    ``layout``, with a dropdown that shows one consumer group (or all): trace visibility plus
    that group's shapes, annotations, rows and height. The dropdown lists ``groups`` in their
    order (``ranked_groups``: the worst first), then "all groups"; the figure opens on the first.
    Built in one go: plotly scans a figure's traces for each trace added or changed in it, and a
    layout's shapes for each shape updated, so a figure changed piece by piece takes time
    quadratic in its size."""
    if len(groups) >= 2:
        auto = {"xaxis.autorange": True}
        buttons = []
        for group in groups:
            visible = [g == group for g in trace_groups]
            buttons.append(
                {"label": esc(group), "method": "update", "args": [{"visible": visible}, {**per_group_layout.get(group, {}), **auto}]}
            )
        buttons.append(
            {
                "label": "all groups",
                "method": "update",
                "args": [{"visible": [True] * len(trace_groups)}, {**per_group_layout.get(None, {}), **auto}],
            }
        )
        for trace, group in zip(traces, trace_groups):
            trace.visible = group == groups[0]
        title = html.unescape(layout.get("title", {}).get("text") or "")
        for button, group in zip(buttons, [*groups, None]):
            button["args"][1]["title.text"] = esc(f"{title}: " + (f"group {group}" if group else "all groups"))
        for key, value in {**per_group_layout.get(groups[0], {}), "title.text": buttons[0]["args"][1]["title.text"]}.items():
            set_path(layout, key, value)
        layout["updatemenus"] = [
            {
                "buttons": buttons,
                "active": 0,
                "direction": "down",
                "x": 1.0,
                "xanchor": "right",
                "y": 1.0,
                "yanchor": "bottom",
                "showactive": True,
                "pad": {"t": 0, "b": 30},
            }
        ]
    return go.Figure(data=traces, layout=layout)


def set_path(layout: dict, path: str, value) -> None:
    """Set ``layout``'s property at the dotted ``path`` (``yaxis.categoryarray``), as plotly's
    ``update`` method reads it."""
    *parents, name = path.split(".")
    for parent in parents:
        layout = layout.setdefault(parent, {})
    layout[name] = value
