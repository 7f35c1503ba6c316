"""`python -m lab.run [SCENARIO ...] [--client C] [--check]`: run the lab's scenarios, or check its runs.

Running writes `lab/runs/<scenario>/<client>-<version>/` afresh; `--check` analyses every committed
run with the toolkit and compares the findings with its `truth.json`, regenerating nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .scenarios import load_all

RUNS = Path(__file__).resolve().parent / "runs"


def run_dirs(root: Path = RUNS) -> list[Path]:
    """Every committed run: a directory under `root` holding a truth.json."""
    return sorted(p.parent for p in root.glob("*/*/truth.json"))


def run_scenarios(names: list[str], clients: list[str], root: Path = RUNS, jobs: int = 1) -> int:
    """Run each selected scenario for each client it registers, `jobs` at once (each run has its
    own broker on free ports and its own directory); one progress line per run."""
    registry = load_all()
    unknown = [n for n in names if n not in registry]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(sorted(registry))}", file=sys.stderr)
        return 2
    selected = [
        (name, client, version)
        for name in (names or sorted(registry))
        for client, version in registry[name].clients
        if not clients or client in clients or f"{client}-{version}" in clients
    ]
    started = time.monotonic()
    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            failures = sum(pool.map(lambda run: _run_one(registry, root, *run), selected))
    else:
        failures = sum(_run_one(registry, root, *run) for run in selected)
    print(f"lab: {len(selected)} runs in {time.monotonic() - started:.0f} s, {failures} failed", flush=True)
    return 1 if failures else 0


def _run_one(registry, root: Path, name: str, client: str, version: str) -> int:
    """One scenario for one client into a fresh run directory; 1 if it failed."""
    run_dir = root / name / f"{client}-{version}"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    t0 = time.monotonic()
    try:
        result = registry[name].function(run_dir, client, version)
    except Exception as error:  # one scenario's failure must not hide the others'
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        kept = _set_aside(run_dir)
        print(f"{name} {client}-{version}: FAILED after {time.monotonic() - t0:.0f} s: {first} (its partial output: {kept})", flush=True)
        return 1
    print(
        f"{name} {client}-{version}: {time.monotonic() - t0:.0f} s, "
        f"lost {_count(result['lost'])}, duplicated {_count(result['duplicated'])}",
        flush=True,
    )
    return 0


def _set_aside(run_dir: Path) -> Path:
    """Move a failed run's partial output out of lab/runs (a run without truth.json is no fixture)
    into the cache's `failed/`, where it can still be read."""
    from .maven import cache_dir

    target = cache_dir() / "failed" / run_dir.parent.name / f"{run_dir.name}-{int(time.time())}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(run_dir), str(target))
    try:
        run_dir.parent.rmdir()  # only when no other run of the scenario is there
    except OSError:
        pass
    return target


def _count(ranges: list[dict]) -> int:
    return sum(r["to"] - r["from"] for r in ranges)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.run", description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help="scenario names (default: all)")
    parser.add_argument("--client", action="append", default=[], help="only this client (or client-version); repeatable")
    parser.add_argument("--check", action="store_true", help="compare committed runs with their truth; run nothing")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="runs at once (default 1: timing faults on a busy machine)")
    args = parser.parse_args(argv)
    if args.check:
        from .compare import check_runs

        return check_runs(args.scenarios, args.client)
    return run_scenarios(args.scenarios, args.client, jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main())
