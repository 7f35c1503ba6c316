"""Plotly figures of an incident, built from the JSON result only (no Spark).

Every string that plotly shows (tick labels, legend names, hover text, annotations) goes through
``esc``: plotly renders a subset of HTML in them and decodes entities back to plain characters.
Interactivity is plotly's own, so it survives in static HTML: range slider, legend toggles and a
dropdown per consumer group.
"""

from __future__ import annotations

import plotly.graph_objects as go

from ..contract import COMMIT, COMMITTED_KINDS, REPOSITIONING_KINDS
from .data import group_of, spans_by_group, to_time
from .escape import esc
from .evidence import cited_lines
from .group_menu import grouped_figure, menu_groups, ranked_groups
from .plotting import (
    PALETTE,
    PHASE_COLOURS,
    Figure,
    bar_ms,
    empty_figure,
    evidence_hover,
    figure_height,
    figure_texts,
    finding_traces,
    iso,
    rebalance_shapes,
    row_label,
    short_path,
    time_layout,
    wrapped,
)
from .tables import restore_status, when


def ownership_timeline(result: dict, redact: bool = False) -> Figure:
    """One row per topic-partition, bars coloured by owner; rebalances shaded, generation
    boundaries dotted, findings marked on the partitions they hit, lost ranges drawn; at most
    ``MENU_GROUPS`` groups."""
    result, left_out = menu_groups(result, ("ownership", "findings", "rebalances"))
    ownership, findings = result.get("ownership") or [], result.get("findings") or []
    if not ownership and not findings:
        return empty_figure("Ownership timeline", "No partition ownership or findings in the selected logs.")
    groups = sorted({g for g in (group_of(e) for e in ownership + findings + (result.get("rebalances") or [])) if g})
    multi = len(groups) > 1
    spans = spans_by_group(result)

    def row_of(entry):
        if entry.get("topic") is not None:
            return esc(row_label(group_of(entry), entry["topic"], entry.get("partition"), multi))
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
            base.append(iso(start))
            width.append(bar_ms(start, end))
            ys.append(row_of(e))
            ev = e.get("evidence") or {}
            hover.append(
                f"<b>{esc(e.get('topic'))}-{esc(e.get('partition'))}</b> owned by {esc(owner)}<br>generation {esc(e.get('generation'))}, "
                f"member {esc(e.get('member_id') or '-')}{', instance ' + esc(e.get('instance_id')) if e.get('instance_id') else ''}<br>"
                f"{esc(when(e.get('from')))} → {esc(when(e.get('to')) or 'end of logs')} ({esc(e.get('ended'))})<br>"
                f"{esc(short_path(ev.get('file')))}:{esc(ev.get('from_line'))}–{esc(ev.get('to_line'))}"
            )
        traces.append(
            go.Bar(
                orientation="h",
                base=base,
                x=width,
                y=ys,
                name=esc(owner),
                marker={"color": colours[owner], "opacity": 0.8},
                hovertext=hover,
                hoverinfo="text",
                legendgroup=esc(owner),
                width=0.6,
            )
        )
        trace_groups.append(group)
    texts = figure_texts(result, redact, findings)
    for group, trace in finding_traces(findings, row_of, texts, by_group=multi, spans=spans):
        traces.append(trace)
        trace_groups.append(group)
    rebalances = result.get("rebalances") or []
    shapes, notes = rebalance_shapes(rebalances, annotate=len(rebalances) <= 30)
    layout = {
        **time_layout(f"Partition ownership by generation (shaded: rebalances, the group stood still){left_out}", all_rows),
        "shapes": shapes,
        "annotations": notes,
    }
    layouts = {None: {"shapes": shapes, "annotations": notes, "yaxis.categoryarray": list(reversed(all_rows))}}
    by_group = _by_group(rebalances)
    for group in groups:
        own = by_group.get(group, [])
        s, n = rebalance_shapes(own, annotate=len(own) <= 30)
        layouts[group] = {
            "shapes": s,
            "annotations": n,
            "yaxis.categoryarray": list(reversed(rows_by_group.get(group, []))),
            "height": figure_height(len(rows_by_group.get(group, []))),
        }
    layouts[None]["height"] = figure_height(len(all_rows))
    return Figure(grouped_figure(traces, trace_groups, layout, ranked_groups(result, groups), layouts))


