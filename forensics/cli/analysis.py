"""The commands that analyse logs and dumps: ``analyze``, ``layouts`` and ``plan``."""

from __future__ import annotations

import os

import click

from ..errors import ForensicsError
from .options import COLUMNS, DEBUG, HOSTS, LAYOUT, MASTER, OFFSETS, TZ, debug, pairs
from .running import analyse, json_output, require_inputs, run, session
from .text import format_findings, format_layouts, format_summary


@click.command()
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
@debug(", Spark's start-up output and the number of Spark jobs")
def analyze(paths, offsets, tz, tz_source, hosts, layout, columns, master, json_out, quiet, debug) -> None:
    """Analyse Kafka client / Streams logs at PATHS (files, directories, globs; plain or .gz)."""

    def action() -> None:
        require_inputs(paths, offsets)
        options = {"hosts": pairs(hosts, "--host"), "tz_by_source": pairs(tz_source, "--tz-source")}
        with json_output(json_out) as handle:
            result = analyse(paths, offsets, tz, layout, columns, master, debug, json_to=handle, **options)
        if debug:
            click.echo(f"forensics: the analysis ran {result['spark'].get('jobs', '?')} Spark jobs", err=True)
        if not quiet and json_out != "-":
            click.echo(format_summary(result))
            if json_out:
                click.echo(f"JSON written to {json_out}")

    run(debug, action)


@click.command()
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
        spark = session(master, debug)
        click.echo(format_layouts(ingest(spark, paths, hosts=pairs(hosts, "--host"), tz=tz, layout=layout, columns=export_columns).inputs))

    run(debug, action)


@click.command()
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
            result, source = analyse(paths, offsets, tz, layout, columns, master, debug), " ".join([*paths, *offsets])
        written = write_plan(result, outdir, source)
        click.echo(format_findings(result.get("findings") or [])[0])
        click.echo(
            f"Plan written to {os.path.join(outdir, 'plan.md')} ({len(written) - 2} reset file(s), recovery.json); nothing was executed."
        )

    run(debug, action)
