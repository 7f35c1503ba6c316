"""``load_incident`` and ``Incident``: one call per view of an analysed incident."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

from ..redact import path_names
from . import figures, tables
from .data import analyse, check_window, groups, read_result, redact_with, select
from .escape import esc
from .evidence import cited_lines
from .plotting import Figure
from .views import Html, Table, rows_html

MAX_DRILLDOWN_LINES = 200


@dataclass(frozen=True)
class Incident:
    """An analysed incident, possibly narrowed (``.select``). ``result`` is the JSON result."""

    result: dict
    full: dict
    params: dict = field(default_factory=dict)

    # --- narrowing --------------------------------------------------------------------------
    def select(self, group=None, window=None, topic=None, partition=None, detectors=None) -> Incident:
        """The same incident narrowed to a group, time window, topic/partition and detectors."""
        narrowed = select(self.full, group=group, window=window, topic=topic, partition=partition, detectors=detectors)
        params = {**self.params, "group": group, "window": None if window is None else tuple(window)}
        return replace(self, result=narrowed, params=params)

    @property
    def groups(self) -> list[str]:
        return groups(self.full)

    @property
    def title(self) -> str:
        return self.params.get("title") or "Kafka rebalance incident"

    @property
    def redacted(self) -> bool:
        return bool(self.params.get("redact")) or bool(self.result.get("redacted"))

    def _masked(self) -> str:
        """ "; pseudonymised: 4 host, 6 client, ..." for a redacted result (what was masked, how many)."""
        if not self.redacted:
            return ""
        masked = (self.result.get("redaction") or {}).get("masked") or {}
        counts = ", ".join(f"{n} {kind}" for kind, n in masked.items())
        return f"; identifiers pseudonymised{': ' + counts if counts else ''}; log text hidden"

    # --- views --------------------------------------------------------------------------------
    def headline(self) -> dict:
        return tables.headline(self.result)

    def summary(self) -> Html:
        """Title, verdict badges and the headline numbers."""
        h = self.headline()
        badges = (
            "".join(f'<span class="forensics-badge {esc(v)}">{esc(n)} {esc(v)}</span>' for v, n in h["by_verdict"].items() if n)
            or '<span class="forensics-badge none">no findings</span>'
        )
        lost = tables.damage_text(h, "lost")
        dup = tables.damage_text(h, "duplicated")
        scope = [f"group {self.params['group']}" if self.params.get("group") else "all groups"]
        if self.params.get("window"):
            scope.append("window " + " to ".join(str(w or "…") for w in self.params["window"]))
        text = (
            f"{self.title}: {h['findings']} findings; records lost {lost}, duplicated {dup}; "
            f"{h['rebalances']} rebalances in {h['groups']} group(s), {h['first']} to {h['last']}"
        )
        parts = (
            f"<h1>{esc(self.title)}</h1>",
            f'<p class="forensics-headline">{badges}</p>',
            f'<p class="forensics-headline"><b>Records lost: {esc(lost)}</b> &nbsp; <b>Records processed twice: {esc(dup)}</b></p>',
            f'<p class="forensics-caption">{esc(h["findings"])} findings, {esc(h["rebalances"])} rebalances in {esc(h["groups"])} group(s), '
            f"{esc(h['first'] or '?')} to {esc(h['last'] or '?')}; {esc(', '.join(scope))}"
            f"{esc(self._masked())}.</p>",
        )
        return Html(parts, text)

    def inputs(self) -> Table:
        return Table(tables.inputs_table(self.result), "Files read", "Every input file, its host, layout and time zone.")

    def accounting(self) -> Table:
        return Table(tables.accounting_table(self.result), "Line accounting", "Every line read lands in exactly one bucket.")

    def clock_skew(self) -> Table:
        return Table(
            tables.clock_table(self.result),
            "Clock skew per host",
            "Estimated from the coordinator's simultaneous answers; offsets of 500 ms or more were corrected.",
            empty="no clock estimates",
        )

    def findings_table(self) -> Table:
        return Table(
            tables.findings_table(self.result),
            "Findings",
            "Damage first; # is the number for incident.finding(#).",
            row_class=None,
            empty="no findings",
        )

    def verdict_table(self) -> Table:
        frame = tables.verdict_table(self.result)
        return Table(
            frame,
            "Lost and duplicated offset ranges",
            "Ranges are half-open [from, to); records = to - from.",
            row_class="verdict",
            empty="No records were lost or processed twice.",
        )

    def rebalance_table(self) -> Table:
        return Table(tables.rebalance_table(self.result), "Rebalances", "One row per group and generation.", empty="no rebalances")

    def rebalance(self, index: int, texts: dict | None = None) -> Html:
        """One rebalance: what started it, how long the group stood still, what moved. ``texts``:
        its evidence line's log text, already read (``each_rebalance``); else read here."""
        r = (self.result.get("rebalances") or [])[index]
        if texts is None:
            texts = self._cited(_rebalance_evidence(r))
        stopped = "unknown" if r.get("duration_ms") is None else f"{r['duration_ms']:,} ms"
        parts = [
            f"<h4>{esc(r.get('group'))}, generation {esc(r.get('generation'))}</h4>",
            f"<p>{esc(tables.when(r.get('start')))}: stood still {esc(stopped)}; trigger: <b>{esc(r.get('trigger'))}</b>; "
            f"{esc(len(r.get('members') or []))} member(s), leader {esc(r.get('leader') or '?')}, protocol {esc(r.get('protocol_type') or r.get('protocol') or '?')}.</p>",
        ]
        if r.get("members_joined") or r.get("members_left"):
            parts.append(
                f"<p>joined: {esc(', '.join(r.get('members_joined') or []) or '-')}; left: {esc(', '.join(r.get('members_left') or []) or '-')}</p>"
            )
        parts.append(_evidence_html([r["evidence"]] if r.get("evidence") else [], texts))
        parts.append(rows_html(tables.MOVE_COLUMNS, tables.moves(r), empty="no partition moved"))
        return Html(tuple(parts), f"rebalance {r.get('group')} generation {r.get('generation')}")

    def finding(self, index: int, texts: dict | None = None) -> Html:
        """Drill-down of finding ``index``: explanation, evidence lines with their log text, remedy.
        ``texts``: the log text of its evidence lines, already read (``each_finding``); else read here."""
        findings = self.result.get("findings") or []
        if not 0 <= index < len(findings):
            raise IndexError(f"finding {index} does not exist; there are {len(findings)} (see findings_table()).")
        f = findings[index]
        evidence = _drilldown_evidence(f)
        if texts is None:
            texts = self._cited(evidence)
        span = tables.offset_range(f)
        records = f"{f['records']:,} records" if f.get("records") is not None else ""
        parts = (
            f'<h4><span class="forensics-badge {esc(f["verdict"])}">{esc(f["verdict"])}</span>#{esc(index)} {esc(f["detector"])}: '
            f"{esc(f.get('group'))} {esc(tables.where(f))} {esc(span)} {esc(records)}</h4>",
            f'<p class="forensics-caption">severity {esc(f.get("severity"))}; {esc(tables.when(f.get("start")))} to {esc(tables.when(f.get("end")))}; '
            f"member {esc(f.get('member') or '-')}; classification {esc(f.get('classification') or '-')}</p>",
            f"<p>{esc(f.get('explanation'))}</p>",
            f"<p><b>Evidence</b> ({esc(len(f.get('evidence') or []))} lines)</p>",
            _evidence_html(evidence, texts),
            f"<p><b>Remedy.</b> {esc(f.get('remedy'))}</p>",
            f'<p class="forensics-caption">Kafka reference: {esc(f.get("kafka_reference"))}</p>',
        )
        return Html(parts, f"finding {index}: {f['verdict']} {f['detector']} {tables.where(f)} {span}")

    def each_rebalance(self) -> Html:
        """Every rebalance's section (``rebalance(i)``), in order; the evidence lines of all of
        them read together, each file once (``evidence.cited_lines``)."""
        rebalances = self.result.get("rebalances") or []
        texts = self._cited(e for r in rebalances for e in _rebalance_evidence(r))
        blocks = [self.rebalance(i, texts) for i in range(len(rebalances))]
        return Html(tuple(p for b in blocks for p in b.parts) or ("<p>no rebalances</p>",), f"{len(blocks)} rebalances")

    def each_finding(self) -> Html:
        """Every finding's drill-down (``finding(i)``), damage first; the evidence lines of all
        of them read together, each file once, not once per finding."""
        findings = self.result.get("findings") or []
        order = tables.findings_table(self.result)["#"].tolist() if findings else []
        texts = self._cited(e for f in findings for e in _drilldown_evidence(f))
        blocks = [self.finding(int(i), texts) for i in order]
        return Html(tuple(p for b in blocks for p in b.parts) or ("<p>no findings</p>",), f"{len(blocks)} findings")

    def _cited(self, evidence) -> dict:
        """The log text of ``evidence`` lines (none for a redacted incident: its text is hidden)."""
        self._read_every_cited()
        return {} if self.redacted else cited_lines(evidence)

    def _read_every_cited(self) -> None:
        """Read every line the views of the whole incident cite (``every_cited``), one pass per
        file, before a view asks for its own: ``evidence.cited_lines`` then answers each view from
        what it read, where each view would read the files again. A view that cites a line not
        among them reads again."""
        if not self.redacted:
            cited_lines(every_cited(self.full))

    def unparsed(self) -> Table:
        return Table(
            tables.unparsed_table(self.result),
            "Lines not understood (first samples)",
            "Unparsed lines and Kafka lines no catalogue template knows.",
            empty="Every line was understood.",
        )

    def restores_table(self) -> Table:
        return Table(tables.restores_table(self.result), "Kafka Streams task restores", empty="no Kafka Streams restores")

    # --- figures ------------------------------------------------------------------------------
    def timeline(self) -> Figure:
        self._read_every_cited()
        return figures.ownership_timeline(self.result, redact=self.redacted)

    def rebalance_phases(self) -> Figure:
        self._read_every_cited()
        return figures.rebalance_phases(self.result, redact=self.redacted)

    def committed_offsets(self) -> Figure:
        self._read_every_cited()
        return figures.committed_offsets(self.result, redact=self.redacted)

    def restore_progress(self) -> Figure:
        return figures.restore_progress(self.result, redact=self.redacted)

    def explorer(self):
        """An ipywidgets explorer (JupyterLab): group, partition, time range, detectors."""
        from .explorer import Explorer

        return Explorer(self)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()


