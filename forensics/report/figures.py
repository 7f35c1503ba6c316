"""Plotly figures of an incident, built from the JSON result only (no Spark).

Every string that plotly shows (tick labels, legend names, hover text, annotations) goes through
``esc``: plotly renders a subset of HTML in them and decodes entities back to plain characters.
Interactivity is plotly's own, so it survives in static HTML: range slider, legend toggles and a
dropdown per consumer group.
"""

from __future__ import annotations

import html
import json
import uuid
from dataclasses import dataclass

import plotly.graph_objects as go

from ..contract import COMMIT, COMMITTED_KINDS, REPOSITIONING_KINDS

from .data import TIME_KEYS, group_of, spans_by_group, to_time
from .escape import esc, script_json
from .evidence import cited_lines
from .tables import offset_range, restore_status, when, where

PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#aec7e8", "#98df8a", "#c5b0d5", "#c49c94")
VERDICT_STYLE = {
    "loss": ("#c62828", "x"), "duplication": ("#ef6c00", "diamond"), "delay": ("#1565c0", "triangle-up"), "expected": ("#616161", "circle-open"),
}
PHASE_COLOURS = {"join": "#ef9a9a", "sync / assign": "#ffcc80", "running": "#a5d6a7"}
HOVER_EVIDENCE_LINES = 6
HOVER_LINE_CHARS = 160
ROW_PX = 24


@dataclass(frozen=True)
class Figure:
    """A plotly figure that renders itself: plotly's mime type for JupyterLab, and for static HTML
    a ``<div>`` plus the figure as inert JSON that the report's one bootstrap script draws."""

    figure: go.Figure

    def spec(self) -> dict:
        return json.loads(self.figure.to_json())

    def html(self) -> str:
        target = f"forensics-plot-{uuid.uuid4().hex}"
        height = self.figure.layout.height or 450
        return (
            f'<div class="forensics-plot" id="{target}" style="width:100%;height:{int(height)}px"></div>'
            f'<script type="application/json" class="forensics-plot-data" data-target="{target}">{script_json(self.spec())}</script>'
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"application/vnd.plotly.v1+json": self.spec(), "text/html": self.html(), "text/plain": esc(self.figure.layout.title.text or "figure")}

    def show(self):
        return self.figure.show()


BOOTSTRAP_JS = """(function () {
  function draw() {
    var nodes = document.querySelectorAll('script.forensics-plot-data');
    for (var i = 0; i < nodes.length; i++) {
      var spec = JSON.parse(nodes[i].textContent);
      var target = document.getElementById(nodes[i].getAttribute('data-target'));
      if (target && window.Plotly) {
        window.Plotly.newPlot(target, spec.data, spec.layout, {responsive: true, displaylogo: false});
      }
    }
  }
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', draw); } else { draw(); }
})();"""
"""The report's only script besides plotly.js: draws every figure from its JSON element."""


# --- helpers ---------------------------------------------------------------------------------------

def _short(path: str | None) -> str:
    if not path:
        return "?"
    parts = str(path).replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def evidence_hover(evidence, texts: dict | None) -> str:
    """Escaped ``file:line  text`` lines for a hover label (the first few)."""
    lines = []
    for entry in (evidence or [])[:HOVER_EVIDENCE_LINES]:
        text = (texts or {}).get((entry["file"], entry["line"]))
        shown = "" if text is None else "  " + text.strip()[:HOVER_LINE_CHARS]
        lines.append(esc(f"{_short(entry['file'])}:{entry['line']}{shown}"))
    if evidence and len(evidence) > HOVER_EVIDENCE_LINES:
        lines.append(esc(f"… {len(evidence) - HOVER_EVIDENCE_LINES} more evidence lines"))
    return "<br>".join(lines)


def _wrap(text: str, width: int = 100) -> str:
    """Escaped ``text`` broken into hover lines of about ``width`` characters."""
    words, lines, line = str(text or "").split(), [], ""
    for word in words:
        if line and len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line = f"{line} {word}".strip()
    lines.append(line)
    return "<br>".join(esc(l) for l in lines if l)


def _row(group, topic, partition, multi: bool) -> str:
    label = f"{topic}-{partition}" if partition is not None else f"{topic}"
    return f"{group} · {label}" if multi else label


def _ms(start, end) -> float:
    if start is None or end is None:
        return 0.0
    return max((end - start).total_seconds() * 1000.0, 1.0)