def rebalance_phases(result: dict, redact: bool = False) -> Figure:
    """Per member: join (rebalance start to all joined), sync / assign (to its assignment), then
    running until the group's next rebalance; at most ``MENU_GROUPS`` groups."""
    result, left_out = menu_groups(result, ("rebalances",))
    rebalances = sorted(result.get("rebalances") or [], key=lambda r: (str(group_of(r)), r.get("generation") or 0))
    if not rebalances:
        return empty_figure("Rebalance phases", "No rebalances in the selected logs.")
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
                seg["base"].append(iso(a))
                seg["x"].append(bar_ms(a, b))
                seg["y"].append(row)
                seg["hover"].append(
                    f"<b>{esc(group)} generation {esc(r.get('generation'))}: {esc(phase)}</b><br>{esc(member)}<br>"
                    f"{esc(when(iso(a)))} → {esc(when(iso(b)))} ({esc(f'{bar_ms(a, b):,.0f}')} ms)<br>trigger: {wrapped(r.get('trigger'))}<br>{evidence}"
                )
    traces, trace_groups = [], []
    for (group, phase), seg in sorted(segments.items(), key=lambda kv: (str(kv[0][0]), list(PHASE_COLOURS).index(kv[0][1]))):
        traces.append(
            go.Bar(
                orientation="h",
                base=seg["base"],
                x=seg["x"],
                y=seg["y"],
                name=esc(phase),
                marker={"color": PHASE_COLOURS[phase]},
                hovertext=seg["hover"],
                hoverinfo="text",
                legendgroup=phase,
                width=0.6,
            )
        )
        trace_groups.append(group)
    all_rows = [r for g in sorted(rows_by_group, key=str) for r in rows_by_group[g]]
    shapes, notes = rebalance_shapes(rebalances, annotate=len(rebalances) <= 30)
    layout = {
        **time_layout(f"Rebalance phases per member: join, sync / assign, running{left_out}", all_rows),
        "shapes": [s for s in shapes if s["type"] == "line"],
        "annotations": notes,
    }
    layouts = {
        None: {"shapes": [s for s in shapes if s["type"] == "line"], "annotations": notes, "yaxis.categoryarray": list(reversed(all_rows))}
    }
    by_group = _by_group(rebalances)
    for group in groups:
        own, n = rebalance_shapes(by_group.get(group, []), annotate=True)
        layouts[group] = {
            "shapes": [s for s in own if s["type"] == "line"],
            "annotations": n,
            "yaxis.categoryarray": list(reversed(rows_by_group.get(group, []))),
            "height": figure_height(len(rows_by_group.get(group, []))),
        }
    layouts[None]["height"] = figure_height(len(all_rows))
    return Figure(grouped_figure(traces, trace_groups, layout, ranked_groups(result, groups), layouts))


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
    result, left_out = menu_groups(result, ("commits",))
    commits = [c for c in result.get("commits") or [] if c.get("ts")]
    if not commits:
        return empty_figure("Committed offsets", "No commits, resets or offset dumps in the selected logs.")
    groups = sorted({group_of(c) for c in commits if group_of(c)})
    multi = len(groups) > 1
    texts = {} if redact else cited_lines(repositioning_evidence(commits)[:500])
    traces, trace_groups = [], []
    by_partition: dict[tuple, list[dict]] = {}
    for c in commits:
        by_partition.setdefault((group_of(c), c.get("topic"), c.get("partition")), []).append(c)
    for i, ((group, topic, partition), mine) in enumerate(sorted(by_partition.items(), key=lambda kv: str(kv[0]))):
        line = [c for c in mine if c.get("kind") in COMMITTED_KINDS and c.get("offset") is not None]
        name = row_label(group, topic, partition, multi)
        colour = PALETTE[i % len(PALETTE)]
        if line:
            traces.append(
                go.Scatter(
                    x=[c["ts"] for c in line],
                    y=[c["offset"] for c in line],
                    mode="lines+markers",
                    line={"shape": "hv", "color": colour},
                    marker={"size": 5},
                    name=esc(name),
                    legendgroup=esc(name),
                    hoverinfo="text",
                    hovertext=[_commit_hover(c, texts) for c in line],
                )
            )
            trace_groups.append(group)
        marks = [c for c in mine if _repositions(c) and c.get("offset") is not None]
        if marks:
            traces.append(
                go.Scatter(
                    x=[c["ts"] for c in marks],
                    y=[c["offset"] for c in marks],
                    mode="markers+text",
                    name=esc(f"{name}: resets / backward"),
                    legendgroup=esc(name),
                    showlegend=False,
                    marker={
                        "size": 13,
                        "symbol": ["x" if _backward(c) else "diamond" for c in marks],
                        "color": ["#c62828" if _backward(c) else "#ef6c00" for c in marks],
                    },
                    text=[esc("backward" if _backward(c) else c["kind"]) for c in marks],
                    textposition="top center",
                    hovertext=[_commit_hover(c, texts) for c in marks],
                    hoverinfo="text",
                )
            )
            trace_groups.append(group)
    layout = {
        "title": {"text": esc(f"Committed offset per partition (x: commit below the previous one, ◆: offset reset){left_out}"), "x": 0.01},
        "height": 480,
        "hovermode": "closest",
        "margin": {"l": 10, "r": 10, "t": 70, "b": 40},
        "xaxis": {"type": "date", "rangeslider": {"visible": True, "thickness": 0.06}, "title": {"text": "time (UTC)"}},
        "yaxis": {"title": {"text": "offset"}, "rangemode": "tozero"},
        "hoverlabel": {"align": "left", "font": {"family": "monospace", "size": 11}},
    }
    return Figure(grouped_figure(traces, trace_groups, layout, ranked_groups(result, groups), {g: {} for g in [None, *groups]}))


