"""What every figure of an incident is built from: ``Figure``, a plotly figure that renders
itself in JupyterLab and in static HTML (drawn by the report's one script, ``BOOTSTRAP_JS``),
and the rows, hover text, rebalance shading, finding markers and time layout they share.

Every string that plotly shows goes through ``esc``: plotly renders a subset of HTML in them and
decodes entities back to plain characters."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import plotly.graph_objects as go

from .data import group_of, to_time
from .escape import esc, script_json
from .evidence import cited_lines
from .tables import offset_range, when, where

PALETTE = (
    "#1f77b4",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#7f7f7f",
    "#aec7e8",
    "#98df8a",
    "#c5b0d5",
    "#c49c94",
)
VERDICT_STYLE = {
    "loss": ("#c62828", "x"),
    "duplication": ("#ef6c00", "diamond"),
    "delay": ("#1565c0", "triangle-up"),
    "expected": ("#616161", "circle-open"),
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
        return {
            "application/vnd.plotly.v1+json": self.spec(),
            "text/html": self.html(),
            "text/plain": esc(self.figure.layout.title.text or "figure"),
        }

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


def short_path(path: str | None) -> str:
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
        lines.append(esc(f"{short_path(entry['file'])}:{entry['line']}{shown}"))
    if evidence and len(evidence) > HOVER_EVIDENCE_LINES:
        lines.append(esc(f"… {len(evidence) - HOVER_EVIDENCE_LINES} more evidence lines"))
    return "<br>".join(lines)


def wrapped(text: str, width: int = 100) -> str:
    """Escaped ``text`` broken into hover lines of about ``width`` characters."""
    words, lines, line = str(text or "").split(), [], ""
    for word in words:
        if line and len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line = f"{line} {word}".strip()
    lines.append(line)
    return "<br>".join(esc(part) for part in lines if part)


def row_label(group, topic, partition, multi: bool) -> str:
    label = f"{topic}-{partition}" if partition is not None else f"{topic}"
    return f"{group} · {label}" if multi else label


def bar_ms(start, end) -> float:
    if start is None or end is None:
        return 0.0
    return max((end - start).total_seconds() * 1000.0, 1.0)


def iso(stamp) -> str | None:
    return None if stamp is None else stamp.isoformat()


def empty_figure(title: str, message: str) -> Figure:
    fig = go.Figure()
    fig.update_layout(
        title=esc(title),
        height=200,
        xaxis={"visible": False},
        yaxis={"visible": False},
        annotations=[{"text": esc(message), "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}],
    )
    return Figure(fig)


def figure_height(rows: int) -> int:
    return max(300, 230 + ROW_PX * rows)


def rebalance_shapes(rebalances: list[dict], annotate: bool) -> tuple[list[dict], list[dict]]:
    """Shaded stop-the-world spans and dotted generation boundaries, with ``gN`` labels."""
    shapes, notes = [], []
    for r in rebalances:
        start, end = to_time(r.get("start")), to_time(r.get("end"))
        if start is None:
            continue
        end = end or start
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": iso(start),
                "x1": iso(end),
                "y0": 0,
                "y1": 1,
                "fillcolor": "rgba(120,120,120,0.22)",
                "line": {"width": 0},
                "layer": "below",
            }
        )
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": iso(end),
                "x1": iso(end),
                "y0": 0,
                "y1": 1,
                "line": {"color": "rgba(80,80,80,0.6)", "width": 1, "dash": "dot"},
            }
        )
        if annotate:
            notes.append(
                {
                    "x": iso(end),
                    "y": 1.0,
                    "xref": "x",
                    "yref": "paper",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "text": esc(f"g{r.get('generation')}"),
                    "font": {"size": 9, "color": "#555"},
                }
            )
    return shapes, notes


def finding_traces(findings: list[dict], row_of, texts: dict, by_group: bool, spans: dict) -> list[tuple[str, go.Scatter]]:
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
            text = (
                f"<b>{esc(verdict.upper())}: {esc(f['detector'])}</b> {esc(where(f))} {esc(span)}<br>"
                f"{esc(when(f.get('start')))}<br>{wrapped(f.get('explanation'))}<br><i>evidence</i><br>{evidence_hover(f.get('evidence'), texts)}"
            )
            first, last = spans.get(group_of(f), (None, None))
            late = first is not None and last is not None and start > first + (last - first) / 2
            points = [start] if end is None or end <= start else [start, end]
            for i, point in enumerate(points):
                xs.append(iso(point))
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
            x=xs,
            y=ys,
            mode="lines+markers+text" if damage else "markers",
            name=esc(f"{verdict} findings"),
            marker={"color": colour, "symbol": symbol, "size": 13, "line": {"width": 2, "color": colour}},
            line={"color": colour, "width": 8},
            text=labels,
            textposition=places,
            textfont={"color": colour, "size": 11},
            hovertext=hover,
            hoverinfo="text",
            legendgroup=f"verdict-{verdict}",
            connectgaps=False,
        )
        traces.append((group, trace))
    return traces


def figure_texts(result: dict, redact: bool, findings: list[dict], extra=()) -> dict:
    if redact:
        return {}
    evidence = [e for f in findings for e in (f.get("evidence") or [])[:HOVER_EVIDENCE_LINES]] + list(extra)
    return cited_lines(evidence)


def time_layout(title: str, rows: list[str], slider: bool = True) -> dict:
    """The layout of a figure with a row per entry of ``rows`` (top first) over time."""
    return {
        "title": {"text": esc(title), "x": 0.01},
        "height": figure_height(len(rows)),
        "barmode": "overlay",
        "hovermode": "closest",
        "margin": {"l": 10, "r": 10, "t": 110, "b": 40},
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom"},
        "yaxis": {"type": "category", "categoryorder": "array", "categoryarray": list(reversed(rows)), "automargin": True},
        "xaxis": {"type": "date", "rangeslider": {"visible": slider, "thickness": 0.06}, "title": {"text": "time (UTC)"}},
        "hoverlabel": {"align": "left", "font": {"family": "monospace", "size": 11}},
    }
