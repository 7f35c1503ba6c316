"""Compare the toolkit's analysis of a lab run with the run's truth.json.

The rules (issue 84): every lost and every duplicated range of the truth is reported by findings
to the offset; no loss or duplication finding where the truth has none; no `forbid_verdicts`
verdict; every `expect_findings` entry matched by some finding; every expected generation among
the reconstructed rebalances. `compare` returns the problems as sentences (empty: agrees).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from . import truth as truth_module

LOSS_VERDICTS = {"loss"}
DUPLICATION_VERDICTS = {"duplication"}
DUPLICATION_DETECTORS = {"reprocessing", "backward_commit", "out_of_range_reset"}
"""Findings that name records processed twice: verdict duplication, or reprocessing's at-least-once `expected`."""


def _offsets(findings: list[dict], keep) -> dict[tuple[str, int], set[int]]:
    covered: dict[tuple[str, int], set[int]] = {}
    for finding in findings:
        if not keep(finding) or finding.get("offset_from") is None or finding.get("offset_to") is None:
            continue
        key = (finding.get("topic"), finding.get("partition"))
        covered.setdefault(key, set()).update(range(finding["offset_from"], finding["offset_to"]))
    return covered


def _truth_offsets(ranges: list[dict]) -> dict[tuple[str, int], set[int]]:
    out: dict[tuple[str, int], set[int]] = {}
    for r in ranges:
        out.setdefault((r["topic"], r["partition"]), set()).update(range(r["from"], r["to"]))
    return out


def _ranges(offsets: set[int]) -> str:
    return ", ".join(f"[{r['from']}, {r['to']})" for r in truth_module.merge_ranges(("", 0, o) for o in offsets))


def _is_loss(f: dict) -> bool:
    return f.get("verdict") in LOSS_VERDICTS


def _is_duplication(f: dict) -> bool:
    return f.get("verdict") in DUPLICATION_VERDICTS or (f.get("detector") in DUPLICATION_DETECTORS and f.get("verdict") == "expected")


def _matches(finding: dict, partial: dict) -> bool:
    return all(finding.get(key) == value for key, value in partial.items())


def compare(truth: dict, analysis: dict) -> list[str]:
    """What the analysis gets wrong against the truth, one sentence each."""
    findings = analysis.get("findings", [])
    problems = []
    for what, ranges, keep in (("lost", truth["lost"], _is_loss), ("duplicated", truth["duplicated"], _is_duplication)):
        expected = _truth_offsets(ranges)
        reported = _offsets(findings, keep)
        for key in sorted(set(expected) | set(reported), key=str):
            missing = expected.get(key, set()) - reported.get(key, set())
            extra = reported.get(key, set()) - expected.get(key, set())
            if missing:
                problems.append(f"{what} {key[0]}-{key[1]} {_ranges(missing)}: in the truth, reported by no finding")
            if extra:
                problems.append(f"{what} {key[0]}-{key[1]} {_ranges(extra)}: reported, not in the truth")
    if not truth["lost"]:
        for f in findings:
            if _is_loss(f) and f.get("offset_from") is None:
                problems.append(f"a {f['detector']} loss finding without offsets, and the truth lost nothing")
    for f in findings:
        if f.get("verdict") in truth.get("forbid_verdicts", []):
            problems.append(
                f"forbidden verdict {f['verdict']} from {f['detector']} on "
                f"{f.get('topic')}-{f.get('partition')} [{f.get('offset_from')}, {f.get('offset_to')})"
            )
    for partial in truth.get("expect_findings", []):
        if not any(_matches(f, partial) for f in findings):
            problems.append(f"expected finding {json.dumps(partial, sort_keys=True)} not reported")
    generations = {r.get("generation") for r in analysis.get("rebalances", [])}
    missing_generations = sorted(set(truth.get("expect_rebalance_generations", [])) - generations)
    if missing_generations:
        problems.append(f"generations {missing_generations} not among the reconstructed rebalances")
    return problems


def analyze_in(spark, run_dir: Path) -> dict:
    """The `--json` result of `forensics.analyze.analyze` on the run directory as it is."""
    import io

    from forensics.analyze import analyze

    out = io.StringIO()
    analyze(spark, [str(run_dir)], json_to=out)
    return json.loads(out.getvalue())


def check_runs(scenarios: list[str], clients: list[str], root: Path | None = None) -> int:
    """`python -m lab.run --check`: analyse each committed run (one Spark session for all of them,
    the JVM started once), print agreement or the problems. A run listed in DIFFERENCES.md as a
    known difference is reported as such, not as a failure."""
    from forensics.spark import get_session

    from .run import RUNS, run_dirs

    known = known_differences()
    selected = [
        d
        for d in run_dirs(root or RUNS)
        if (not scenarios or d.parent.name in scenarios)
        and (not clients or any(d.name == c or d.name.startswith(c + "-") for c in clients))
    ]
    if not selected:
        print("no committed run matches", flush=True)
        return 1
    spark = get_session()
    failures = 0
    for run_dir in selected:
        label = f"{run_dir.parent.name}/{run_dir.name}"
        t0 = time.monotonic()
        problems = compare(truth_module.load_truth(run_dir), analyze_in(spark, run_dir))
        if not problems and label in known:
            failures += 1  # as the tests' strict xfail: a fixed difference is taken off the list
            print(f"{label}: agrees, but lab/DIFFERENCES.md still lists it under {known[label]}", flush=True)
        elif not problems:
            print(f"{label}: agrees with its truth ({time.monotonic() - t0:.0f} s)", flush=True)
        elif label in known:
            print(f"{label}: known difference ({known[label]}): {'; '.join(problems)}", flush=True)
        else:
            failures += 1
            print(f"{label}: DIFFERS: {'; '.join(problems)}", flush=True)
    print(f"lab check: {len(selected)} runs, {failures} differ beyond lab/DIFFERENCES.md", flush=True)
    return 1 if failures else 0


def known_differences(path: Path | None = None) -> dict[str, str]:
    """`<scenario>/<run>` -> difference id, from the `runs:` lines of lab/DIFFERENCES.md
    (`- runs: a/b, c/d` under a `## D<n>: ...` heading)."""
    path = path or Path(__file__).resolve().parent / "DIFFERENCES.md"
    if not path.exists():
        return {}
    known, current = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            current = line[3:].split(":")[0].strip()
        elif line.strip().startswith("- runs:") and current:
            for run in line.split(":", 1)[1].split(","):
                if run.strip():
                    known[run.strip().strip("`")] = current
    return known