def _iso(stamp) -> str | None:
    return None if stamp is None else stamp.isoformat()


def _empty(title: str, message: str) -> Figure:
    fig = go.Figure()
    fig.update_layout(
        title=esc(title), height=200, xaxis={"visible": False}, yaxis={"visible": False},
        annotations=[{"text": esc(message), "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}],
    )
    return Figure(fig)


def _height(rows: int) -> int:
    return max(300, 230 + ROW_PX * rows)


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
groups: 200 of the 1,833 groups of the 4M-line benchmark corpus made a timeline of 861 traces
and 3.3 MB of HTML in 3.0 s; 30 of them, 120 traces and 0.29 MB in 0.7 s.
``Incident.select(group=...)`` and the explorer show any group."""


def _menu_groups(result: dict, drawn: tuple[str, ...]) -> tuple[dict, str]:
    """``result`` narrowed to the first ``MENU_GROUPS`` (``ranked_groups``) of the groups in the
    lists a figure draws (``drawn``), entries of no group kept, and a note on what was left out
    for the figure's title ("" if nothing was)."""
    groups = sorted({group_of(e) for key in drawn for e in result.get(key) or [] if group_of(e)})
    if len(groups) <= MENU_GROUPS:
        return result, ""
    shown = set(ranked_groups(result, groups)[:MENU_GROUPS])
    narrowed = {**result, **{key: [e for e in result.get(key) or [] if not group_of(e) or group_of(e) in shown] for key in TIME_KEYS}}
    return narrowed, f" ({MENU_GROUPS} of {len(groups):,} groups, worst first)"


def _grouped_figure(traces: list, trace_groups: list, layout: dict, groups: list[str], per_group_layout: dict) -> go.Figure:
    """The figure of ``traces`` (each of the group at its place in ``trace_groups``) and
    ``layout``, with a dropdown that shows one consumer group (or all): trace visibility plus
    that group's shapes, annotations, rows and height. The dropdown lists ``groups`` in their
    order (``ranked_groups``: the worst first), then "all groups"; the figure opens on the first.
    Built in one go: plotly scans a figure's traces for each trace added or changed in it, and a
    layout's shapes for each shape updated, so a figure changed piece by piece takes time
    quadratic in its size (200 groups of the 4M-line benchmark corpus: 126,374 scans, 11 s)."""
    if len(groups) >= 2:
        auto = {"xaxis.autorange": True}
        buttons = []
        for group in groups:
            visible = [g == group for g in trace_groups]
            buttons.append({"label": esc(group), "method": "update", "args": [{"visible": visible}, {**per_group_layout.get(group, {}), **auto}]})
        buttons.append({"label": "all groups", "method": "update", "args": [{"visible": [True] * len(trace_groups)}, {**per_group_layout.get(None, {}), **auto}]})
        for trace, group in zip(traces, trace_groups):
            trace.visible = group == groups[0]
        title = html.unescape(layout.get("title", {}).get("text") or "")
        for button, group in zip(buttons, [*groups, None]):
            button["args"][1]["title.text"] = esc(f"{title}: " + (f"group {group}" if group else "all groups"))
        for key, value in {**per_group_layout.get(groups[0], {}), "title.text": buttons[0]["args"][1]["title.text"]}.items():
            _set_path(layout, key, value)
        layout["updatemenus"] = [{"buttons": buttons, "active": 0, "direction": "down", "x": 1.0, "xanchor": "right", "y": 1.0,
                                  "yanchor": "bottom", "showactive": True, "pad": {"t": 0, "b": 30}}]
    return go.Figure(data=traces, layout=layout)


def _set_path(layout: dict, path: str, value) -> None:
    """Set ``layout``'s property at the dotted ``path`` (``yaxis.categoryarray``), as plotly's
    ``update`` method reads it."""
    *parents, name = path.split(".")
    for parent in parents:
        layout = layout.setdefault(parent, {})
    layout[name] = value


def _rebalance_shapes(rebalances: list[dict], annotate: bool) -> tuple[list[dict], list[dict]]:
    """Shaded stop-the-world spans and dotted generation boundaries, with ``gN`` labels."""
    shapes, notes = [], []
    for r in rebalances:
        start, end = to_time(r.get("start")), to_time(r.get("end"))
        if start is None:
            continue
        end = end or start
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": _iso(start), "x1": _iso(end), "y0": 0, "y1": 1,
                       "fillcolor": "rgba(120,120,120,0.22)", "line": {"width": 0}, "layer": "below"})
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": _iso(end), "x1": _iso(end), "y0": 0, "y1": 1,
                       "line": {"color": "rgba(80,80,80,0.6)", "width": 1, "dash": "dot"}})
        if annotate:
            notes.append({"x": _iso(end), "y": 1.0, "xref": "x", "yref": "paper", "yanchor": "bottom", "showarrow": False,
                          "text": esc(f"g{r.get('generation')}"), "font": {"size": 9, "color": "#555"}})
    return shapes, notes


