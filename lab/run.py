"""`python -m lab.run [SCENARIO ...] [--client C] [--check]`: run the lab's scenarios, or check its runs.

Running writes `lab/runs/<scenario>/<client>-<version>/` afresh; `--check` analyses every committed
run with the toolkit and compares the findings with its `truth.json`, regenerating nothing.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from .scenarios import load_all

RUNS = Path(__file__).resolve().parent / "runs"


def run_dirs(root: Path = RUNS) -> list[Path]:
    """Every committed run: a directory under `root` holding a truth.json."""
    return sorted(p.parent for p in root.glob("*/*/truth.json"))


def run_scenarios(names: list[str], clients: list[str], root: Path = RUNS) -> int:
    registry = load_all()
    unknown = [n for n in names if n not in registry]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(sorted(registry))}", file=sys.stderr)
        return 2
    failures = 0
    started = time.monotonic()
    for name in names or sorted(registry):
        entry = registry[name]
        for client, version in entry.clients:
            if clients and client not in clients and f"{client}-{version}" not in clients:
                continue
            run_dir = root / name / f"{client}-{version}"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            run_dir.mkdir(parents=True)
            t0 = time.monotonic()
            try:
                result = entry.function(run_dir, client, version)
            except Exception as error:  # one scenario's failure must not hide the others'
                failures += 1
                first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                kept = _set_aside(run_dir)
                print(f"{name} {client}-{version}: FAILED after {time.monotonic() - t0:.0f} s: {first} "
                      f"(its partial output: {kept})", flush=True)
                continue
            print(f"{name} {client}-{version}: {time.monotonic() - t0:.0f} s, "
                  f"lost {_count(result['lost'])}, duplicated {_count(result['duplicated'])}", flush=True)
    print(f"lab: {time.monotonic() - started:.0f} s, {failures} failed", flush=True)
    return 1 if failures else 0


def _set_aside(run_dir: Path) -> Path:
    """Move a failed run's partial output out of lab/runs (a run without truth.json is no fixture)
    into the cache's `failed/`, where it can still be read."""
    from .maven import cache_dir

    target = cache_dir() / "failed" / run_dir.parent.name / f"{run_dir.name}-{int(time.time())}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(run_dir), str(target))
    if not any(run_dir.parent.iterdir()):
        run_dir.parent.rmdir()
    return target


def _count(ranges: list[dict]) -> int:
    return sum(r["to"] - r["from"] for r in ranges)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.run", description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help="scenario names (default: all)")
    parser.add_argument("--client", action="append", default=[], help="only this client (or client-version); repeatable")
    parser.add_argument("--check", action="store_true", help="compare committed runs with their truth; run nothing")
    args = parser.parse_args(argv)
    if args.check:
        from .compare import check_runs
        return check_runs(args.scenarios, args.client)
    return run_scenarios(args.scenarios, args.client)


if __name__ == "__main__":
    sys.exit(main())
