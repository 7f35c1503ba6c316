"""The commands around the analysis: ``warm-up`` (the class-data archive) and ``schema`` (the
JSON contract)."""

from __future__ import annotations

import click

from .options import debug
from .running import run


@click.command("warm-up")
@debug(" and the JVM's output")
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

    run(debug, action)


@click.command()
def schema() -> None:
    """Print the JSON Schema of the result analyze --json writes: its stable contract."""
    import json

    from ..contract import result_schema

    click.echo(json.dumps(result_schema(), indent=2))


WARM_UP_BUNDLES = ("skipped_restore", "backward_commit", "out_of_range_reset")
"""The generated incidents ``warm-up`` analyses: Streams and consumer logs in logback, log4j and
JSON lines layouts, with offset dumps, so that the classes of most paths are recorded."""