def _finding_traces(findings: list[dict], row_of, texts: dict, by_group: bool, spans: dict) -> list[tuple[str, go.Scatter]]:
    """Markers for findings at their start on the row they hit; lost / duplicated ranges drawn
    as a bar from start to end labelled with the offset range, its label on the side of the
    start away from the end of its group's logs (``spans``: ``data.spans_by_group``)."""
    traces = []
    keyed: dict[tuple, list[dict]] = {}
    for f in findings:
        keyed.setdefault((group_of(f) if by_group else None, f["verdict"]), []).append(f)
    for (group, verdict), items in sorted(keyed.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        colour, symbol = VERDICT_STYLE.get(verdict, ("#000", "circle"))
        xs, ys, hover, labels, places = [], [], [], [], []
        for f in items:
            start, end = to_time(f.get("start")), to_time(f.get("end"))
            if start is None:
                continue
            row = row_of(f)
            span = offset_range(f)
            label = f"{verdict} {span} {f.get('records') or 0:,} records" if span and verdict in ("loss", "duplication") else f["detector"]
            text = (f"<b>{esc(verdict.upper())}: {esc(f['detector'])}</b> {esc(where(f))} {esc(span)}<br>"
                    f"{esc(when(f.get('start')))}<br>{_wrap(f.get('explanation'))}<br><i>evidence</i><br>{evidence_hover(f.get('evidence'), texts)}")
            first, last = spans.get(group_of(f), (None, None))
            late = first is not None and last is not None and start > first + (last - first) / 2
            points = [start] if end is None or end <= start else [start, end]
            for i, point in enumerate(points):
                xs.append(_iso(point))
                ys.append(row)
                hover.append(text)
                labels.append(esc(label) if i == 0 else "")
                places.append("top left" if late else "top right")
            xs.append(None)
            ys.append(None)
            hover.append("")
            labels.append("")
            places.append("top right")
        damage = verdict in ("loss", "duplication")
        trace = go.Scatter(
            x=xs, y=ys, mode="lines+markers+text" if damage else "markers", name=esc(f"{verdict} findings"),
            marker={"color": colour, "symbol": symbol, "size": 13, "line": {"width": 2, "color": colour}},
            line={"color": colour, "width": 8}, text=labels, textposition=places, textfont={"color": colour, "size": 11},
            hovertext=hover, hoverinfo="text", legendgroup=f"verdict-{verdict}", connectgaps=False,
        )
        traces.append((group, trace))
    return traces


def _figure_texts(result: dict, redact: bool, findings: list[dict], extra=()) -> dict:
    if redact:
        return {}
    evidence = [e for f in findings for e in (f.get("evidence") or [])[:HOVER_EVIDENCE_LINES]] + list(extra)
    return cited_lines(evidence)


def _layout(title: str, rows: list[str], slider: bool = True) -> dict:
    """The layout of a figure with a row per entry of ``rows`` (top first) over time."""
    return {
        "title": {"text": esc(title), "x": 0.01}, "height": _height(len(rows)), "barmode": "overlay", "hovermode": "closest",
        "margin": {"l": 10, "r": 10, "t": 110, "b": 40}, "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom"},
        "yaxis": {"type": "category", "categoryorder": "array", "categoryarray": list(reversed(rows)), "automargin": True},
        "xaxis": {"type": "date", "rangeslider": {"visible": slider, "thickness": 0.06}, "title": {"text": "time (UTC)"}},
        "hoverlabel": {"align": "left", "font": {"family": "monospace", "size": 11}},
    }


# --- the figures -----------------------------------------------------------------------------------

