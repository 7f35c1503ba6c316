"""Latency of small incidents: whole processes against the floor of any Spark job, side by side.

    .venv/bin/python benchmarks/latency.py [--rounds 3] [--small FILE] [--incident DIR]

The floor is what any Spark tool pays before it reads a line: a process that starts the same
local SparkSession (``forensics.spark.get_session``), runs ``spark.read.text(files).count()``
and stops. Each round runs, one after the other and in a rotated order, every contender as its
own process under ``/usr/bin/time``:

- ``floor small`` / ``floor incident``: the floor on the small file / on the incident's files;
- ``floor small, quick``: the floor on the small file with the JVM options the CLI starts a
  small incident's analysis with (``spark.local_jvm_options`` for small work: the quick JIT
  tier and the class archive ``forensics warm-up`` records), to show what the floor itself
  gains from them; the targets compare with the plain floor;
- ``analyze small``: ``forensics analyze FILE --json OUT --quiet`` on one small log file;
- ``analyze incident``: the same on the incident directory (``sample_logs/`` by default);
- ``make demo``: ``forensics report sample_logs`` as the Makefile's ``demo`` runs it;
- ``second analysis``: one process analyses the small file twice in one session, as a notebook
  kernel's ``load_incident`` does (``report.data.analyse``: the shared session, started for a
  small incident on the quick JIT tier); the time of the second analysis is what a kernel or
  ``forensics batch`` pays per incident.

Printed: the median seconds and peak memory of each, the medians of the per-round ratios to
the floor, the Spark jobs of one analysis, and the targets with pass/fail:
small file <= 1.6x its floor, the incident <= 2.5x its floor, ``make demo`` <= 30 s, the
second analysis <= 3 s.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from forensics.spark import class_archive_path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEFAULT_SMALL = ROOT / "sample_logs" / "reset_to_latest_gap" / "demo-producer-1" / "app.log"
DEFAULT_INCIDENT = ROOT / "sample_logs"
TARGETS = {  # contender: (what it is compared with, limit)
    "analyze small": ("floor small", 1.6),
    "analyze incident": ("floor incident", 2.5),
    "make demo": (None, 30.0),
    "second analysis": (None, 3.0),
}

FLOOR = """
import sys
from forensics.spark import get_session
spark = get_session()
spark.read.text(sys.argv[1:]).count()
spark.stop()
"""

FLOOR_QUICK = """
import sys
from forensics.spark import get_session, local_jvm_options
spark = get_session(jvm_options=local_jvm_options("local[*]", small_work=True))
spark.read.text(sys.argv[1:]).count()
spark.stop()
"""

SECOND = """
import json, sys, time
from forensics.report.data import analyse
analyse(sys.argv[1:])
started = time.perf_counter()
result = analyse(sys.argv[1:])
print(json.dumps({"seconds": time.perf_counter() - started, "jobs": result["spark"]["jobs"]}))
"""


def log_files(path: Path) -> list[str]:
    """The files of an incident the floor reads: every log file under ``path`` (plain or .gz)."""
    if path.is_file():
        return [str(path)]
    return sorted(p for p in glob.glob(str(path / "**" / "*"), recursive=True) if os.path.isfile(p) and not p.endswith((".json", ".md")))


def commands(small: Path, incident: Path, out: Path) -> dict[str, list[str]]:
    python, forensics = str(BIN / "python"), str(BIN / "forensics")
    return {
        "floor small": [python, "-c", FLOOR, str(small)],
        "floor incident": [python, "-c", FLOOR, *log_files(incident)],
        "floor small, quick": [python, "-c", FLOOR_QUICK, str(small)],
        "analyze small": [forensics, "analyze", str(small), "--json", str(out / "small.json"), "--quiet"],
        "analyze incident": [forensics, "analyze", str(incident), "--json", str(out / "incident.json"), "--quiet"],
        "make demo": [
            forensics,
            "report",
            str(ROOT / "sample_logs"),
            "-o",
            str(out / "demo" / "report.html"),
            "--title",
            "Sample incidents (sample_logs/)",
        ],
        "second analysis": [python, "-c", SECOND, str(small)],
    }


def timed(command: list[str]) -> dict:
    """Run ``command`` under ``/usr/bin/time``: wall seconds, peak memory (MiB) and stdout."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", stats.name, *command], capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command[:3])} ... failed ({done.returncode}):\n{done.stderr[-2000:]}")
        elapsed, peak_kib = stats.read().split()[-2:]
    return {"seconds": float(elapsed) or wall, "mib": int(peak_kib) // 1024, "stdout": done.stdout}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds after one warm-up round")
    parser.add_argument("--small", type=Path, default=DEFAULT_SMALL, help="one small log file (tens of lines)")
    parser.add_argument("--incident", type=Path, default=DEFAULT_INCIDENT, help="a small incident's directory")
    args = parser.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="forensics-latency-"))
    runs = commands(args.small, args.incident, out)
    names = list(runs)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    mib: dict[str, list[int]] = {name: [] for name in names}
    second_jobs = None
    for round_ in range(args.rounds + 1):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            result = timed(runs[name])
            if name == "second analysis":
                inner = json.loads(result["stdout"].strip().splitlines()[-1])
                result["seconds"], second_jobs = inner["seconds"], inner["jobs"]
            if round_:
                seconds[name].append(result["seconds"])
                mib[name].append(result["mib"])
        if round_:
            print(f"  round {round_}: " + ", ".join(f"{n} {seconds[n][-1]:.1f}" for n in names), flush=True)
    jobs = {name: json.loads((out / f"{name}.json").read_text())["spark"]["jobs"] for name in ("small", "incident")}
    print(f"\nmedian seconds over {args.rounds} rounds (whole process, /usr/bin/time; 'second analysis': in-process)")
    for name in names:
        print(f"  {name:<20}{statistics.median(seconds[name]):>8.2f} s {statistics.median(mib[name]):>8} MiB peak RSS of the process")
    print(f"  Spark jobs per analysis: small file {jobs['small']}, incident {jobs['incident']}, second analysis {second_jobs}")
    archive = class_archive_path()
    print(f"  class archive for the quick start: {archive if archive and archive.is_file() else 'none (run forensics warm-up)'}")
    quick = statistics.median(a / b for a, b in zip(seconds["analyze small"], seconds["floor small, quick"], strict=True))
    print(f"  analyze small / floor small, quick (median of per-round ratios): {quick:.2f}")
    print("\nTargets")
    failed = False
    for name, (floor, limit) in TARGETS.items():
        if floor:
            value = statistics.median(a / b for a, b in zip(seconds[name], seconds[floor], strict=True))
            text = f"{name} / {floor} (median of per-round ratios, limit {limit})"
        else:
            value = statistics.median(seconds[name])
            text = f"{name} seconds (limit {limit:.0f} s)"
        failed |= value > limit
        print(f"  {text:<80}{value:>7.2f}  {'PASS' if value <= limit else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
