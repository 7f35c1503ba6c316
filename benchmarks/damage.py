"""Robustness by transformation at scale (issue 86): ``--examples N`` excerpts of real logs
(the lab's runs, the sample incidents), each damaged by a random composition (``tests.damage``),
ingested ``--batch`` at a time, and the share of examples for which no Kafka record vanished
silently: every event of the plain twin read again with the same type and fields, or counted as
not read. The failing examples are printed with their composition, to be replayed by seed.

    .venv/bin/python benchmarks/damage.py --examples 2000 --seed 1
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.damage import random_example, run_batch, source_logs  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)

    from forensics.spark import get_session

    spark = get_session(args.master, app_name="damage-benchmark", conf={"spark.sql.shuffle.partitions": "2"})
    rng = random.Random(args.seed)
    sources = source_logs(ROOT)
    held, total, events, by_damage, failing = 0, 0, Counter(), Counter(), Counter()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(0, args.examples, args.batch):
            batch = [random_example(rng, sources) for _ in range(min(args.batch, args.examples - number))]
            for outcome in run_batch(spark, batch, Path(tmp) / f"batch{number}"):
                total += 1
                held += outcome.holds
                events.update(
                    twin=outcome.twin_events,
                    read=outcome.read,
                    counted=outcome.counted,
                    destroyed=outcome.destroyed,
                    lost=len(outcome.lost),
                )
                for name in outcome.example.composition.names:
                    by_damage[name] += 1
                    failing[name] += not outcome.holds
                if not outcome.holds:
                    print(
                        f"FAIL {outcome.example.source}:{outcome.example.start} {outcome.example.composition}: {outcome.lost[:2]}",
                        flush=True,
                    )
            print(f"{total} examples, invariant holds for {held} ({held / total:.1%}), {time.monotonic() - started:.0f} s", flush=True)
    print(f"\nexamples: {total}; invariant holds: {held} ({held / max(total, 1):.1%})")
    print(
        f"twin events: {events['twin']}; read again: {events['read']}; counted not read: {events['counted']}; "
        f"destroyed by a cut: {events['destroyed']}; lost or silent lines: {events['lost']}"
    )
    for name, count in sorted(by_damage.items()):
        print(f"  {name:22} {count:6} examples, {failing[name]:5} failing")
    return 0 if held == total else 1


if __name__ == "__main__":
    sys.exit(main())
