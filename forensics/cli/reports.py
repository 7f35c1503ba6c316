"""The commands that write HTML reports: ``report`` (one incident) and ``batch`` (one per
incident directory, and an index)."""

from __future__ import annotations

import os
import sys

import click

from ..errors import ForensicsError
from .options import COLUMNS, DEBUG, LAYOUT, MASTER, OFFSETS, REDACT, REDACT_TOPICS, TZ
from .running import checked_session, imported_meanwhile, require_inputs, run, session
from .text import format_findings_headline


@click.command()
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
        require_inputs(paths, offsets)
        from ..report.publish import RENDERING_MODULES, check_output, report_incident

        check_output(out)
        imported_meanwhile(RENDERING_MODULES)
        spark, export_columns, inputs = checked_session(paths, offsets, tz, layout, columns, master, debug)
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

    run(debug, action)


@click.command()
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
        spark = session(master, debug, every)
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

    run(debug, action)