def _drilldown_evidence(finding: dict) -> list[dict]:
    """The evidence lines a finding's drill-down shows: the first ``MAX_DRILLDOWN_LINES``."""
    return (finding.get("evidence") or [])[:MAX_DRILLDOWN_LINES]


def every_cited(result: dict) -> list[dict]:
    """The evidence lines the views of ``result`` cite: the findings' drill-downs (which hold
    their hovers' lines), the rebalances' lines and the lines of the commits that move an offset
    back or reset it."""
    return [
        *(e for f in result.get("findings") or [] for e in _drilldown_evidence(f)),
        *(e for r in result.get("rebalances") or [] for e in _rebalance_evidence(r)),
        *figures.repositioning_evidence(result.get("commits") or []),
    ]


def _rebalance_evidence(rebalance: dict) -> list[dict]:
    """A rebalance's evidence line, if it names its file."""
    evidence = rebalance.get("evidence")
    return [evidence] if evidence and evidence.get("file") else []


def _evidence_html(evidence: list[dict], texts: dict) -> str:
    rows = []
    for entry in evidence:
        if not entry or not entry.get("file"):
            continue
        text = texts.get((entry["file"], entry.get("line")))
        shown = "(log text not shown)" if text is None else text
        rows.append(f'<div class="forensics-log"><b>{esc(entry["file"])}:{esc(entry.get("line"))}</b>\n{esc(shown)}</div>')
    return "".join(rows) or '<p class="forensics-caption">no evidence lines</p>'