def ownership_timeline(result: dict, redact: bool = False) -> Figure:
    """One row per topic-partition, bars coloured by owner; rebalances shaded, generation
    boundaries dotted, findings marked on the partitions they hit, lost ranges drawn; at most
    ``MENU_GROUPS`` groups."""
    result, left_out = _menu_groups(result, ("ownership", "findings", "rebalances"))
    ownership, findings = result.get("ownership") or [], result.get("findings") or []
    if not ownership and not findings:
        return _empty("Ownership timeline", "No partition ownership or findings in the selected logs.")
    groups = sorted({g for g in (group_of(e) for e in ownership + findings + (result.get("rebalances") or [])) if g})
    multi = len(groups) > 1
    spans = spans_by_group(result)

    def row_of(entry):
        if entry.get("topic") is not None:
            return esc(_row(group_of(entry), entry["topic"], entry.get("partition"), multi))
        label = f"task {entry['task']}" if entry.get("task") else "(whole group)"
        return esc(f"{group_of(entry)} · {label}" if multi else label)

    rows_by_group: dict[str, list[str]] = {}
    for entry in sorted(ownership, key=lambda e: (str(group_of(e)), str(e.get("topic")), e.get("partition") or 0)):
        rows_by_group.setdefault(group_of(entry), [])
        if row_of(entry) not in rows_by_group[group_of(entry)]:
            rows_by_group[group_of(entry)].append(row_of(entry))
    for f in findings:
        rows_by_group.setdefault(group_of(f), [])
        if row_of(f) not in rows_by_group[group_of(f)]:
            rows_by_group[group_of(f)].insert(0, row_of(f)) if f.get("topic") is None else rows_by_group[group_of(f)].append(row_of(f))
    all_rows = [r for g in sorted(rows_by_group, key=str) for r in rows_by_group[g]]

    traces, trace_groups = [], []
    by_owner: dict[tuple, list[dict]] = {}
    for e in ownership:
        by_owner.setdefault((group_of(e), f"{e.get('host')}/{e.get('client_id')}"), []).append(e)
    colours = {owner: PALETTE[i % len(PALETTE)] for i, owner in enumerate(sorted({o for _, o in by_owner}))}
    for (group, owner), items in sorted(by_owner.items(), key=lambda kv: str(kv[0])):
        base, width, ys, hover = [], [], [], []
        for e in items:
            start = to_time(e.get("from"))
            end = to_time(e.get("to")) or spans.get(group, (None, None))[1]
            if start is None:
                continue
            base.append(_iso(start))
            width.append(_ms(start, end))
            ys.append(row_of(e))
            ev = e.get("evidence") or {}
            hover.append(
                f"<b>{esc(e.get('topic'))}-{esc(e.get('partition'))}</b> owned by {esc(owner)}<br>generation {esc(e.get('generation'))}, "
                f"member {esc(e.get('member_id') or '-')}{', instance ' + esc(e.get('instance_id')) if e.get('instance_id') else ''}<br>"
                f"{esc(when(e.get('from')))} → {esc(when(e.get('to')) or 'end of logs')} ({esc(e.get('ended'))})<br>"
                f"{esc(_short(ev.get('file')))}:{esc(ev.get('from_line'))}–{esc(ev.get('to_line'))}"
            )
        traces.append(go.Bar(
            orientation="h", base=base, x=width, y=ys, name=esc(owner), marker={"color": colours[owner], "opacity": 0.8},
            hovertext=hover, hoverinfo="text", legendgroup=esc(owner), width=0.6,
        ))
        trace_groups.append(group)
    texts = _figure_texts(result, redact, findings)
    for group, trace in _finding_traces(findings, row_of, texts, by_group=multi, spans=spans):
        traces.append(trace)
        trace_groups.append(group)
    rebalances = result.get("rebalances") or []
    shapes, notes = _rebalance_shapes(rebalances, annotate=len(rebalances) <= 30)
    layout = {**_layout(f"Partition ownership by generation (shaded: rebalances, the group stood still){left_out}", all_rows), "shapes": shapes, "annotations": notes}
    layouts = {None: {"shapes": shapes, "annotations": notes, "yaxis.categoryarray": list(reversed(all_rows))}}
    by_group = _by_group(rebalances)
    for group in groups:
        own = by_group.get(group, [])
        s, n = _rebalance_shapes(own, annotate=len(own) <= 30)
        layouts[group] = {"shapes": s, "annotations": n, "yaxis.categoryarray": list(reversed(rows_by_group.get(group, []))), "height": _height(len(rows_by_group.get(group, [])))}
    layouts[None]["height"] = _height(len(all_rows))
    return Figure(_grouped_figure(traces, trace_groups, layout, ranked_groups(result, groups), layouts))


