"""How the suite reports its own failures: a shared fixture that fails is shown once, in full."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

BROKEN_FIXTURE = '''
import pytest

@pytest.fixture(scope="session")
def shared():
    raise RuntimeError("An error occurred while calling o3952.schema: Connection reset by peer")

@pytest.mark.parametrize("n", range(3))
def test_uses_it(shared, n):
    pass
'''


def test_a_failed_shared_fixture_is_shown_in_full_once_and_named_by_the_others(tmp_path):
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_runtest_makereport  # noqa: F401\n")
    (tmp_path / "test_broken.py").write_text(BROKEN_FIXTURE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert "3 errors" in done.stdout
    assert done.stdout.count('raise RuntimeError("An error occurred') == 1
    pointers = [line for line in done.stdout.splitlines() if line.startswith("the shared fixture this test uses failed earlier")]
    assert len(pointers) == 2
    assert all("test_uses_it[0]" in line and "Connection reset by peer" in line for line in pointers)
