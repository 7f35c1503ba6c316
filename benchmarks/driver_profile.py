"""Where the driver JVM spends a warm small analysis: Linux perf samples of the py4j threads.

    .venv/bin/python benchmarks/driver_profile.py [--warm 3] [--runs 4] [--frequency 499] [FILE...]

One process starts the session a notebook kernel starts for a small incident (the quick JIT
tier and the class archive, ``spark.local_jvm_options``), plus ``-XX:+PreserveFramePointer``
so that perf can walk the stacks of compiled Java code; it analyses FILE (default: the
61-line log of ``benchmarks/latency.py``) ``--warm`` times, then records the driver JVM with
``perf record -g`` over ``--runs`` more analyses, and names compiled frames from the JIT's map
(``jcmd PID Compiler.perfmap``). Only the threads that serve py4j calls (``Thread-N``) are
counted: the driver side of the analysis, where the planning happens.

Printed, as shares of those samples:

- the phase of each sample, by the innermost phase its stack is in: Catalyst's analyzer (a
  DataFrame is analysed as it is built), its optimizer, physical planning, running a job; else
  building DataFrames and Columns, py4j's own work, or other;
- costs that cut across the phases: ``Unsafe.allocateInstance`` (a capturing lambda created by
  code compiled on the quick tier, which goes through the VM), Spark's ClosureCleaner (reads and
  parses a class file for every job), Java serialization of closures and tasks, stack walks (call
  sites, DataFrame query contexts), and the samples in the bytecode interpreter.

JFR's execution samples are no substitute: in a recording of four warm analyses of that log
JFR kept 136 samples of the py4j thread, which spends about 2 CPU-seconds in each (``/proc``);
perf at 499 Hz kept 4,919. Needs ``perf`` (Debian's linux-perf) and the JDK's ``jcmd``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PHASES = (  # (name, a frame of the phase); the innermost found names a sample's phase
    ("analyzer", re.compile(r"catalyst\.analysis\.(Analyzer\.execute|CheckAnalysis)")),
    ("optimizer", re.compile(r"catalyst\.optimizer\.")),
    ("physical planning", re.compile(r"catalyst\.planning\.QueryPlanner|execution\.(SparkStrategies|exchange\.EnsureRequirements)")),
    ("running a job", re.compile(r"SparkContext\.runJob|SparkPlan\.execute")),
)
REST = (  # the phase of a sample in none of PHASES: the first of these its stack holds
    ("building DataFrames and Columns (outside the analyzer)", re.compile(r"sql\.classic\.|sql\.functions\$|ColumnNode")),
    ("py4j (commands, reflection, sockets)", re.compile(r"^py4j\.|\spy4j\.")),
)
CROSS_CUTTING = (
    ("lambda allocation through the VM (C1)", re.compile(r"[Aa]llocateInstance")),
    ("ClosureCleaner (class files read and parsed per job)", re.compile(r"ClosureCleaner")),
    ("Java serialization", re.compile(r"ObjectOutputStream|JavaSerializ")),
    ("stack walks (call sites, query contexts)", re.compile(r"getStackTrace|fill_in_stack_trace|fillInStackTrace")),
)
"""Costs whose frames may be anywhere on a stack. (The bytecode interpreter is counted by the
leaf frame alone: the py4j threads' loop runs interpreted below every stack.)"""


def samples(perf_script: str) -> list[list[str]]:
    """The stacks (leaf first, symbol names) of the py4j threads' samples in ``perf script``
    output made with ``-F comm,tid,ip,sym``."""
    stacks, frames, kept = [], [], False
    for line in perf_script.splitlines():
        if not line.strip():
            if kept and frames:
                stacks.append(frames)
            frames, kept = [], False
        elif not line.startswith(("\t", " ")):
            kept = re.match(r"Thread-\d+ ", line) is not None
        elif kept:
            _, _, symbol = line.strip().partition(" ")  # "ADDRESS SYMBOL"
            frames.append(symbol or "?")
    if kept and frames:
        stacks.append(frames)
    return stacks


def phase(stack: list[str]) -> str:
    """The innermost of ``PHASES`` on ``stack`` (leaf first), else the first of ``REST`` it
    holds, else ``other``."""
    for frame in stack:
        for name, pattern in PHASES:
            if pattern.search(frame):
                return name
    return next((name for name, pattern in REST if any(pattern.search(frame) for frame in stack)), "other")


def _analyses(spark, files: list[str], count: int) -> list[float]:
    from forensics.report.data import analyse

    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        analyse(files, spark=spark)
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="log files (default: latency.py's small file)")
    parser.add_argument("--warm", type=int, default=3, help="analyses before recording")
    parser.add_argument("--runs", type=int, default=4, help="analyses recorded")
    parser.add_argument("--frequency", type=int, default=499, help="perf samples per second")
    args = parser.parse_args()
    for tool in ("perf", "jcmd"):
        if shutil.which(tool) is None:
            sys.exit(f"driver_profile: needs {tool} on PATH")

    from latency import DEFAULT_SMALL  # benchmarks/latency.py

    from forensics.spark import get_session, local_jvm_options

    files = args.files or [str(DEFAULT_SMALL)]
    spark = get_session("local[*]", jvm_options=(*local_jvm_options("local[*]", small_work=True), "-XX:+PreserveFramePointer"))
    pid = str(spark._jvm.java.lang.ProcessHandle.current().pid())
    warm = _analyses(spark, files, args.warm)
    with tempfile.TemporaryDirectory() as scratch:
        data = str(Path(scratch) / "perf.data")
        recorder = subprocess.Popen(
            ["perf", "record", "-F", str(args.frequency), "-g", "-p", pid, "-o", data], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(1.0)  # perf attached
        recorded = _analyses(spark, files, args.runs)
        recorder.send_signal(signal.SIGINT)
        recorder.wait()
        symbols = Path(f"/tmp/perf-{pid}.map")  # where the JVM writes its map and perf reads it
        try:
            subprocess.run(["jcmd", pid, "Compiler.perfmap"], check=True, capture_output=True)
            script = subprocess.run(
                ["perf", "script", "-i", data, "-F", "comm,tid,ip,sym"], check=True, capture_output=True, text=True
            ).stdout
        finally:
            symbols.unlink(missing_ok=True)
    stacks = samples(script)
    total = len(stacks)
    print(
        f"analyses of {len(files)} file(s): warm-up {', '.join(f'{s:.2f}' for s in warm)} s; recorded {', '.join(f'{s:.2f}' for s in recorded)} s"
    )
    print(
        f"{total} samples of the py4j threads at {args.frequency} Hz: {total / args.frequency / max(args.runs, 1):.2f} CPU-seconds per analysis"
    )
    if not total:
        return
    print("\nphase (innermost on the stack)")
    for name, count in Counter(map(phase, stacks)).most_common():
        print(f"  {100 * count / total:5.1f} %  {name}")
    print("\nacross the phases (a sample may count in several)")
    for name, pattern in CROSS_CUTTING:
        count = sum(any(pattern.search(frame) for frame in stack) for stack in stacks)
        print(f"  {100 * count / total:5.1f} %  {name}")
    interpreted = sum(stack[0] == "Interpreter" for stack in stacks)
    print(f"  {100 * interpreted / total:5.1f} %  in the bytecode interpreter (the leaf frame)")


if __name__ == "__main__":
    main()