def rebalance_phases(result: dict, redact: bool = False) -> Figure:
    """Per member: join (rebalance start to all joined), sync / assign (to its assignment), then
    running until the group's next rebalance; at most ``MENU_GROUPS`` groups."""
    result, left_out = _menu_groups(result, ("rebalances",))
    rebalances = sorted(result.get("rebalances") or [], key=lambda r: (str(group_of(r)), r.get("generation") or 0))
    if not rebalances:
        return _empty("Rebalance phases", "No rebalances in the selected logs.")
    groups = sorted({group_of(r) for r in rebalances if group_of(r)})
    multi = len(groups) > 1
    spans = spans_by_group(result)
    texts = {} if redact else cited_lines([r["evidence"] for r in rebalances if r.get("evidence")])
    segments: dict[tuple, dict] = {}
    rows_by_group: dict[str, list[str]] = {}
    for r, following in zip(rebalances, _next_of_group(rebalances)):
        group = group_of(r)
        start, joined, end = to_time(r.get("start")), to_time(r.get("joined")), to_time(r.get("end"))
        if start is None:
            continue
        end = end or joined or start
        joined = joined or end
        next_start = to_time(following.get("start")) if following else spans.get(group, (None, None))[1]
        assigned = {a["member"]: to_time(a.get("at")) for a in r.get("assignments") or [] if a.get("member")}
        evidence = evidence_hover([r["evidence"]], texts) if r.get("evidence") and r["evidence"].get("file") else ""
        for member in sorted(set(r.get("members") or []) | set(assigned)):
            row = esc(f"{group} · {member}" if multi else member)
            rows_by_group.setdefault(group, [])
            if row not in rows_by_group[group]:
                rows_by_group[group].append(row)
            at = assigned.get(member) or end
            for phase, a, b in (("join", start, joined), ("sync / assign", joined, at), ("running", at, next_start)):
                if a is None or b is None or b < a:
                    continue
                seg = segments.setdefault((group, phase), {"base": [], "x": [], "y": [], "hover": []})
                seg["base"].append(_iso(a))
                seg["x"].append(_ms(a, b))
                seg["y"].append(row)
                seg["hover"].append(
                    f"<b>{esc(group)} generation {esc(r.get('generation'))}: {esc(phase)}</b><br>{esc(member)}<br>"
                    f"{esc(when(_iso(a)))} → {esc(when(_iso(b)))} ({esc(f'{_ms(a, b):,.0f}')} ms)<br>trigger: {_wrap(r.get('trigger'))}<br>{evidence}"
                )
    traces, trace_groups = [], []
    for (group, phase), seg in sorted(segments.items(), key=lambda kv: (str(kv[0][0]), list(PHASE_COLOURS).index(kv[0][1]))):
        traces.append(go.Bar(
            orientation="h", base=seg["base"], x=seg["x"], y=seg["y"], name=esc(phase),
            marker={"color": PHASE_COLOURS[phase]}, hovertext=seg["hover"], hoverinfo="text", legendgroup=phase, width=0.6,
        ))
        trace_groups.append(group)
    all_rows = [r for g in sorted(rows_by_group, key=str) for r in rows_by_group[g]]
    shapes, notes = _rebalance_shapes(rebalances, annotate=len(rebalances) <= 30)
    layout = {**_layout(f"Rebalance phases per member: join, sync / assign, running{left_out}", all_rows), "shapes": [s for s in shapes if s["type"] == "line"], "annotations": notes}
    layouts = {None: {"shapes": [s for s in shapes if s["type"] == "line"], "annotations": notes, "yaxis.categoryarray": list(reversed(all_rows))}}
    by_group = _by_group(rebalances)
    for group in groups:
        own, n = _rebalance_shapes(by_group.get(group, []), annotate=True)
        layouts[group] = {"shapes": [s for s in own if s["type"] == "line"], "annotations": n, "yaxis.categoryarray": list(reversed(rows_by_group.get(group, []))), "height": _height(len(rows_by_group.get(group, [])))}
    layouts[None]["height"] = _height(len(all_rows))
    return Figure(_grouped_figure(traces, trace_groups, layout, ranked_groups(result, groups), layouts))


