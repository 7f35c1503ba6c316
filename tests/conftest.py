"""One SparkSession for the whole test run: local[2], UTC, few shuffle partitions, no UI.

Splits are 256 KiB so that tests exercise files that Spark cuts into several partitions.
Queries run interpreted (``spark.INTERPRETED``), as a small incident's do: the suite's thousands of
small queries each compiled code of their own, and without it ingest, layout, event and model
tests ran in 0.83 of the time (medians of 3 alternated runs, 110 s against 133 s). Larger
incidents generate code: ``gap_as_larger_incident`` runs so (``helpers.GENERATED``), and the tests
of the other plans compare their results with its.

Spark runs as it runs for a user: ``SPARK_TESTING`` is not set. Spark takes it to mean its own
test suite and then checks every plan after each rule of its analyser and optimiser
(``spark.sql.planChangeValidation``), work that a user's session never does. Without it, the
ingest and detect tests took 311-331 s (three runs) instead of 360-361 s (two), their driver
threads 158-169 CPU-s instead of 194-199 (CPU read per JVM thread from ``/proc``).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import background

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
CLI_SAMPLE = DATA / "cli" / "kafka-7672"
"""A hand-written KAFKA-7672 incident (two hosts, logback and gzipped log4j) with fixed counts."""
TEST_SPLIT_BYTES = 256 * 1024
os.environ["FORENSICS_CHECK_CONTRACT"] = "1"  # contract.CHECK_ENV: every analysis of the suite, and of its CLI runs, is checked


@pytest.fixture(scope="session")
def spark():
    from forensics.spark import INTERPRETED, get_session

    session = get_session(
        "local[2]",
        app_name="forensics-tests",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.files.maxPartitionBytes": str(TEST_SPLIT_BYTES),
            "spark.sql.files.openCostInBytes": str(TEST_SPLIT_BYTES),
            **INTERPRETED,
        },
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.hookimpl(trylast=True)  # after ``-m`` / ``-k`` have deselected
def pytest_collection_modifyitems(session, config, items):
    """Submit the background jobs of the tests selected (``tests.background``), the cold CLI
    run first; the tests of a module with jobs of its own run last."""
    if config.option.collectonly:
        return
    if any("cli_sample_run" in getattr(item, "fixturenames", ()) for item in items):
        background.submit(analyze_cli_sample)
    owning = {id(item) for item in items if getattr(getattr(item, "module", None), "BACKGROUND", ())}
    for item in items:
        for job in getattr(getattr(item, "module", None), "BACKGROUND", ()):
            background.submit(job)
    items[:] = sorted(items, key=lambda item: id(item) in owning)  # stable: their own order kept


_SETUP_ERRORS: dict[int, tuple[BaseException, str]] = {}
"""The errors raised while setting up tests, by identity, with the first test that met each."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A shared fixture that fails is shown in full once, at the first test that asked for it.
    pytest raises the fixture's cached error again in every later test that uses it; those are
    reported in one line that names where the whole error is, not as a copy of it each."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        _name_a_dead_driver(item, report)
    if call.when != "setup" or call.excinfo is None or not report.failed:
        return
    error = call.excinfo.value
    _, first = _SETUP_ERRORS.setdefault(id(error), (error, item.nodeid))
    if first != item.nodeid:
        summary = (str(error).strip().splitlines() or [""])[0][:200]
        report.longrepr = f"the shared fixture this test uses failed earlier, shown in full at {first}: {type(error).__name__}: {summary}"


def _name_a_dead_driver(item, report) -> None:
    """A test that failed because the shared session's driver JVM is gone says why
    (``spark.driver_ended``: under memory pressure, the kernel's out-of-memory killer), and the
    run stops there instead of failing every later test on a closed socket."""
    if "pyspark" not in sys.modules:
        return
    from forensics.spark import driver_ended

    ended = driver_ended()
    if ended:
        report.sections.append(("Spark driver", ended))
        item.session.shouldstop = f"the shared Spark session is gone: {ended}"


def analyze_cli_sample() -> subprocess.CompletedProcess:
    """``forensics analyze CLI_SAMPLE --json -`` in a new process with its own JVM, as a user
    runs it: ``test_cli`` reads the JSON contract from its stdout, ``test_quiet`` checks that its
    stderr is empty (one cold start serves both). Run in the background (``tests.background``)."""
    return subprocess.run(
        [sys.executable, "-m", "forensics", "analyze", str(CLI_SAMPLE), "--master", "local[2]", "--json", "-"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=dict(background.ENVIRONMENT),
    )


@pytest.fixture(scope="session")
def cli_sample_run() -> subprocess.CompletedProcess:
    """``analyze_cli_sample``'s process, run in the background."""
    return background.result(analyze_cli_sample)


@pytest.fixture(scope="session")
def layout_fixtures(spark):
    """``ingest`` of the directory ``tests/data/layouts`` (one real-looking file per layout), its
    records kept in the driver: the tests of each file read their part (``helpers.part_of``)."""
    from forensics.spark import materialise
    from tests.helpers import as_small_incident, ingest_paths

    ingested = ingest_paths(spark, DATA / "layouts")
    with as_small_incident(spark):
        return dataclasses.replace(ingested, records=materialise(ingested.records))


@dataclass(frozen=True)
class SamplesAnalysed:
    result: dict
    """What ``analyze`` returns for every sample incident under ``sample_logs/``."""
    model: object
    """The model that analysis built (``model.Model``), as a small incident: each of its tables has rows."""


@pytest.fixture(scope="session")
def samples_analysed(spark) -> SamplesAnalysed:
    """``analyze`` of every sample incident under ``sample_logs/`` (logs and offset dumps, a small
    incident) and the model it built, kept by a spy on ``analyze.build_model``: its tables are
    local relations in the driver, usable after the analysis. The tests that share them do not
    change them."""
    from tests.helpers import analysed_with_model

    result, model = analysed_with_model(spark, [str(ROOT / "sample_logs")])
    return SamplesAnalysed(result, model)


@pytest.fixture(scope="session")
def samples_model(samples_analysed):
    return samples_analysed.model


@pytest.fixture(scope="session")
def samples_analysis(samples_analysed) -> dict:
    return samples_analysed.result


@dataclass(frozen=True)
class LargerIncident:
    result: dict
    """What ``analyze`` returns; the tests that share it do not change it."""
    built_at_once: list[int]
    """How many of the model's tables each call of ``model.materialised_together`` kept by one
    job (those not known to be empty)."""


@pytest.fixture(scope="session")
def gap_as_larger_incident(spark) -> LargerIncident:
    """``analyze`` of ``sample_logs/reset_to_latest_gap`` run as an incident too large to be a
    small one (``SMALL_INCIDENT_BYTES`` 0), with generated code as such an incident runs: the
    result the tests of other plans (small incident, adaptive shuffles, a tight heap, the JSON
    streamed by the CLI) compare theirs with."""
    import importlib

    from forensics.spark import known_empty, sql_settings
    from tests.helpers import GENERATED

    analysis, model = importlib.import_module("forensics.analyze"), importlib.import_module("forensics.model")
    built: list[int] = []
    together = model.materialised_together
    with pytest.MonkeyPatch.context() as patch, sql_settings(spark, GENERATED):
        patch.setattr(analysis, "SMALL_INCIDENT_BYTES", 0)
        patch.setattr(
            model, "materialised_together", lambda frames: built.append(sum(not known_empty(f) for f in frames)) or together(frames)
        )
        result = analysis.analyze(spark, [str(ROOT / "sample_logs" / "reset_to_latest_gap")])
    return LargerIncident(result, built)