def _repositions(commit: dict) -> bool:
    """A reset or seek (``REPOSITIONING_KINDS``), or a commit that went back."""
    return commit.get("kind") in REPOSITIONING_KINDS or _backward(commit)


def repositioning_evidence(commits: list[dict]) -> list[dict]:
    """The log lines of the commits ``committed_offsets`` marks (``_repositions``), in order."""
    return [{"file": c["source_file"], "line": c["line"]} for c in commits if _repositions(c) and c.get("source_file")]


def _backward(commit: dict) -> bool:
    return (
        commit.get("kind") == COMMIT
        and commit.get("previous_offset") is not None
        and commit.get("offset") is not None
        and commit["offset"] < commit["previous_offset"]
    )


def _commit_hover(c: dict, texts: dict) -> str:
    owner = "" if c.get("in_own_interval") in (None, True) else "<br><b>committer did not own the partition</b>"
    back = f"<br><b>went back {c['previous_offset'] - c['offset']:,} from {c['previous_offset']:,}</b>" if _backward(c) else ""
    evidence = evidence_hover([{"file": c["source_file"], "line": c["line"]}], texts) if c.get("source_file") else ""
    return (
        f"<b>{esc(c.get('kind'))} {esc(c.get('offset'))}</b> {esc(c.get('topic'))}-{esc(c.get('partition'))}<br>{esc(when(c.get('ts')))}<br>"
        f"by {esc(c.get('member') or c.get('source'))}, generation {esc(c.get('generation'))}{owner}{back}<br>{evidence}"
    )


def restore_progress(result: dict, redact: bool = False) -> Figure:
    """Per task and changelog: from the task's assignment to its restore's end (or to RUNNING),
    coloured by outcome; a red x where a task went RUNNING with its state reset but not restored."""
    restores = [r for r in result.get("restores") or [] if r.get("opened_ts")]
    if not restores:
        return empty_figure("Restore progress", "No Kafka Streams task assignments or restores in the selected logs.")
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
        entry["base"].append(iso(start))
        entry["x"].append(bar_ms(start, end))
        entry["y"].append(row)
        restored = f"{r.get('records_restored') or 0:,} records restored" + (
            f" of [{r['restore_from']:,}, {r['restore_to']:,})"
            if r.get("restore_from") is not None and r.get("restore_to") is not None
            else ""
        )
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
        traces.append(
            go.Bar(
                orientation="h",
                base=entry["base"],
                x=entry["x"],
                y=entry["y"],
                name=esc(status),
                marker={"color": colours[status]},
                hovertext=entry["hover"],
                hoverinfo="text",
                legendgroup=esc(status),
                width=0.6,
            )
        )
        if entry["run_x"]:
            traces.append(
                go.Scatter(
                    x=entry["run_x"],
                    y=entry["run_y"],
                    mode="markers",
                    name=esc(f"RUNNING ({status})"),
                    legendgroup=esc(status),
                    showlegend=False,
                    marker={
                        "symbol": "x" if status == "RUNNING without restore" else "line-ns-open",
                        "size": 12,
                        "color": colours[status],
                        "line": {"width": 2, "color": colours[status]},
                    },
                    hoverinfo="text",
                    hovertext=[esc(f"RUNNING at {when(x)}") for x in entry["run_x"]],
                )
            )
    return Figure(go.Figure(data=traces, layout=time_layout("Kafka Streams tasks: assignment to restore end or RUNNING", rows)))
