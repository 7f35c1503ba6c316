"""The quick JIT tier of a session started for small work (``spark.QUICK_TIER``): the JVM options
the CLI and a notebook kernel choose (``spark.local_jvm_options``), and the class-data archive
``forensics warm-up`` records, in real JVMs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from forensics.cli import session_jvm_options
from forensics.errors import ForensicsError
from forensics.ingest import route_inputs
from forensics.offsets import sniff_file
from forensics.spark import CLASS_ARCHIVE_QUIET, QUICK_TIER, class_archive_path, local_jvm_options, record_class_archive
from forensics.spark.archive import _archive_maps
from tests import background

ROOT = Path(__file__).parent.parent
SMALL_LOG = ROOT / "sample_logs" / "reset_to_latest_gap" / "demo-consumer-1" / "app.log"


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    """A cache directory of the test's own, where no archive has been recorded yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_small_local_incident_starts_quick_and_others_as_spark_does(own_cache, monkeypatch):
    analyze_module = importlib.import_module("forensics.analyze")  # the module: forensics.analyze is also a function
    inputs = route_inputs([str(SMALL_LOG)], [], sniff_file)
    assert session_jvm_options("local[*]", inputs) == QUICK_TIER  # no archive recorded yet; the usual collector
    assert session_jvm_options("spark://master:7077", inputs) == ()  # the executors are JVMs of their own
    monkeypatch.setattr(analyze_module, "SMALL_INCIDENT_BYTES", 10)
    assert session_jvm_options("local[2]", inputs) == ()  # a long analysis wants the optimising JIT
    archive = class_archive_path()
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"recorded")
    assert session_jvm_options("local[2]", inputs) == (f"-XX:SharedArchiveFile={archive}", *CLASS_ARCHIVE_QUIET)
    assert session_jvm_options("spark://master:7077", inputs) == ()
    monkeypatch.setattr(analyze_module, "SMALL_INCIDENT_BYTES", 8 << 20)
    assert session_jvm_options("local[2]", inputs) == (*QUICK_TIER, f"-XX:SharedArchiveFile={archive}", *CLASS_ARCHIVE_QUIET)


def test_a_notebook_kernel_started_by_a_small_incident_runs_on_the_quick_tier(spark):
    """``load_incident`` in a new kernel: the shared session of a small incident starts on the
    quick JIT tier with the usual collector, and its result is the suite's session's."""
    from forensics.analyze import analyze

    run = background.result(kernel_analysis)
    assert set(QUICK_TIER) <= set(run["arguments"]) and "-XX:+UseSerialGC" not in run["arguments"]
    here = json.loads(json.dumps(analyze(spark, [str(SMALL_LOG)]), default=str))
    for result in (run["result"], here):
        result.pop("spark")
    assert here["events_by_type"] and run["result"] == here


def test_a_recorded_archive_is_mapped_quietly(own_cache):
    archive = class_archive_path()
    assert archive.parent == own_cache / "kafka-forensics" and archive.suffix == ".jsa"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"recorded")
    options = local_jvm_options("local[*]", small_work=True)
    assert options[: len(QUICK_TIER)] == QUICK_TIER
    assert f"-XX:SharedArchiveFile={archive}" in options and "-Xlog:cds=off" in options


def test_recording_needs_a_jvm_of_its_own(spark, own_cache):
    with pytest.raises(ForensicsError, match="JVM of its own"):
        record_class_archive(lambda session: None)
    assert not (own_cache / "kafka-forensics").exists()


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensics", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**background.ENVIRONMENT, "XDG_CACHE_HOME": str(cache)},
    )


def warm_up_then_analyze() -> dict:
    """``forensics warm-up`` in a new process with a cache of its own, the archive it left, and
    a CLI analysis of ``SMALL_LOG`` that starts from it. Run in the background
    (``tests.background``)."""
    with tempfile.TemporaryDirectory(prefix="forensics-warm-up-test-") as scratch:
        cache, out = Path(scratch) / "cache", Path(scratch) / "quick.json"
        recorded = _cli("warm-up", cache=cache)
        archives = list((cache / "kafka-forensics").iterdir()) if recorded.returncode == 0 else []
        truncated = Path(scratch) / "truncated.jsa"
        if archives:
            with open(archives[0], "rb") as whole:
                truncated.write_bytes(whole.read(5 << 20))
        done = _cli("analyze", str(SMALL_LOG), "--json", str(out), "--quiet", cache=cache)
        return {
            "recorded": recorded,
            "archives": archives,
            "maps": bool(archives) and _archive_maps(archives[0]),
            "truncated_maps": _archive_maps(truncated),
            "done": done,
            "quick": out.read_text(encoding="utf-8") if out.exists() else None,
        }


KERNEL = """
import json, sys
from forensics.report.data import analyse, shared_session
result = analyse([sys.argv[1]])
arguments = list(shared_session()._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
print(json.dumps({"result": result, "arguments": arguments}))
"""


def kernel_analysis() -> dict:
    """What a notebook kernel's ``load_incident`` of ``SMALL_LOG`` returns, and the options its
    driver JVM started with, from a new process (run in the background)."""
    done = subprocess.run(
        [sys.executable, "-c", KERNEL, str(SMALL_LOG)], capture_output=True, text=True, timeout=600, cwd=ROOT, env=background.ENVIRONMENT
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


BACKGROUND = (warm_up_then_analyze, kernel_analysis)


def test_warm_up_records_an_archive_that_a_small_analysis_starts_from(spark):
    """``forensics warm-up`` in a new process writes a whole archive (a JVM maps it; a truncated
    copy would kill a JVM, and is refused); a CLI analysis that starts from it, with the quick JIT
    tier, says what the suite's session says of the same log, and nothing on stderr."""
    from forensics.analyze import analyze

    run = background.result(warm_up_then_analyze)
    recorded, archives = run["recorded"], run["archives"]
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stderr == ""
    assert [a.name for a in archives] == [a.name for a in archives if a.suffix == ".jsa"] and len(archives) == 1  # no partial left
    assert f"Class archive written to {archives[0]}" in recorded.stdout
    assert run["maps"] and not run["truncated_maps"]

    done = run["done"]
    assert done.returncode == 0 and done.stderr == "", done.stderr
    quick = json.loads(run["quick"])
    here = json.loads(json.dumps(analyze(spark, [str(SMALL_LOG)]), default=str))
    for result in (quick, here):
        result.pop("spark")
    assert quick["events_by_type"] and quick["rebalances"]
    assert quick == here