def load_incident(
    paths: Sequence[str] = (),
    offsets: Sequence[str] = (),
    tz: str = "UTC",
    group: str | None = None,
    window=None,
    title: str | None = None,
    redact: bool = False,
    analysis_json: str | None = None,
    spark=None,
    layout: str | None = None,
    columns: str | None = None,
) -> Incident:
    """Analyse ``paths`` / ``offsets`` once (shared SparkSession), or read ``analysis_json``
    (no Spark at all), then narrow to ``group`` and ``window`` (ISO start, end). ``layout``: a
    logback / log4j2 / Python ``logging`` pattern for logs in a layout that is not recognised;
    ``columns``: an export's columns by role, as ``--columns`` takes them (``time=..,message=..``)."""
    if isinstance(paths, str):
        paths = [paths]
    if isinstance(offsets, str):
        offsets = [offsets]
    check_window(window)
    if analysis_json:
        result = read_result(analysis_json)
    else:
        # Imported here: it loads pyspark, which reading a saved analysis_json never needs.
        from ..ingest.exports import parse_columns_option

        result = analyse(paths, offsets, tz=tz, spark=spark, layout=layout, columns=parse_columns_option(columns) if columns else None)
    redactor = None
    if redact:
        files = [e.get("path") for e in result.get("inputs") or []]
        result, redactor = redact_with(result)
    if redactor is not None:  # what the caller typed, masked as the result is: the group still selects, no input named in the title
        redactor.learn(path_names(files, () if analysis_json else [*paths, *offsets]))
        title, group = redactor.text(title), redactor.name("group", group)
    params = {
        "paths": list(paths),
        "offsets": list(offsets),
        "tz": tz,
        "title": title,
        "redact": redact,
        "analysis_json": analysis_json,
        "layout": layout,
        "columns": columns,
    }
    return Incident(result, result, params).select(group=group, window=window)
