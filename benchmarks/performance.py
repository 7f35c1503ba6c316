"""Performance and scale: the project's ingest and analysis against native-Spark references (T1-T6).

    .venv/bin/python benchmarks/performance.py [--sizes 4M,16M] [--rounds 5] [--dir /tmp/forensics-bench]

For each size a seeded corpus is built once (``benchmarks/corpus.py``: 8 hosts, two layouts,
95 % application noise with stack traces, 5 % Kafka record heads from real incident stories)
with its gzip twin, outside the repository. Then, after one warm-up round, every round runs
each contender once on the same files in one warm ``local[2]`` session, and two worker
processes (``local[1]`` and ``local[2]``, started with the toolkit's default settings) run the
project's ingest, and the ``local[2]`` one the full analysis, in the same round. Every contender must agree with the counts
the generator wrote. A contender's result goes to an aggregate that reads every column it
produces (so Spark cannot prune the parse away). Printed: the median seconds per contender,
the medians of the per-round ratios, and T1-T6 with pass/fail:

- T1: line-level Kafka events with file + line / ``native + file + line`` <= 1.2
- T2: full ingest (stitched records, accounting, provenance) / the same reference <= 2.0
- T3: full analysis (ingest, model, all detectors, JSON written) / the same reference <= 3.0
- T4: time(16M) / time(4M) <= 4.4 for each project contender; the driver's Python memory flat;
  the largest process of the analysis worker <= 1 GiB at 16M lines
- T5: full ingest of the gzip twin / of the plain corpus <= 1.6
- T6: full ingest ``local[1]`` / ``local[2]`` >= 1.7 (the baseline's own ratio printed next to it)
- T3 whole process: ``forensics analyze FILES --json OUT`` / a process that starts the same
  session (``get_session()``, ``local[*]``), runs the reference and stops <= 3.0, each a new
  process under ``/usr/bin/time`` (what an analyst waits for, the JVM's start included)

and the Spark jobs of the analysis (its ``spark.jobs``, counted by a listener).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import corpus  # noqa: E402  (benchmarks/corpus.py)
from contenders import IN_MAIN, PROJECT, REFERENCES, SPARK_JOBS, project_ingest  # noqa: E402  (benchmarks/contenders.py)

WORKER_RUNS = {
    "local[1]": ("native parse + file + line", "T2 ingest"),
    "local[2]": ("native parse + file + line", "T2 ingest", "T3 analysis"),
}
"""The analysis runs in the ``local[2]`` worker only, so that its peak memory is its own. The
reference runs in both, to show how far this machine's two cores speed up plain Spark (T6)."""
ANALYSIS = "T3 analysis [local[2]]"
BASELINE = "native parse + file + line"


def expected_count(name: str, manifest: dict) -> int:
    """What a contender must count on a corpus (the generator's own counts)."""
    if name in ("read.text().count()",):
        return manifest["lines"]
    if name == "read + contains + count":
        return manifest["lines_with_marker"]
    if name.startswith("T1"):
        return manifest["kafka_heads"]
    if name == PROCESS_ANALYSIS:
        return manifest["kafka_records"]
    if name.startswith("T"):
        return manifest["kafka_records"]
    return manifest["kafka_heads_with_marker"]


# ---------------------------------------------------------------------------------------------
# Whole processes: what an analyst waits for, from the command to its exit.

PROCESS_REFERENCE = "process: native parse + file + line"
PROCESS_ANALYSIS = "process: forensics analyze"
REFERENCE_PROCESS = """
import sys
sys.path.insert(0, sys.argv[1])
import contenders
from forensics.spark import get_session
spark = get_session()
print(contenders.native_parse_lines(spark, sys.argv[2:]))
spark.stop()
"""


def process_commands(files: list[str], out: str) -> dict[str, list[str]]:
    """The whole-process pair: the reference in a process of its own, and ``forensics analyze``."""
    bin_dir = Path(sys.executable).parent
    return {
        PROCESS_REFERENCE: [sys.executable, "-c", REFERENCE_PROCESS, str(Path(__file__).parent), *files],
        PROCESS_ANALYSIS: [str(bin_dir / "forensics"), "analyze", *files, "--json", out, "--quiet"],
    }


