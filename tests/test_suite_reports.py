"""How the suite reports its own failures: a shared fixture that fails is shown once, in full."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

BROKEN_FIXTURE = """
import pytest

@pytest.fixture(scope="session")
def shared():
    raise RuntimeError("An error occurred while calling o3952.schema: Connection reset by peer")

@pytest.mark.parametrize("n", range(3))
def test_uses_it(shared, n):
    pass
"""


def test_a_failed_shared_fixture_is_shown_in_full_once_and_named_by_the_others(tmp_path):
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_runtest_makereport  # noqa: F401\n")
    (tmp_path / "test_broken.py").write_text(BROKEN_FIXTURE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert "3 errors" in done.stdout
    assert done.stdout.count('raise RuntimeError("An error occurred') == 1
    pointers = [line for line in done.stdout.splitlines() if line.startswith("the shared fixture this test uses failed earlier")]
    assert len(pointers) == 2
    assert all("test_uses_it[0]" in line and "Connection reset by peer" in line for line in pointers)


DRIVER_KILLED = """
import os
import signal

import pytest


@pytest.fixture(scope="session")
def spark():
    from forensics.spark import get_session

    return get_session("local[1]", app_name="driver-killed")


def test_kills_the_driver(spark):
    from forensics.spark.handles import driver_jvm_process

    os.kill(driver_jvm_process().pid, signal.SIGKILL)
    driver_jvm_process().wait(timeout=60)
    spark.range(3).count()


def test_never_reached(spark):
    spark.range(3).count()
"""


def test_a_driver_killed_under_the_suite_is_named_and_stops_the_run(tmp_path):
    """A driver JVM that the kernel killed reads, in py4j, as a connection reset: the failing
    test names the kill, and the run stops instead of failing every later test."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_runtest_makereport  # noqa: F401\n")
    (tmp_path / "test_killed.py").write_text(DRIVER_KILLED)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.stdout.strip().splitlines()[-1].startswith("1 failed in")  # test_never_reached did not run
    assert "killed (SIGKILL), most likely by the kernel's out-of-memory killer" in done.stdout
    assert "the shared Spark session is gone" in done.stdout
