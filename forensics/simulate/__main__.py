"""``python -m forensics.simulate sample_logs`` writes every named bundle (``BUNDLES``);
``python -m forensics.simulate OUT --seed N --faults a,b --scale K`` writes one incident."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from . import BUNDLES, generate_incident, write_bundle


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m forensics.simulate", description=__doc__)
    parser.add_argument("out", help="output directory")
    parser.add_argument("--seed", type=int, help="write one incident with this seed (else: all named bundles)")
    parser.add_argument("--faults", default="", help="comma-separated fault names (empty: healthy)")
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--kafka-version")
    parser.add_argument("--layout")
    args = parser.parse_args(argv)
    if args.seed is None:
        for name in BUNDLES:
            target = Path(args.out) / name
            if target.exists():
                shutil.rmtree(target)
            expected = write_bundle(name, args.out)
            print(f"{name}: {len(expected['findings'])} findings")
        return 0
    faults = [f for f in args.faults.split(",") if f]
    expected = generate_incident(args.out, args.seed, faults, args.scale, args.kafka_version, args.layout)
    print(json.dumps({"findings": len(expected["findings"]), "kafka_version": expected["kafka_version"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