def _by_group(entries: list[dict]) -> dict:
    """``entries`` by their group (``group_of``), each group's in their order."""
    grouped: dict = {}
    for entry in entries:
        grouped.setdefault(group_of(entry), []).append(entry)
    return grouped


def _next_of_group(entries: list[dict]) -> list[dict | None]:
    """For each of ``entries``, the next entry of its group (``group_of``), or None."""
    following, after = [], {}
    for entry in reversed(entries):
        following.append(after.get(group_of(entry)))
        after[group_of(entry)] = entry
    return following[::-1]


def committed_offsets(result: dict, redact: bool = False) -> Figure:
    """Committed offset over time per partition (steps), with backward steps and resets marked;
    at most ``MENU_GROUPS`` groups."""
    result, left_out = _menu_groups(result, ("commits",))
    commits = [c for c in result.get("commits") or [] if c.get("ts")]
    if not commits:
        return _empty("Committed offsets", "No commits, resets or offset dumps in the selected logs.")
    groups = sorted({group_of(c) for c in commits if group_of(c)})
    multi = len(groups) > 1
    texts = {} if redact else cited_lines(repositioning_evidence(commits)[:500])
    traces, trace_groups = [], []
    by_partition: dict[tuple, list[dict]] = {}
    for c in commits:
        by_partition.setdefault((group_of(c), c.get("topic"), c.get("partition")), []).append(c)
    for i, ((group, topic, partition), mine) in enumerate(sorted(by_partition.items(), key=lambda kv: str(kv[0]))):
        line = [c for c in mine if c.get("kind") in COMMITTED_KINDS and c.get("offset") is not None]
        name = _row(group, topic, partition, multi)
        colour = PALETTE[i % len(PALETTE)]
        if line:
            traces.append(go.Scatter(
                x=[c["ts"] for c in line], y=[c["offset"] for c in line], mode="lines+markers", line={"shape": "hv", "color": colour},
                marker={"size": 5}, name=esc(name), legendgroup=esc(name), hoverinfo="text",
                hovertext=[_commit_hover(c, texts) for c in line],
            ))
            trace_groups.append(group)
        marks = [c for c in mine if _repositions(c) and c.get("offset") is not None]
        if marks:
            traces.append(go.Scatter(
                x=[c["ts"] for c in marks], y=[c["offset"] for c in marks], mode="markers+text", name=esc(f"{name}: resets / backward"),
                legendgroup=esc(name), showlegend=False,
                marker={"size": 13, "symbol": ["x" if _backward(c) else "diamond" for c in marks], "color": ["#c62828" if _backward(c) else "#ef6c00" for c in marks]},
                text=[esc("backward" if _backward(c) else c["kind"]) for c in marks], textposition="top center",
                hovertext=[_commit_hover(c, texts) for c in marks], hoverinfo="text",
            ))
            trace_groups.append(group)
    layout = {
        "title": {"text": esc(f"Committed offset per partition (x: commit below the previous one, ◆: offset reset){left_out}"), "x": 0.01},
        "height": 480, "hovermode": "closest", "margin": {"l": 10, "r": 10, "t": 70, "b": 40},
        "xaxis": {"type": "date", "rangeslider": {"visible": True, "thickness": 0.06}, "title": {"text": "time (UTC)"}},
        "yaxis": {"title": {"text": "offset"}, "rangemode": "tozero"}, "hoverlabel": {"align": "left", "font": {"family": "monospace", "size": 11}},
    }
    return Figure(_grouped_figure(traces, trace_groups, layout, ranked_groups(result, groups), {g: {} for g in [None, *groups]}))


def _repositions(commit: dict) -> bool:
    """A reset or seek (``REPOSITIONING_KINDS``), or a commit that went back."""
    return commit.get("kind") in REPOSITIONING_KINDS or _backward(commit)


def repositioning_evidence(commits: list[dict]) -> list[dict]:
    """The log lines of the commits ``committed_offsets`` marks (``_repositions``), in order."""
    return [{"file": c["source_file"], "line": c["line"]} for c in commits if _repositions(c) and c.get("source_file")]


def _backward(commit: dict) -> bool:
    return commit.get("kind") == COMMIT and commit.get("previous_offset") is not None and commit.get("offset") is not None and commit["offset"] < commit["previous_offset"]


