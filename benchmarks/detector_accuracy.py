"""Recall and false positives of the detectors over generated incidents.

    .venv/bin/python benchmarks/detector_accuracy.py --incidents 200 [--seed 1] [--max-faults 3] [--scale 1]

Writes N incidents with random injected faults (``forensics.simulate``) side by side in a
temporary directory, analyses them in one run, and matches findings to each incident's
``EXPECTED.json``: a finding counts as found only when its detector, group, partition, task,
exact range, records, verdict and classification all match. Prints per detector the expected
findings, the ones found, recall, and the unexpected findings (false positives).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from forensics.analyze import analyze  # noqa: E402
from forensics.simulate import FAULTS, generate_incident  # noqa: E402
from forensics.simulate.truth import by_bundle, compare  # noqa: E402
from forensics.spark import get_session  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--incidents", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-faults", type=int, default=3)
    parser.add_argument("--scale", type=int, default=1, help="noise lines, records and durations multiplied by this")
    parser.add_argument("--master", default=None)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    faults = sorted(FAULTS)
    with tempfile.TemporaryDirectory(prefix="forensics-accuracy-") as tmp:
        root = Path(tmp)
        truth = {}
        seeds = rng.sample(range(1_000, 10_000_000), args.incidents)
        for i, seed in enumerate(seeds):
            chosen = rng.sample(faults, rng.randint(0, args.max_faults))
            truth[f"incident-{i:04d}"] = generate_incident(root / f"incident-{i:04d}", seed, chosen, args.scale)
        spark = get_session(args.master, conf={"spark.sql.shuffle.partitions": "4"})
        started = time.perf_counter()
        result = analyze(spark, [str(root)])
        seconds = time.perf_counter() - started
        found = by_bundle(result["findings"], str(root))
        expected_by, found_by, false_by = Counter(), Counter(), Counter()
        failures = []
        for name, expected in truth.items():
            missing, unexpected, evidence = compare(expected["findings"], found.get(name, []), str(root / name))
            for finding in expected["findings"]:
                expected_by[finding["detector"]] += 1
            for item in missing:
                found_by[item[0]] -= 1
            for item in unexpected:
                false_by[item[0]] += 1
            if missing or unexpected or evidence:
                failures.append((name, expected["seed"], [f["fault"] for f in expected["faults"]], missing, unexpected, evidence))
        print(
            f"{args.incidents} incidents, {sum(expected_by.values())} expected findings, "
            f"{result['accounting']['lines']} lines, analysed in {seconds:.1f} s"
        )
        print(f"{'detector':<22}{'expected':>9}{'found':>7}{'recall':>8}{'false +':>9}")
        for detector in sorted(set(expected_by) | set(false_by)):
            hit = expected_by[detector] + found_by[detector]
            recall = hit / expected_by[detector] if expected_by[detector] else float("nan")
            print(f"{detector:<22}{expected_by[detector]:>9}{hit:>7}{recall:>8.3f}{false_by[detector]:>9}")
        total = sum(expected_by.values())
        hits = total + sum(found_by.values())
        print(f"{'all':<22}{total:>9}{hits:>7}{hits / max(total, 1):>8.3f}{sum(false_by.values()):>9}")
        for failure in failures[:20]:
            print("MISMATCH", *failure)
        return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
