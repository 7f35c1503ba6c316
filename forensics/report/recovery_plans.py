"""The recovery plans rendered: the report's "What to do now" (HTML) and what ``forensics plan``
writes (``plan.md``, one ``--from-file`` CSV per consumer group, ``recovery.json``).

Everything renders from the analysis JSON through ``forensics.recovery``; names read from the
logs are untrusted: ``esc`` in HTML, entities and one-line text in Markdown, shell-quoted in
commands (``forensics.recovery``), and legal topic names only in the CSV files.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pandas as pd

from ..errors import ForensicsError
from ..package import __version__
from ..recovery import csv_file_name, csv_text, plan_items, reset_rows_by_group
from ..recovery.commands import CSV_PREFIX
from ..recovery.planning import DEDUPLICATE, KINDS, MANUAL, RECONSUME, RESTORE_STATE, UNRECOVERABLE
from .escape import esc
from .tables import offset_range, when, where
from .views import Html, table_html

NOTHING = "No records were lost or processed twice: nothing to recover."
INTRO = (
    "Nothing has been executed. forensics plan PATH... -o DIR writes these steps to DIR/plan.md, with the --from-file CSV of each group."
)
SECTIONS = {
    RECONSUME: "Re-consume lost records",
    UNRECOVERABLE: "Records no longer in Kafka",
    DEDUPLICATE: "Duplicates to de-duplicate downstream",
    RESTORE_STATE: "Kafka Streams state to rebuild",
    MANUAL: "Findings to plan by hand",
}
"""Section titles, in the order plan.md lists them."""
STEP_ORDER = (
    "check_log_start",
    "describe",
    "stop",
    "check_inactive",
    "dry_run",
    "execute",
    "restart",
    "verify",
    "recover_from_source",
    "read_range",
    "read_range_kcat",
    "deduplicate",
    "stop_instance",
    "remove_task_state",
    "restart_instance",
    "verify_restore",
    "app_reset_dry_run",
    "app_reset",
    "clean_local_state",
)
SECURED = (
    "For a secured cluster add --command-config FILE to kafka-consumer-groups.sh and kafka-get-offsets.sh, "
    "--consumer.config FILE to kafka-console-consumer.sh, --config-file FILE to kafka-streams-application-reset.sh."
)


# --- HTML: the report's "What to do now" -------------------------------------------------------


def _window_html(window: dict | None) -> str:
    if not window:
        return ""
    span = f"{when(window.get('from')) or '?'} to {when(window.get('to')) or 'open'}"
    return f'<p class="forensics-caption">Window: {esc(span)}; {esc(window.get("basis"))}.</p>'


def _where_run(step: dict) -> str:
    """`` (on HOST)`` unless the step's title names its host already."""
    return f" (on {step['host']})" if step.get("host") and step["host"] not in step["title"] else ""


def _step_html(step: dict) -> str:
    where_run = _where_run(step)
    optional = " (optional)" if step.get("optional") else ""
    command = f'<div class="forensics-log">{esc(step["command"])}</div>' if step.get("command") else ""
    return f'<li><b>{esc(step["title"])}</b>{esc(where_run + optional)}{command}<div class="forensics-caption">{esc(step.get("note"))}</div></li>'


def _rows_html(recovery: dict) -> str:
    if not recovery.get("reset_rows"):
        return ""
    frame = pd.DataFrame(recovery["reset_rows"], columns=["group", "topic", "partition", "offset"])
    return (
        f'<p class="forensics-caption">Rows of {esc(recovery["csv_file"])} (topic,partition,offset; no header), '
        f"for kafka-consumer-groups.sh --reset-offsets --from-file:</p>" + table_html(frame)
    )


def item_html(number: int, finding: dict, recovery: dict) -> str:
    """One finding's plan: summary, window, retention, reset rows, steps in order, caveats."""
    retention = recovery.get("retention") or {}
    caveats = [c for c in recovery.get("caveats") or [] if c != retention.get("note")]
    return "".join(
        (
            f'<h4><span class="forensics-badge {esc(finding["verdict"])}">{esc(finding["verdict"])}</span>#{esc(number)} '
            f"{esc(finding['detector'])}: {esc(finding.get('group'))} {esc(where(finding))} {esc(offset_range(finding))}</h4>",
            f"<p>{esc(recovery.get('summary'))}</p>",
            _window_html(recovery.get("window")),
            f"<p><b>Retention.</b> {esc(retention['note'])}</p>" if retention.get("note") else "",
            _rows_html(recovery),
            "<ol>" + "".join(_step_html(s) for s in recovery.get("steps") or []) + "</ol>",
            "<ul>" + "".join(f"<li>{esc(c)}</li>" for c in caveats) + "</ul>" if caveats else "",
        )
    )


def what_to_do_now(result: dict) -> Html:
    """The recovery plan of every loss and duplication in ``result``, as the report shows it."""
    items = sorted(plan_items(result), key=lambda item: KINDS.index(item[2]["kind"]))
    if not items:
        return Html((f'<p class="forensics-caption">{esc(NOTHING)}</p>',), NOTHING)
    parts = (f'<p class="forensics-caption">{esc(INTRO)}</p>', *(item_html(n, f, r) for n, f, r in items))
    return Html(parts, f"{len(items)} recovery plan(s): " + "; ".join(r["summary"] for _, _, r in items))


# --- Markdown: plan.md -------------------------------------------------------------------------


