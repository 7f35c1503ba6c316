"""``forensics``: the command line. Errors print one line on stderr; ``--debug`` shows the trace."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections import Counter
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, TextIO

import click

from ..errors import ForensicsError
from ..package import __version__


def imported_meanwhile(modules: Iterable[str]) -> threading.Thread:
    """Import ``modules`` on a thread of their own, while this one waits for the driver JVM to
    start and for the analysis (mostly on py4j's socket, not holding the interpreter); a module
    that fails to import is left for the command's own import to report."""

    def load() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # reported by the import that needs it
                pass

    thread = threading.Thread(target=load, name="forensics-imports", daemon=True)
    thread.start()
    return thread


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    """``("GLOB=VALUE", ...)`` -> dict; a value without ``=`` is a usage error."""
    pairs = {}
    for value in values:
        key, sep, target = value.partition("=")
        if not sep or not key or not target:
            raise click.BadParameter(f"expected PATTERN=VALUE, got {value!r}", param_hint=option)
        pairs[key] = target
    return pairs


def _run(debug: bool, action: Callable[[], None]) -> None:
    """Run ``action``; turn any failure into one line on stderr and a non-zero exit."""
    try:
        action()
    except ForensicsError as exc:
        if debug:
            raise
        click.echo(f"forensics: error: {exc}", err=True)
        sys.exit(2)
    except Exception as exc:  # Spark/Py4J errors: never a Java stack trace on the console
        if debug:
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:400]
        ended = _driver_ended()
        cause = f" {ended}" if ended else ""
        click.echo(f"forensics: error: {type(exc).__name__}: {first}{cause} (run with --debug for the trace)", err=True)
        sys.exit(1)


def _driver_ended() -> str | None:
    """``spark.driver_ended`` where pyspark was loaded (it is not for a report from saved JSON)."""
    if "pyspark" not in sys.modules:
        return None
    from ..spark import driver_ended

    return driver_ended()


def _checked_session(paths, offsets, tz, layout, columns, master, debug, hosts=None, tz_by_source=None):
    """Spark, the parsed export columns and the routed inputs (``ingest.route_inputs``: logs
    and offset dumps, resolved once), once mistakes in paths, zones, the layout, the export
    columns or the master have been reported before Spark starts."""
    from ..ingest import check_time_zone, route_inputs, user_layout
    from ..ingest.exports import parse_columns_option
    from ..ingest.paths import check_named_files
    from ..offsets import sniff_file

    check_time_zone(tz)
    user_layout(layout)
    export_columns = parse_columns_option(columns) if columns else None
    check_named_files(list(paths) + list(offsets))
    inputs = route_inputs(paths, offsets, sniff_file, hosts, tz, tz_by_source)
    return _session(master, debug, inputs), export_columns, inputs


def _session(master: str | None, debug: bool, inputs=None):
    """The SparkSession of one command on ``--master`` (resolved), its driver JVM started with
    ``session_jvm_options``; quiet unless ``--debug``."""
    from ..spark import get_session, resolve_master

    url = resolve_master(master)
    return get_session(url, quiet=not debug, jvm_options=session_jvm_options(url, inputs))


def session_jvm_options(master: str, inputs=None) -> tuple[str, ...]:
    """The driver JVM options of one command that analyses ``inputs`` (one incident or a batch):
    ``spark.local_jvm_options``, with the quick JIT tier if they are small together
    (``analyze.is_small_incident``)."""
    from ..analyze import is_small_incident
    from ..spark import local_jvm_options

    return local_jvm_options(master, small_work=inputs is not None and is_small_incident(inputs.files))


def _analyse(paths, offsets, tz, layout, columns, master, debug, hosts=None, tz_by_source=None, json_to=None) -> dict:
    """The analysis JSON of ``paths`` and ``offsets`` (``_checked_session`` first)."""
    from ..analyze import analyze as run_analysis

    spark, export_columns, inputs = _checked_session(paths, offsets, tz, layout, columns, master, debug, hosts, tz_by_source)
    return run_analysis(spark, layout=layout, columns=export_columns, json_to=json_to, inputs=inputs)