def run_process(name: str, command: list[str], out: str) -> dict:
    """``command`` under ``/usr/bin/time``: wall seconds, peak RSS (MiB), what it counted."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        done = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", stats.name, *command], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        elapsed, peak_kib = stats.read().split()[-2:]
    if name == PROCESS_ANALYSIS:
        result = json.loads(Path(out).read_text())
        count, jobs = result["accounting"]["records"], result["spark"]["jobs"]
    else:
        count, jobs = int(done.stdout.strip().splitlines()[-1]), None
    return {"seconds": float(elapsed), "mib": int(peak_kib) // 1024, "count": count, "jobs": jobs}


# ---------------------------------------------------------------------------------------------
# Worker processes: one session each (local[1] / local[2], default settings), driven over stdin.


RESULT = "@@result "


def worker(master: str) -> None:
    from forensics.spark import get_session

    spark = get_session(master)
    for command in sys.stdin:
        name, *files = json.loads(command)
        started = time.perf_counter()
        count = {**REFERENCES, **PROJECT}[name](spark, files)
        seconds = time.perf_counter() - started
        print(
            RESULT + json.dumps({"seconds": seconds, "count": count, "memory": memory_peaks(), "jobs": SPARK_JOBS.pop(name, None)}),
            flush=True,
        )


def memory_peaks() -> dict:
    """Peak resident memory (MiB) of this Python process and of its largest child (the JVM)."""
    children = {}
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if re.search(rf"^PPid:\s+{me}$", status, re.M):
            hwm = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
            children[pid] = int(hwm.group(1)) // 1024 if hwm else 0
    return {
        "python_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "largest_child_mib": max(children.values(), default=0),
    }


class Worker:
    def __init__(self, master: str):
        self.master = master
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", master],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def run(self, name: str, files: list[str]) -> dict:
        self.proc.stdin.write(json.dumps([name, *files]) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:  # Spark may print to stdout too: only marked lines are results
            if line.startswith(RESULT):
                return json.loads(line[len(RESULT) :])
            sys.stderr.write(line)
        raise RuntimeError(f"worker {self.master} died")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


# ---------------------------------------------------------------------------------------------


def parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("KM")) * scale)


def run_size(spark, size: int, rounds: int, args, workers) -> dict:
    label = f"{size // 1_000_000}M" if size % 1_000_000 == 0 else str(size)
    plain = args.dir / label
    manifest = corpus.ensure(plain, size, args.seed)
    twin = corpus.gzip_twin(plain, plain.with_name(label + ".gz"))
    files = [str(plain / f) for f in manifest["files"]]
    gz_files = [str(twin / (f + ".gz")) for f in manifest["files"]]
    print(
        f"\n== {label}: {manifest['lines']:,} lines, {manifest['bytes'] / 2**20:,.0f} MiB in {len(files)} files, "
        f"{manifest['kafka_records']:,} Kafka records, gzip twin {sum(os.path.getsize(f) for f in gz_files) / 2**20:,.0f} MiB",
        flush=True,
    )

    wanted = lambda name: (not args.only or name in args.only) and name not in args.skip  # noqa: E731
    contenders = {k: (v, files) for k, v in {**REFERENCES, **IN_MAIN}.items() if wanted(k)}
    if wanted("T2 ingest (gzip)"):
        contenders["T2 ingest (gzip)"] = (project_ingest, gz_files)
    for shape, build in (("kubectl", corpus.kubectl_twin), ("cri", corpus.cri_twin), ("export", corpus.export_twin)):
        name = f"T2 ingest ({shape})"
        if wanted(name):
            shaped = build(plain, plain.with_name(f"{label}.{shape}"))
            contenders[name] = (project_ingest, [str(shaped / f) for f in json.loads((shaped / "manifest.json").read_text())["files"]])
    analysis_json = str(args.dir / f"{label}.analysis.json")
    whole = {k: v for k, v in process_commands(files, analysis_json).items() if wanted(k)}
    times: dict[str, list[float]] = {name: [] for name in [*contenders, *whole]}
    memory: dict[str, dict] = {}
    process_mib: dict[str, list[int]] = {}
    jobs: dict[str, int] = {}
    mismatches = []
    for round_ in range(rounds + 1):
        for name, (fn, paths) in contenders.items():
            started = time.perf_counter()
            count = fn(spark, paths)
            seconds = time.perf_counter() - started
            want = expected_count(name, manifest)
            if count != want:
                mismatches.append(f"{name}: counted {count:,}, the corpus has {want:,}")
            if round_:
                times[name].append(seconds)
        processes = list(whole.items())
        for name, command in processes[round_ % 2 :] + processes[: round_ % 2]:  # alternated
            out = run_process(name, command, analysis_json)
            if out["count"] != expected_count(name, manifest):
                mismatches.append(f"{name}: counted {out['count']:,}, the corpus has {expected_count(name, manifest):,}")
            if round_:
                times[name].append(out["seconds"])
                process_mib.setdefault(name, []).append(out["mib"])
            if out["jobs"] is not None:
                jobs[name] = out["jobs"]
        for w in workers:
            for name in WORKER_RUNS[w.master]:
                key = f"{name} [{w.master}]"
                out = w.run(name, files)
                if out["count"] != expected_count(name, manifest):
                    mismatches.append(f"{key}: counted {out['count']:,}, the corpus has {expected_count(name, manifest):,}")
                if round_:
                    times.setdefault(key, []).append(out["seconds"])
                memory[w.master] = out["memory"]
                if out.get("jobs") is not None:
                    jobs[key] = out["jobs"]
        print(f"  round {round_ or 'warm-up'}: " + ", ".join(f"{n} {t[-1]:.2f}" for n, t in times.items() if t and round_), flush=True)
    return {
        "label": label,
        "manifest": manifest,
        "times": times,
        "memory": memory,
        "process_mib": process_mib,
        "jobs": jobs,
        "mismatches": sorted(set(mismatches)),
    }


def ratio(times: dict, a: str, b: str) -> float | None:
    """Median of the per-round ratios a / b."""
    if a not in times or b not in times:
        return None
    return statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))


def report(result: dict) -> list[tuple[str, str, float | None, bool | None]]:
    times = result["times"]
    print(f"\n{result['label']}: median seconds over {len(next(iter(times.values())))} rounds, ratios are medians of per-round ratios")
    print(f"  {'contender':<40}{'median s':>9}{'× read+contains':>17}{'× native+file+line':>20}")
    for name, values in times.items():
        to_contains = ratio(times, name, "read + contains + count")
        to_base = ratio(times, name, BASELINE)
        fmt = lambda x: f"{x:.2f}" if x is not None else "-"  # noqa: E731
        print(f"  {name:<40}{statistics.median(values):>9.2f}{fmt(to_contains):>17}{fmt(to_base):>20}")
    checks = [
        ("T1", "T1 kafka_lines / native+file+line", ratio(times, "T1 kafka_lines", BASELINE), 1.2),
        ("T2", "T2 ingest / native+file+line", ratio(times, "T2 ingest", BASELINE), 2.0),
        ("T3", "T3 analysis / native+file+line", ratio(times, ANALYSIS, BASELINE), 3.0),
        ("T3", "whole process: forensics analyze / reference", ratio(times, PROCESS_ANALYSIS, PROCESS_REFERENCE), 3.0),
        ("T5", "T2 ingest gzip / plain", ratio(times, "T2 ingest (gzip)", "T2 ingest"), 1.6),
    ]
    out = [(code, text, value, None if value is None else value <= limit) for code, text, value, limit in checks]
    for shape in ("kubectl", "cri", "export"):  # reported, no target: the same corpus in another shape
        value = ratio(times, f"T2 ingest ({shape})", BASELINE)
        if value is not None:
            out.append(("T2", f"T2 ingest {shape} twin / native+file+line", value, None))
    t6 = ratio(times, "T2 ingest [local[1]]", "T2 ingest [local[2]]")
    out.append(("T6", "T2 ingest local[1] / local[2]", t6, None if t6 is None else t6 >= 1.7))
    ceiling = ratio(times, f"{BASELINE} [local[1]]", f"{BASELINE} [local[2]]")
    out.append(("T6", "(the reference's own local[1] / local[2])", ceiling, None))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="4M,16M", help="corpus sizes in lines, e.g. 4M,16M")
    parser.add_argument("--rounds", default="5", help="measured rounds after one warm-up round; one number per size (5,1) or one for all")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "forensics-bench", help="where corpora are kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated contender names (default: all)")
    parser.add_argument("--skip", default="", help="comma-separated contender names to leave out")
    parser.add_argument("--no-workers", action="store_true", help="skip the local[1] / local[2] worker processes (T4 memory, T6)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    args.only = [x.strip() for x in args.only.split(",") if x.strip()]
    args.skip = [x.strip() for x in args.skip.split(",") if x.strip()]
    from forensics.spark import get_session

    spark = get_session("local[2]")
    workers = [] if args.no_workers else [Worker("local[1]"), Worker("local[2]")]
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    rounds = [int(r) for r in args.rounds.split(",")]
    if len(rounds) not in (1, len(sizes)):
        parser.error("--rounds takes one number, or one per size")
    results = [
        run_size(spark, size, n, args, workers) for size, n in zip(sizes, rounds * len(sizes) if len(rounds) == 1 else rounds, strict=True)
    ]
    for w in workers:
        w.close()
    verdicts = []
    for result in results:
        for code, text, value, ok in report(result):
            verdicts.append((result["label"], code, text, value, ok))
        for master, peaks in result["memory"].items():
            print(f"  worker {master}: peak Python {peaks['python_mib']} MiB, largest child process (JVM) {peaks['largest_child_mib']} MiB")
        for name, peaks in result["process_mib"].items():
            print(f"  {name}: peak RSS {statistics.median(peaks):.0f} MiB (/usr/bin/time's %M, median)")
        for name, count in result["jobs"].items():
            print(f"  {name}: {count} Spark jobs")
        for problem in result["mismatches"]:
            print(f"  COUNT MISMATCH {problem}")
    if len(results) >= 2:
        small, large = results[0], results[-1]
        growth = large["manifest"]["lines"] / small["manifest"]["lines"]
        limit = 4.4 * growth / 4
        for name in ("T1 kafka_lines", "T2 ingest", ANALYSIS):
            if name in small["times"] and name in large["times"]:
                value = statistics.median(large["times"][name]) / statistics.median(small["times"][name])
                verdicts.append(
                    (f"{large['label']}/{small['label']}", "T4", f"{name} time growth (limit {limit:.2f})", value, value <= limit)
                )
        for master in large["memory"]:
            p_small, p_large = small["memory"][master]["python_mib"], large["memory"][master]["python_mib"]
            verdicts.append(
                (
                    f"{large['label']}/{small['label']}",
                    "T4",
                    f"driver Python peak MiB {p_small} -> {p_large} [{master}] (limit +10 %)",
                    p_large / p_small,
                    p_large <= p_small * 1.1,
                )
            )
        biggest = large["memory"].get("local[2]", {}).get("largest_child_mib")
        if biggest is not None:
            verdicts.append((large["label"], "T4", "largest process MiB, analysis worker local[2] (limit 1024)", biggest, biggest <= 1024))
    print("\nTargets")
    failed = False
    for label, code, text, value, ok in verdicts:
        status = "n/a" if value is None else ("info" if ok is None else ("PASS" if ok else "FAIL"))
        failed |= ok is False
        shown = "-" if value is None else (f"{value:.2f}" if isinstance(value, float) else str(value))
        print(f"  {code} {label:<8} {text:<62} {shown:>8}  {status}")
    mismatched = any(r["mismatches"] for r in results)
    if mismatched:
        print("Contenders disagree with the corpus counts (see COUNT MISMATCH above).")
    return 1 if failed or mismatched else 0


if __name__ == "__main__":
    raise SystemExit(main())