def md_text(value) -> str:
    """Untrusted text on one Markdown line: no line breaks, no raw HTML."""
    text = re.sub(r"\s+", " ", str("" if value is None else value)).strip()
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_code_block(text: str) -> str:
    """``text`` as a fenced shell block whose fence no backtick run inside can close."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{fence}sh\n{text}\n{fence}"


def _bootstrap_block(recoveries: list[dict]) -> str:
    known = next((r["bootstrap_servers"] for r in recoveries if r.get("bootstrap_servers")), None)
    if known:
        return md_code_block(f"export BOOTSTRAP_SERVERS={shlex.quote(known)}  # bootstrap.servers in the clients' config")
    return md_code_block("export BOOTSTRAP_SERVERS='<host:port,...>'  # not in the logs: the cluster's brokers")


def _ordered_steps(recoveries: list[dict]) -> list[dict]:
    """The steps of ``recoveries`` in ``STEP_ORDER``, each distinct step once (a group's reset
    steps are shared by its ranges)."""
    seen, steps = set(), []
    for step in sorted(
        (s for r in recoveries for s in r.get("steps") or []),
        key=lambda s: STEP_ORDER.index(s["step"]) if s["step"] in STEP_ORDER else len(STEP_ORDER),
    ):
        key = (step["step"], step.get("command"), step["title"], step.get("host"))
        if key not in seen:
            seen.add(key)
            steps.append(step)
    return steps


def _steps_md(recoveries: list[dict]) -> list[str]:
    lines = ["1. Set the brokers the commands use:", "", _bootstrap_block(recoveries), ""]
    for number, step in enumerate(_ordered_steps(recoveries), start=2):
        optional = "Optional: " if step.get("optional") else ""
        lines.append(f"{number}. {optional}{md_text(step['title'] + _where_run(step))}. {md_text(step.get('note'))}")
        if step.get("command"):
            lines += ["", md_code_block(step["command"])]
        lines.append("")
    return lines


def _covers_md(items: list[tuple[int, dict, dict]]) -> list[str]:
    lines = []
    for number, finding, recovery in items:
        window = recovery.get("window") or {}
        lines.append(
            f"- Finding #{number} ({md_text(finding['detector'])}, {md_text(finding['verdict'])}): {md_text(recovery['summary'])} "
            f"Window: {md_text(when(window.get('from')) or '?')} to {md_text(when(window.get('to')) or 'open')}."
        )
        lines += [f"  - {md_text(c)}" for c in recovery.get("caveats") or []]
    return lines


def _section_md(title: str, items: list[tuple[int, dict, dict]], csv_rows: list[dict] | None = None) -> list[str]:
    lines = [f"## {md_text(title)}", "", *_covers_md(items), ""]
    if csv_rows:
        name = items[0][2]["csv_file"]
        lines += [
            f"Reset file `{md_text(name)}` (topic,partition,offset; no header):",
            "",
            md_code_block(csv_text(csv_rows).rstrip("\n")),
            "",
        ]
    return lines + _steps_md([r for _, _, r in items])


def plan_markdown(result: dict, source: str = "") -> str:
    """``plan.md``: every recovery step in order, per consumer group first, then the rest by kind."""
    items = plan_items(result)
    lines = [
        "# Recovery plan",
        "",
        f"Written by forensics {md_text(__version__)}{' from ' + md_text(source) if source else ''}. "
        "Nothing in it has been executed: run the steps in order and read each output before the next. Ranges are half-open "
        "[from, to). Run the commands in this directory (the reset files are here). " + SECURED,
        "",
    ]
    if not items:
        return "\n".join(lines + [NOTHING, ""])
    rows = reset_rows_by_group(result)
    for group in rows:
        group_items = [i for i in items if i[2]["kind"] == RECONSUME and i[2]["group"] == group]
        lines += _section_md(f"Group {group}: {SECTIONS[RECONSUME].lower()}", group_items, rows[group])
    for kind in (UNRECOVERABLE, DEDUPLICATE, RESTORE_STATE, MANUAL):
        for item in [i for i in items if i[2]["kind"] == kind]:
            lines += _section_md(f"{SECTIONS[kind]}: finding #{item[0]}", [item])
    return "\n".join(lines)


# --- the files of `forensics plan` -------------------------------------------------------------


def plan_files(result: dict, source: str = "") -> dict[str, str]:
    """File name -> text: one ``--from-file`` CSV per consumer group, ``plan.md``, ``recovery.json``."""
    files = {csv_file_name(group): csv_text(rows) for group, rows in reset_rows_by_group(result).items()}
    files["plan.md"] = plan_markdown(result, source)
    items = [
        {
            "finding": n,
            **{
                k: f.get(k)
                for k in (
                    "detector",
                    "verdict",
                    "group",
                    "topic",
                    "partition",
                    "task",
                    "offset_from",
                    "offset_to",
                    "records",
                    "exact",
                    "start",
                    "end",
                    "evidence",
                )
            },
            "recovery": r,
        }
        for n, f, r in plan_items(result)
    ]
    files["recovery.json"] = json.dumps({"tool_version": __version__, "source": source, "items": items}, indent=2, default=str) + "\n"
    return files


def write_plan(result: dict, outdir, source: str = "") -> list[Path]:
    """Write ``plan_files`` into ``outdir``; refuse a directory that holds another plan's reset files."""
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise ForensicsError(f"{str(outdir)!r} is not a directory.", "Give -o a directory for the plan.")
    files = plan_files(result, source)
    stale = sorted(p.name for p in outdir.glob(f"{CSV_PREFIX}*.csv") if p.name not in files) if outdir.exists() else []
    if stale:
        raise ForensicsError(f"{outdir} holds reset files of another plan ({', '.join(stale)}).", "Give -o an empty or new directory.")
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = outdir / name
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        written.append(path)
    return written