@contextmanager
def _json_output(target: str | None) -> Iterator[TextIO | None]:
    """The handle ``forensics analyze --json`` writes to: standard output for ``-``; for a file,
    a temporary file beside it that takes its name once the analysis is written whole (a failed
    run leaves no half-written result). None without ``--json``."""
    if target is None:
        yield None
    elif target == "-":
        yield sys.stdout
    else:
        folder, name = os.path.split(os.path.abspath(target))
        os.makedirs(folder, exist_ok=True)
        partial = os.path.join(folder, f".{name}.{os.getpid()}.part")
        try:
            with open(partial, "w", encoding="utf-8") as handle:
                yield handle
            os.replace(partial, target)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)


def format_summary(result: dict) -> str:
    """Plain-text accounting summary: what was read and where every line went."""
    acc = result["accounting"]
    lines = [f"Analysed {acc['files']} file(s), {acc['lines']:,} lines:"]
    for bucket, label in (
        ("records", "Kafka records"),
        ("continuations", "continuation lines (stack traces, wrapped text)"),
        ("irrelevant", "records of other loggers"),
        ("unparsed", "lines not understood"),
    ):
        share = 100.0 * acc[bucket] / acc["lines"] if acc["lines"] else 0.0
        lines.append(f"  {acc[bucket]:>12,}  {share:5.1f} %  {label}")
    if "events" in acc:
        lines.append(
            f"  {'':>12}           {acc['events']:,} typed events, {acc['unrecognised_kafka']:,} Kafka lines the catalogue does not know"
        )
    for reason, count in acc["unparsed_by_reason"].items():
        lines.append(f"  {'':>12}           {count:,} {reason}")
    offsets = result.get("offsets") or {}
    if offsets.get("rows"):
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in offsets["by_kind"].items())
        lines.append(f"Offset dumps: {offsets['rows']:,} rows ({kinds}), {len(offsets['snapshots'])} snapshot time(s)")
    skewed = [c for c in result.get("clock_skew", []) if c.get("corrected")]
    for clock in skewed:
        lines.append(
            f"Clock of {clock['host']} corrected by {-clock['offset_ms']:+,} ms (+/- {clock['uncertainty_ms']} ms, "
            f"reference {clock['reference']}, {clock['samples']} generation(s))"
        )
    rebalances = [
        f"  {rebalance['group']} generation {rebalance['generation']}: {rebalance['start'] or 'start not logged'}, stopped "
        f"{'?' if rebalance['duration_ms'] is None else format(rebalance['duration_ms'], ',') + ' ms'}, "
        f"{len(rebalance['members'])} member(s), {len(rebalance['moved_partitions'])} partition(s) moved; {rebalance['trigger']}"
        for rebalance in result.get("rebalances") or []
    ]
    lines.extend(["Rebalances:", *rebalances] if rebalances else [])
    lines.extend(format_findings(result.get("findings", [])))
    lines.append("Inputs:")
    for entry in result["inputs"]:
        if entry.get("kind") == "log":
            zone = f"{entry['tz']}{' (assumed)' if entry['tz_assumed'] else ''}"
            lines.append(
                f"  {entry['host']:<16} {entry['layout'] or 'unknown layout':<12} {entry['lines']:>10,} lines"
                f"  {entry['records']:>8,} records  tz {zone}  {entry['path']}"
            )
        else:
            lines.append(f"  {entry['host']:<16} {'offset dump':<12} {entry['path']}")
        if entry.get("problem"):
            lines.append(f"      problem: {entry['problem']}")
        if entry.get("duplicate_of"):
            lines.append(f"      same content as {entry['duplicate_of']}: read once")
    return "\n".join(lines)


def format_findings(findings: Iterable[dict]) -> list[str]:
    """One line per finding, verdict first: what was hit, where, and the range affected."""
    findings = list(findings)
    if not findings:
        return ["Findings: none"]
    verdicts = Counter(f["verdict"] for f in findings)
    lines = [f"Findings: {len(findings)} (" + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) + ")"]
    for finding in findings:
        where = " ".join(
            part
            for part in (
                finding["group"],
                f"{finding['topic']}-{finding['partition']}"
                if finding["topic"] is not None and finding["partition"] is not None
                else finding["topic"],
                f"task {finding['task']}" if finding["task"] else None,
                finding["classification"],
            )
            if part
        )
        span = ""
        if finding["offset_from"] is not None and finding["offset_to"] is not None:
            bound = "" if finding["exact"] else " at most"
            span = f"  offsets [{finding['offset_from']:,}, {finding['offset_to']:,}){bound} {finding['records']:,} records"
        lines.append(f"  {finding['verdict'].upper():<12} {finding['detector']:<20} {where}{span}")
    return lines


