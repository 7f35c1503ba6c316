"""How a command runs: its Spark session, once the inputs are checked, its analysis, its
JSON output, and failures turned into one line on stderr."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, TextIO

import click

from ..errors import ForensicsError


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


def run(debug: bool, action: Callable[[], None]) -> None:
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


def require_inputs(paths, offsets) -> None:
    """A command that analyses needs log paths or offset dumps, or it has nothing to read."""
    if not paths and not offsets:
        raise ForensicsError("Nothing to analyse.", "Give log paths and/or --offsets dump files.")


def _driver_ended() -> str | None:
    """``spark.driver_ended`` where pyspark was loaded (it is not for a report from saved JSON)."""
    if "pyspark" not in sys.modules:
        return None
    from ..spark import driver_ended

    return driver_ended()


def checked_session(paths, offsets, tz, layout, columns, master, debug, hosts=None, tz_by_source=None):
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
    return session(master, debug, inputs), export_columns, inputs


def session(master: str | None, debug: bool, inputs=None):
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


def analyse(paths, offsets, tz, layout, columns, master, debug, hosts=None, tz_by_source=None, json_to=None) -> dict:
    """The analysis JSON of ``paths`` and ``offsets`` (``checked_session`` first)."""
    from ..analyze import analyze as run_analysis

    spark, export_columns, inputs = checked_session(paths, offsets, tz, layout, columns, master, debug, hosts, tz_by_source)
    return run_analysis(spark, layout=layout, columns=export_columns, json_to=json_to, inputs=inputs)


@contextmanager
def json_output(target: str | None) -> Iterator[TextIO | None]:
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