def _commit_hover(c: dict, texts: dict) -> str:
    owner = "" if c.get("in_own_interval") in (None, True) else "<br><b>committer did not own the partition</b>"
    back = f"<br><b>went back {c['previous_offset'] - c['offset']:,} from {c['previous_offset']:,}</b>" if _backward(c) else ""
    evidence = evidence_hover([{"file": c["source_file"], "line": c["line"]}], texts) if c.get("source_file") else ""
    return (f"<b>{esc(c.get('kind'))} {esc(c.get('offset'))}</b> {esc(c.get('topic'))}-{esc(c.get('partition'))}<br>{esc(when(c.get('ts')))}<br>"
            f"by {esc(c.get('member') or c.get('source'))}, generation {esc(c.get('generation'))}{owner}{back}<br>{evidence}")


def restore_progress(result: dict, redact: bool = False) -> Figure:
    """Per task and changelog: from the task's assignment to its restore's end (or to RUNNING),
    coloured by outcome; a red x where a task went RUNNING with its state reset but not restored."""
    restores = [r for r in result.get("restores") or [] if r.get("opened_ts")]
    if not restores:
        return _empty("Restore progress", "No Kafka Streams task assignments or restores in the selected logs.")
    colours = {"RUNNING without restore": "#c62828", "restored": "#2e7d32", "restore unfinished": "#ef6c00", "no restore": "#b0bec5"}
    rows, by_status = [], {}
    for r in sorted(restores, key=lambda r: (str(r.get("host")), str(r.get("task")), r.get("opened_ts"))):
        row = esc(f"{r.get('host')} task {r.get('task')}" + (f" {r['changelog']}" if r.get("changelog") else ""))
        if row not in rows:
            rows.append(row)
        start = to_time(r.get("opened_ts"))
        end = to_time(r.get("restore_finished_ts")) or to_time(r.get("running_ts")) or start
        status = restore_status(r)
        entry = by_status.setdefault(status, {"base": [], "x": [], "y": [], "hover": [], "run_x": [], "run_y": []})
        entry["base"].append(_iso(start))
        entry["x"].append(_ms(start, end))
        entry["y"].append(row)
        restored = f"{r.get('records_restored') or 0:,} records restored" + (f" of [{r['restore_from']:,}, {r['restore_to']:,})" if r.get("restore_from") is not None and r.get("restore_to") is not None else "")
        entry["hover"].append(
            f"<b>{esc(status)}</b>: task {esc(r.get('task'))} on {esc(r.get('host'))} {esc(r.get('thread'))}<br>changelog {esc(r.get('changelog') or '-')}, "
            f"checkpoint {esc({True: 'found', False: 'missing', None: '?'}[r.get('checkpoint_found')])}, store wiped {esc('yes' if r.get('store_wiped') else 'no')}<br>"
            f"{esc(restored)}<br>assigned {esc(when(r.get('opened_ts')))}, RUNNING {esc(when(r.get('running_ts')) or '-')}<br>"
            f"previous owner {esc(r.get('previous_host') or '-')} {esc(r.get('previous_thread') or '')}"
            + (f", gap {esc(format(r['gap_ms'], ','))} ms" if r.get("gap_ms") is not None else "")
        )
        if r.get("running_ts"):
            entry["run_x"].append(r["running_ts"])
            entry["run_y"].append(row)
    traces = []
    for status, entry in by_status.items():
        traces.append(go.Bar(orientation="h", base=entry["base"], x=entry["x"], y=entry["y"], name=esc(status), marker={"color": colours[status]},
                             hovertext=entry["hover"], hoverinfo="text", legendgroup=esc(status), width=0.6))
        if entry["run_x"]:
            traces.append(go.Scatter(x=entry["run_x"], y=entry["run_y"], mode="markers", name=esc(f"RUNNING ({status})"), legendgroup=esc(status), showlegend=False,
                                     marker={"symbol": "x" if status == "RUNNING without restore" else "line-ns-open", "size": 12, "color": colours[status], "line": {"width": 2, "color": colours[status]}},
                                     hoverinfo="text", hovertext=[esc(f"RUNNING at {when(x)}") for x in entry["run_x"]]))
    return Figure(go.Figure(data=traces, layout=_layout("Kafka Streams tasks: assignment to restore end or RUNNING", rows)))
