"""Ingest of two revisions side by side in ONE Spark JVM, measured in the JVM's CPU seconds.

On a shared 2-core machine wall times swing by ±50 % with the neighbours' load; two processes
run one after the other do not even see the same machine. Here both revisions' ``forensics``
packages are imported under other names (``rev_a``, ``rev_b``) into one process, their stages run
alternately on the same SparkSession (A B, then B A, ...), and each run is measured in the JVM
process's CPU time (``/proc/<pid>/stat``), which other processes' load disturbs far less.

    python benchmarks/compare_revisions.py --base 955e2c2 --stage fold --rounds 5 \\
        --files '/tmp/forensics-bench/4M/host-0[01]/*.log'

``--head`` defaults to the working tree. ``--revisions A,B,C,..`` runs several revisions the same
way (``worktree`` names the working tree), in turn forwards and backwards, and prints each one's
ratios to the first: a regression found between two releases is narrowed to its commit in a few
runs of revisions spread between them. Stages: ``fold`` (read + recognise + fold, the one pass
over every line), ``T1`` (``kafka_lines``), ``T2`` (``ingest``: records and accounting), ``T3``
(``analyze``: the whole analysis, its JSON written to a file). The CPU seconds are the JVM's
and the driver's Python's (which the analysis' JSON writing spends).
Each revision runs under its own runtime SQL settings (``spark.SESSION_CONF``). Prints the
median CPU and wall seconds of each and the per-round ratios head/base with their medians.
"""

from __future__ import annotations

import argparse
import gc
import glob
import importlib
import importlib.util
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_package(revision: str | None, name: str, into: Path) -> None:
    """Write the ``forensics`` package of ``revision`` (None: the working tree) as package ``name``.
    The package imports itself only relatively, so another name is all it takes."""
    target = into / name
    if revision is None:
        subprocess.run(["cp", "-r", str(ROOT / "forensics"), str(target)], check=True)
        return
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "forensics"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "forensics").rename(target)


def jvm_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stage_runner(package: str, stage: str, spark, files: list[str], settings: dict[str, str], unset: set[str]):
    """A function running ``stage`` of ``package`` on ``files`` to the end (count and hash of every
    row), under the runtime ``settings`` of that revision, with the keys in ``unset`` (set by the
    other revision only) back at Spark's defaults."""
    from pyspark.sql import functions as F

    ingest = importlib.import_module(f"{package}.ingest")
    records = importlib.import_module(f"{package}.ingest.records")
    read = importlib.import_module(f"{package}.ingest.read")

    def frame():
        if stage == "fold":
            sampling = importlib.util.find_spec(f"{package}.ingest.sampling")
            tried = {"tried": importlib.import_module(sampling.name).needed_recognisers(files)} if sampling else {}
            return records.fold_lines(read.read_splits(spark, files), **tried)
        if stage == "T1":
            return ingest.kafka_lines(spark, ingest.resolve_inputs(files))
        return sys.modules[f"{package}.ingest"].ingest(spark, files).records

    def run():
        for key in unset:  # each revision runs under its own settings
            spark.conf.unset(key)
        for key, value in settings.items():
            spark.conf.set(key, value)
        if stage == "T3":
            with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
                return importlib.import_module(f"{package}.analyze").analyze(spark, files, json_to=out)["spark"]["jobs"]
        df = frame()
        return df.agg(F.count(F.lit(1)), F.bit_xor(F.xxhash64(*df.columns))).first()

    return run


def runtime_settings(package: str, spark) -> dict[str, str]:
    """The settings of ``package``'s ``spark.SESSION_CONF`` that a running session can take."""
    return {k: v for k, v in importlib.import_module(f"{package}.spark").SESSION_CONF.items() if spark.conf.isModifiable(k)}


def settle(spark) -> None:
    """Collect the previous run's garbage (and with it, through Spark's context cleaner, its
    checkpointed blocks) before the next run, so that it is not charged to whichever runs next."""
    gc.collect()
    spark._jvm.java.lang.System.gc()
    time.sleep(1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="git revision to compare against")
    parser.add_argument("--head", default=None, help="git revision (default: the working tree)")
    parser.add_argument("--revisions", help="comma-separated git revisions ('worktree': the working tree), in place of --base and --head")
    parser.add_argument("--stage", choices=("fold", "T1", "T2", "T3"), default="fold")
    parser.add_argument("--files", required=True, help="glob of the log files")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    files = sorted(glob.glob(args.files))
    if not files:
        parser.error(f"no file matches {args.files}")
    if (args.base is None) == (args.revisions is None):
        parser.error("give --base (and maybe --head), or --revisions")
    revisions = [None if r == "worktree" else r for r in args.revisions.split(",")] if args.revisions else [args.base, args.head]
    labels = [f"rev_{i}" for i in range(len(revisions))]
    cpu, wall = measure(revisions, labels, args.stage, files, args.rounds)
    names = {label: revision or "working tree" for label, revision in zip(labels, revisions)}
    for label in labels:
        print(
            f"{args.stage} {names[label]:>14}: CPU median {statistics.median(cpu[label]):.2f} s, wall median {statistics.median(wall[label]):.1f} s"
            f" (CPU per round: {' '.join(f'{x:.2f}' for x in cpu[label])})"
        )
    first = labels[0]
    for label in labels[1:]:
        against = "head/base" if not args.revisions else f"{names[label]}/{names[first]}"
        for clock, times in (("CPU", cpu), ("wall", wall)):
            ratios = [b / a for a, b in zip(times[first], times[label])]
            print(
                f"{args.stage} {clock} ratio {against} per round: {' '.join(f'{r:.2f}' for r in ratios)}; median {statistics.median(ratios):.2f}"
            )


def measure(revisions: list[str | None], labels: list[str], stage: str, files: list[str], rounds: int) -> tuple[dict, dict]:
    """The JVM + driver CPU seconds and the wall seconds of each run of ``stage`` per revision
    (label -> a list, one per round), all in one session: one warm-up run each, then ``rounds``
    rounds, in order and in reverse order by turns."""
    with tempfile.TemporaryDirectory() as tmp:
        for revision, label in zip(revisions, labels):
            export_package(revision, label, Path(tmp))
        sys.path.insert(0, tmp)
        spark = importlib.import_module(f"{labels[0]}.spark").get_session("local[2]")
        pid = spark._jvm.java.lang.ProcessHandle.current().pid()
        settings = {label: runtime_settings(label, spark) for label in labels}
        every_key = set().union(*settings.values())
        runs = {label: stage_runner(label, stage, spark, files, settings[label], every_key - settings[label].keys()) for label in labels}
        for run in runs.values():
            run()  # warm-up: JIT and caches for all
        cpu: dict[str, list[float]] = {label: [] for label in labels}
        wall: dict[str, list[float]] = {label: [] for label in labels}
        for round_ in range(rounds):
            for label in labels if round_ % 2 == 0 else labels[::-1]:
                settle(spark)
                before_cpu, before = jvm_cpu_seconds(pid) + time.process_time(), time.perf_counter()
                runs[label]()
                cpu[label].append(jvm_cpu_seconds(pid) + time.process_time() - before_cpu)
                wall[label].append(time.perf_counter() - before)
        spark.stop()
    return cpu, wall


if __name__ == "__main__":
    main()