OFFSETS = click.option(
    "--offsets",
    "offsets",
    multiple=True,
    metavar="PATH",
    help="Offset dump file (kafka-consumer-groups.sh, kafka-dump-log.sh, ...); repeatable.",
)
TZ = click.option("--tz", default="UTC", show_default=True, help="Time zone of timestamps that carry none.")
HOSTS = click.option("--host", "hosts", multiple=True, metavar="GLOB=HOST", help="Host name for the files matching GLOB; repeatable.")
LAYOUT = click.option(
    "--layout",
    default=None,
    metavar="PATTERN",
    help="The logs' layout as a logback / log4j2 pattern or a Python logging format, for layouts not recognised.",
)
COLUMNS = click.option(
    "--columns",
    default=None,
    metavar="ROLE=COLUMN,...",
    help="An export's columns by role (time, host, source, level, logger, thread, message) where their names do not "
    "tell; a column by its name or its position (1 the first, also in a CSV without a header), e.g. time=1,host=3,message=5.",
)
MASTER = click.option(
    "--master", default=None, metavar="URL", help="Spark master or Spark Connect URL [env FORENSICS_SPARK_MASTER; default local[*]]."
)
DEBUG = click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
REDACT = click.option(
    "--redact",
    is_flag=True,
    help="Pseudonymise hosts, IPs, client/member/instance/group ids and file paths; hide log text [key: env FORENSICS_REDACT_KEY].",
)
REDACT_TOPICS = click.option("--redact-topics", is_flag=True, help="With --redact, pseudonymise topic names too.")
"""The options several commands share, declared once."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="forensics")
def main() -> None:
    """Kafka consumer-group rebalance forensics on Spark."""


@main.command()
@click.argument("paths", nargs=-1)
@OFFSETS
@TZ
@click.option("--tz-source", multiple=True, metavar="GLOB=ZONE", help="Time zone for the files or host matching GLOB; repeatable.")
@HOSTS
@LAYOUT
@COLUMNS
@MASTER
@click.option("--json", "json_out", default=None, metavar="FILE|-", help="Write the machine-readable result to FILE, or - for stdout.")
@click.option("--quiet", is_flag=True, help="No summary on stdout.")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors, Spark's start-up output and the number of Spark jobs.")
def analyze(paths, offsets, tz, tz_source, hosts, layout, columns, master, json_out, quiet, debug) -> None:
    """Analyse Kafka client / Streams logs at PATHS (files, directories, globs; plain or .gz)."""

    def action() -> None:
        if not paths and not offsets:
            raise ForensicsError("Nothing to analyse.", "Give log paths and/or --offsets dump files.")
        options = {"hosts": _pairs(hosts, "--host"), "tz_by_source": _pairs(tz_source, "--tz-source")}
        with _json_output(json_out) as handle:
            result = _analyse(paths, offsets, tz, layout, columns, master, debug, json_to=handle, **options)
        if debug:
            click.echo(f"forensics: the analysis ran {result['spark'].get('jobs', '?')} Spark jobs", err=True)
        if not quiet and json_out != "-":
            click.echo(format_summary(result))
            if json_out:
                click.echo(f"JSON written to {json_out}")

    _run(debug, action)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@TZ
@HOSTS
@LAYOUT
@COLUMNS
@MASTER
@DEBUG
def layouts(paths, tz, hosts, layout, columns, master, debug) -> None:
    """Say what was recognised in each file at PATHS: layout, wrappers, a record split into fields, where every line went."""

    def action() -> None:
        from ..ingest import check_time_zone, ingest, resolve_inputs, user_layout
        from ..ingest.exports import parse_columns_option
        from ..ingest.paths import check_named_files

        check_time_zone(tz)
        user_layout(layout)
        export_columns = parse_columns_option(columns) if columns else None
        check_named_files(paths)
        resolve_inputs(paths)
        spark = _session(master, debug)
        click.echo(format_layouts(ingest(spark, paths, hosts=_pairs(hosts, "--host"), tz=tz, layout=layout, columns=export_columns).inputs))

    _run(debug, action)


@main.command()
@click.argument("paths", nargs=-1)
@OFFSETS
@TZ
@click.option(
    "--title", default=None, help="Report title [default: from the paths; with --redact, their pseudonyms, and a given title is masked]."
)
@click.option("--group", default=None, help="Show only this consumer group.")
@REDACT
@REDACT_TOPICS
@LAYOUT
@COLUMNS
@MASTER
@click.option(
    "-o", "--output", "out", required=True, metavar="FILE.html", help="The HTML report; .json, .ipynb and .manifest.json go beside it."
)
@DEBUG
def report(paths, offsets, tz, title, group, redact, redact_topics, layout, columns, master, out, debug) -> None:
    """Analyse PATHS and write one self-contained HTML report (no network needed to view it)."""

    def action() -> None:
        if not paths and not offsets:
            raise ForensicsError("Nothing to analyse.", "Give log paths and/or --offsets dump files.")
        from ..report.publish import RENDERING_MODULES, check_output, report_incident

        check_output(out)
        imported_meanwhile(RENDERING_MODULES)
        spark, export_columns, inputs = _checked_session(paths, offsets, tz, layout, columns, master, debug)
        files = report_incident(
            spark,
            paths,
            offsets,
            out,
            tz=tz,
            title=title,
            group=group,
            redact=redact,
            redact_topics=redact_topics,
            layout=layout,
            columns=export_columns,
            inputs=inputs,
        )
        click.echo(format_findings_headline(files.headline))
        click.echo(f"Report written to {files.html}")
        click.echo(
            f"  beside it: {files.notebook.name} (executed notebook), {files.json.name} (analysis), {files.manifest.name} (inputs, sha256, parameters)"
        )

    _run(debug, action)


@main.command()
@click.argument("dirs", nargs=-1, required=True)
@click.option("-o", "--output", "outdir", required=True, metavar="OUTDIR", help="Directory for the reports and index.html.")
@TZ
@REDACT
@REDACT_TOPICS
@MASTER
@DEBUG
def batch(dirs, outdir, tz, redact, redact_topics, master, debug) -> None:
    """Write one HTML report per incident directory in DIRS, and an index.html linking them."""

    def action() -> None:
        from ..ingest import Inputs, check_time_zone, route_inputs
        from ..offsets import sniff_file
        from ..report.publish import RENDERING_MODULES, batch_reports

        check_time_zone(tz)
        for directory in dirs:
            if not os.path.isdir(directory):
                raise ForensicsError(f"{directory!r} is not a directory.", "Give one directory per incident.")
        imported_meanwhile(RENDERING_MODULES)
        routed = {directory: route_inputs([directory], [], sniff_file, None, tz, None) for directory in dirs}
        every = Inputs([f for i in routed.values() for f in i.logs], [f for i in routed.values() for f in i.dumps])
        spark = _session(master, debug, every)
        with click.progressbar(
            dirs, label="Incidents", file=sys.stderr, item_show_func=lambda d: d and os.path.basename(os.path.normpath(d))
        ) as bar:
            index, failures = batch_reports(spark, bar, outdir, tz=tz, redact=redact, redact_topics=redact_topics, inputs=routed)
        click.echo(f"Index written to {index}")
        if failures:
            raise ForensicsError(
                f"{len(failures)} of {len(dirs)} incident(s) failed: " + "; ".join(failures),
                "See index.html and run those alone with `forensics report --debug`.",
            )

    _run(debug, action)


@main.command()
@click.argument("paths", nargs=-1)
@OFFSETS
@TZ
@LAYOUT
@COLUMNS
@click.option(
    "--analysis",
    "analysis_json",
    default=None,
    metavar="FILE",
    help="Plan from a saved `forensics analyze --json` result instead of PATHS (no Spark).",
)
@MASTER
@click.option(
    "-o", "--output", "outdir", required=True, metavar="DIR", help="Directory for plan.md, the --from-file CSV per group and recovery.json."
)
@DEBUG
def plan(paths, offsets, tz, layout, columns, analysis_json, master, outdir, debug) -> None:
    """Write the recovery plan of every loss and duplication at PATHS (or in --analysis FILE):
    plan.md with every command in order and a --from-file CSV per consumer group. Nothing is executed."""

    def action() -> None:
        if bool(analysis_json) == bool(paths or offsets):
            raise ForensicsError("Give log paths / --offsets dumps, or --analysis FILE (one of the two).", "See `forensics plan --help`.")
        from ..report.recovery_plans import write_plan

        if analysis_json:
            from ..report.data import read_result

            result, source = read_result(analysis_json), analysis_json
        else:
            result, source = _analyse(paths, offsets, tz, layout, columns, master, debug), " ".join([*paths, *offsets])
        written = write_plan(result, outdir, source)
        click.echo(format_findings(result.get("findings") or [])[0])
        click.echo(
            f"Plan written to {os.path.join(outdir, 'plan.md')} ({len(written) - 2} reset file(s), recovery.json); nothing was executed."
        )

    _run(debug, action)


@main.command("warm-up")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors and the JVM's output.")
def warm_up(debug) -> None:
    """Record the classes Spark loads into a class-data archive (in the user's cache directory),
    which later commands map instead of loading the classes from the jars, so they start sooner.
    Run once after install."""

    def action() -> None:
        import tempfile

        from ..analyze import analyze as run_analysis
        from ..simulate import write_bundle
        from ..spark import record_class_archive

        with tempfile.TemporaryDirectory(prefix="forensics-warm-up-") as incident:
            for bundle in WARM_UP_BUNDLES:
                write_bundle(bundle, incident)
            archive = record_class_archive(lambda spark: run_analysis(spark, [incident]), quiet=not debug)
        click.echo(f"Class archive written to {archive}")

    _run(debug, action)


@main.command()
def schema() -> None:
    """Print the JSON Schema of the result analyze --json writes: its stable contract."""
    import json

    from ..contract import result_schema

    click.echo(json.dumps(result_schema(), indent=2))


WARM_UP_BUNDLES = ("skipped_restore", "backward_commit", "out_of_range_reset")
"""The generated incidents ``warm-up`` analyses: Streams and consumer logs in logback, log4j and
JSON lines layouts, with offset dumps, so that the classes of most paths are recorded."""


def format_layouts(inputs: list[dict]) -> str:
    """What ``forensics layouts`` prints per file: the shape detected (layouts, wrappers, export),
    its first Kafka record's head split into fields, the lines in each bucket, and a hint when
    most of the file is not understood (the report's "Files read" table says the same)."""
    from ..ingest import not_read_text
    from ..report.tables import first_record_text, layout_hint, shape_text

    lines: list[str] = []
    for entry in inputs:
        if entry.get("kind", "log") != "log":
            continue
        lines.append(f"{entry['path']}  (host {entry['host']})")
        if entry.get("problem") or entry.get("duplicate_of"):
            lines.append(f"  {entry.get('problem') or 'same content as ' + entry['duplicate_of'] + ': read once'}")
            continue
        lines.append(f"  layout: {entry['layout'] or 'unknown layout'}; {shape_text({'kind': 'log', **entry})}")
        head = first_record_text(entry)
        if head:
            lines.append(f"  first Kafka record, {head}")
        buckets = " + ".join(f"{entry[b]:,} {b}" for b in ("records", "continuations", "irrelevant", "unparsed"))
        lines.append(f"  lines: {entry['lines']:,} = {buckets}")
        hint = layout_hint({"kind": "log", **entry})
        if hint:
            lines.append(f"  hint: {hint}")
        not_read = not_read_text(entry)
        if not_read:
            lines.append(f"  {not_read}")
    return "\n".join(lines)


def format_findings_headline(headline: dict) -> str:
    """``Findings: 3 (1 loss, ...); records lost N, processed twice M``."""
    verdicts = ", ".join(f"{n} {v}" for v, n in headline["by_verdict"].items() if n) or "none"
    return f"Findings: {headline['findings']} ({verdicts}); records lost {headline['records_lost']:,}, processed twice {headline['records_duplicated']:,}"
