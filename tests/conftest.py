"""One SparkSession for the whole test run: local[2], UTC, few shuffle partitions, no UI.

Splits are 256 KiB so that tests exercise files that Spark cuts into several partitions.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
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
