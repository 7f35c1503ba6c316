"""One SparkSession for the whole test run: local[2], UTC, few shuffle partitions, no UI.

Splits are 256 KiB so that tests exercise files that Spark cuts into several partitions.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
CLI_SAMPLE = DATA / "cli" / "kafka-7672"
"""A hand-written KAFKA-7672 incident (two hosts, logback and gzipped log4j) with fixed counts."""
TEST_SPLIT_BYTES = 256 * 1024


@pytest.fixture(scope="session")
def spark():
    os.environ["SPARK_TESTING"] = "1"
    from forensics.spark import get_session

    session = get_session(
        "local[2]",
        app_name="forensics-tests",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.files.maxPartitionBytes": str(TEST_SPLIT_BYTES),
            "spark.sql.files.openCostInBytes": str(TEST_SPLIT_BYTES),
        },
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def cli_sample_run() -> subprocess.CompletedProcess:
    """``forensics analyze CLI_SAMPLE --json -`` in a new process with its own JVM, as a user
    runs it: ``test_cli`` reads the JSON contract from its stdout, ``test_quiet`` checks that its
    stderr is empty (one cold start serves both)."""
    return subprocess.run(
        [sys.executable, "-m", "forensics", "analyze", str(CLI_SAMPLE), "--master", "local[2]", "--json", "-"],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=dict(os.environ),
    )


@pytest.fixture(scope="session")
def samples_model(spark):
    """The model of every sample incident under ``sample_logs/``, logs and offset dumps, built
    as a small incident (each of its tables has rows)."""
    from forensics.ingest import ingest_files, route_inputs
    from forensics.offsets import read_offsets, sniff_file
    from tests.helpers import small_model

    inputs = route_inputs([str(ROOT / "sample_logs")], [], sniff_file)
    return small_model(spark, ingest_files(spark, inputs.logs).records, read_offsets(spark, [d.path for d in inputs.dumps]))
