"""One scenario from scratch: a real broker, real clients, the fault, their logs, the analysis and
its comparison with the truth. Skipped only where the JDK or Maven is missing.

The broker and clients are processes of their own: the scenario runs in a Python process of its
own as a background job (``tests.background``), with the environment the suite started with,
and the test analyses its logs on the suite's session when the job is done."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lab import maven
from tests import background

pytestmark = pytest.mark.lab_live

MISSING = maven.tools_available()
ROOT = Path(__file__).resolve().parents[2]
SCENARIO = """
import json, sys
from pathlib import Path
from lab.scenarios import load_all
print(json.dumps(load_all()["partitions_added_latest"].function(Path(sys.argv[1]), "java-consumer", "4.4.0")))
"""


def run_partitions_added_latest() -> tuple[Path, subprocess.CompletedProcess, float]:
    """Seed 001 (``partitions_added_latest``) on the newest broker and client, in a process of its
    own: the run's directory, the process (its stdout the truth as JSON) and the seconds it took."""
    if MISSING:
        pytest.skip(f"the lab needs {', '.join(MISSING)} on PATH (JDK 17 and Maven)")
    run_dir = Path(tempfile.mkdtemp(prefix="forensics-lab-live-")) / "partitions_added_latest" / "java-consumer-4.4.0"
    run_dir.mkdir(parents=True)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", SCENARIO, str(run_dir)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env=dict(background.ENVIRONMENT),
    )
    return run_dir, done, time.monotonic() - started


BACKGROUND = (run_partitions_added_latest,)


@pytest.mark.skipif(bool(MISSING), reason=f"the lab needs {', '.join(MISSING)} on PATH (JDK 17 and Maven)")
def test_partitions_added_latest_live(spark, record_property):
    """Seed 001 on the newest broker and client: the records at the start of the added partition
    are lost, and the analysis reports exactly them. The time it took (issue 84 asks under 3
    minutes on an idle CI machine) is recorded as the test's `seconds` property, not asserted:
    a busy machine slows the broker and the JVMs, not the lab's logic."""
    from forensics.analyze import analyze
    from lab.compare import compare

    run_dir, done, scenario_seconds = background.result(run_partitions_added_latest)
    try:
        assert done.returncode == 0, done.stderr[-3000:]
        truth = json.loads(done.stdout.strip().splitlines()[-1])
        assert truth["lost"], "the scenario lost nothing: the fault was not injected"
        assert {r["partition"] for r in truth["lost"]} == {1}
        started = time.monotonic()
        out = io.StringIO()
        analyze(spark, [str(run_dir)], json_to=out)
        assert compare(truth, json.loads(out.getvalue())) == []
        assert not _processes_naming(run_dir), "a broker or driver outlived the scenario"
        elapsed = scenario_seconds + time.monotonic() - started
        record_property("seconds", round(elapsed))
        print(f"lab scenario partitions_added_latest live: {elapsed:.0f} s")
    finally:
        shutil.rmtree(run_dir.parents[1], ignore_errors=True)


def _processes_naming(path) -> list[str]:
    """Command lines of running processes that name `path` (the broker and drivers all do)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(path) in cmdline:
            found.append(cmdline[:200])
    return found
