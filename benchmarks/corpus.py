"""Seeded large log corpora for the performance benchmark (kept out of the repository).

    .venv/bin/python benchmarks/corpus.py --lines 4000000 --out /tmp/forensics-bench/4M [--seed 1] [--gzip]

A corpus is a fleet: ``--hosts`` application hosts, half in Kafka's log4j layout and half in
logback, each with one ``app.log``. Its Kafka content is real incident stories from
``forensics.simulate`` (one incident after another, each on two or three hosts of one layout,
with random faults and Kafka versions), so every catalogue wording a story tells appears,
with the multi-line records (config dumps, log4j messages whose logger closes the last line).
Application noise with Java stack traces (``forensics.simulate.noise``) is interleaved between
records until Kafka record heads are ``--kafka-share`` of all lines. ``manifest.json`` holds
the counts every benchmark contender must agree with. Rebuilding with the same arguments
gives the same bytes, and an existing corpus with the same arguments is reused.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from forensics.ingest import records as records_module  # noqa: E402
from forensics.simulate import FAULTS, generate_incident  # noqa: E402
from forensics.simulate.context import APPS, SERVICES, STORES  # noqa: E402
from forensics.simulate.logfile import render_record  # noqa: E402
from forensics.simulate.noise import Noise  # noqa: E402

GENERATOR_VERSION = 2
LAYOUTS = ("log4j", "logback")
KAFKA_MARKER = "org.apache.kafka."
HEAD = {
    "log4j": re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] "),
    "logback": re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "),
}
FIELDS = {
    "log4j": re.compile(r"^\[[^\]]+\] \w+ (?P<message>.*?)(?: \((?P<logger>[\w.$]+)\))?$"),
    "logback": re.compile(r"^\S+ \S+ \w+ +(?P<logger>\S+) +- (?P<message>.*)$"),
}
TRAILING_LOGGER = re.compile(r" \(([\w.$]+)(?::\d+)?\)$")
"""A log4j record's logger closing one of its lines (the generator's own count, written out)."""
KAFKA_PREFIX = re.compile(records_module.KAFKA_PREFIX)
STAMP = {"log4j": slice(1, 24), "logback": slice(0, 23)}
EPOCH_STAMP = "1970-01-01 00:00:00,000"
NOISE_POOL = 20_000
INCIDENT_SPACING_MS = 2 * 3_600_000
START = datetime(2024, 3, 1)
NOISE_FAULTS = sorted(f for f in FAULTS if f != "healthy_control")


def noise_pool(layout: str, rng: random.Random) -> list[list[str]]:
    """Rendered application records (first line stamped with ``EPOCH_STAMP``), all apps mixed."""
    apps = [Noise(package, classes, SERVICES, STORES) for _, package, classes in APPS]
    threads = ["worker-1", "worker-2", "http-nio-8080-exec-3", "scheduler-1"]
    return [render_record(rng.choice(apps).record(0, rng, rng.choice(threads)), layout) for _ in range(NOISE_POOL)]


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def records(lines: list[str], head: re.Pattern) -> list[list[str]]:
    """Lines grouped into records: a head line and the lines up to the next head."""
    out: list[list[str]] = []
    for line in lines:
        if head.match(line) or not out:
            out.append([line])
        else:
            out[-1].append(line)
    return out


def is_kafka(rec: list[str], layout: str) -> tuple[bool, bool]:
    """Whether a record is a Kafka client's (its logger, or a Kafka log-context prefix opening
    the message), told by its first line alone and by the whole record (a log4j message
    spanning lines carries its logger on its last line, before any stack trace)."""
    fields = FIELDS[layout].match(rec[0])
    if not fields:
        return False, False
    prefix = bool(KAFKA_PREFIX.match(fields["message"]))
    on_head = prefix or (fields["logger"] or "").startswith(KAFKA_MARKER)
    if on_head or layout != "log4j":
        return on_head, on_head
    tails = [TRAILING_LOGGER.search(line) for line in rec[1:] if not line.startswith("\t")]
    loggers = [m.group(1) for m in tails if m]
    return False, bool(loggers) and loggers[-1].startswith(KAFKA_MARKER)


class HostWriter:
    """One corpus host's ``app.log``, with counts of what was written."""

    def __init__(self, path: Path, layout: str):
        self.layout, self.path = layout, path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "w", encoding="utf-8", newline="\n")
        self.lines = self.kafka_records = self.marker_lines = self.kafka_heads = self.marker_heads = 0

    def write_incident(self, recs: list[list[str]], noise: list[list[str]], per_record: list[int], rng: random.Random) -> None:
        """Write an incident's records of this host, ``per_record[i]`` noise records before record i."""
        out = []
        stamp_at = STAMP[self.layout]
        for rec, extra in zip(recs, per_record, strict=True):
            stamp = rec[0][stamp_at]
            for _ in range(extra):
                chosen = noise[rng.randrange(len(noise))]
                out.append(chosen[0].replace(EPOCH_STAMP, stamp, 1))
                out.extend(chosen[1:])
            out.extend(rec)
            on_head, anywhere = is_kafka(rec, self.layout)
            self.kafka_records += anywhere
            self.kafka_heads += on_head
            fields = FIELDS[self.layout].match(rec[0])
            self.marker_heads += KAFKA_MARKER in rec[0] and bool(fields and fields["logger"])
        self.marker_lines += sum(KAFKA_MARKER in line for line in out)
        self.lines += len(out)
        self.file.write("\n".join(out) + "\n")

    def close(self) -> None:
        self.file.close()


def build(out: Path, lines: int, seed: int = 1, hosts: int = 8, kafka_share: float = 0.05) -> dict:
    """Write a corpus of at least ``lines`` lines into ``out``; returns its manifest."""
    rng = random.Random(f"forensics-corpus:{seed}")
    pools = {layout: noise_pool(layout, rng) for layout in LAYOUTS}
    writers = [HostWriter(out / f"host-{h:02d}" / "app.log", LAYOUTS[h % 2]) for h in range(hosts)]
    by_layout = {layout: [w for w in writers if w.layout == layout] for layout in LAYOUTS}
    incidents = 0
    with tempfile.TemporaryDirectory(prefix="forensics-corpus-") as tmp:
        while sum(w.lines for w in writers) < lines:
            layout = LAYOUTS[incidents % 2]
            faults = rng.sample(NOISE_FAULTS, rng.randint(0, 2))
            fixed = {"t0": (START + timedelta(milliseconds=incidents // 2 * INCIDENT_SPACING_MS)).isoformat()}
            where = Path(tmp) / f"incident-{incidents}"
            try:
                generate_incident(where, seed * 1_000_003 + incidents, faults, 1, layout=layout, fixed=fixed)
            except ValueError:  # faults with no common Kafka version and a layout they cannot use
                shutil.rmtree(where, ignore_errors=True)
                incidents += 1
                continue
            logs = sorted(p for p in where.glob("*/*") if p.is_file() and p.parent.name != "offsets")
            group = by_layout[layout]
            for k, path in enumerate(logs):
                recs = records(read_lines(path), HEAD[layout])
                heads = sum(KAFKA_MARKER in r[0] for r in recs)
                existing = sum(len(r) for r in recs)
                noise_lines = max(0, int(heads / kafka_share) - existing)
                per = [0] * len(recs)
                for i in rng.choices(range(len(recs)), k=int(noise_lines / 1.25)):
                    per[i] += 1
                group[(incidents // 2 + k) % len(group)].write_incident(recs, pools[layout], per, rng)
            shutil.rmtree(where)
            incidents += 1
    for w in writers:
        w.close()
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "requested_lines": lines,
        "hosts": hosts,
        "kafka_share": kafka_share,
        "incidents": incidents,
        "lines": sum(w.lines for w in writers),
        "bytes": sum(w.path.stat().st_size for w in writers),
        "kafka_records": sum(w.kafka_records for w in writers),
        "kafka_heads": sum(w.kafka_heads for w in writers),
        "kafka_heads_with_marker": sum(w.marker_heads for w in writers),
        "lines_with_marker": sum(w.marker_lines for w in writers),
        "files": [str(w.path.relative_to(out)) for w in writers],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def gzip_twin(plain: Path, twin: Path) -> Path:
    """``twin``: the same files gzip-compressed (one ``app.log.gz`` per host), built in parallel."""

    def write(manifest: dict, out: Path) -> None:
        def compress(rel: str) -> None:
            target = out / (rel + ".gz")
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as f:
                subprocess.run(["gzip", "-6", "-n", "-c", str(plain / rel)], stdout=f, check=True)

        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(compress, manifest["files"]))

    manifest = json.loads((plain / "manifest.json").read_text())
    return _twin(plain, twin, [f + ".gz" for f in manifest["files"]], write)


def _twin(plain: Path, twin: Path, files: list[str], write) -> Path:
    """``twin`` built from the corpus at ``plain`` by ``write(plain_manifest, twin)`` unless it
    exists for the same source; ``files`` are the twin's files, relative to it."""
    manifest = json.loads((plain / "manifest.json").read_text())
    done = twin / "manifest.json"
    if done.exists() and json.loads(done.read_text()).get("source") == manifest:
        return twin
    shutil.rmtree(twin, ignore_errors=True)
    twin.mkdir(parents=True)
    write(manifest, twin)
    done.write_text(json.dumps({"source": manifest, "files": files}, indent=2) + "\n")
    return twin


KUBECTL_STEP_NS = 1_000
"""The kubectl twin's wrapper times advance by this much per line from the corpus's start."""


def kubectl_twin(plain: Path, twin: Path) -> Path:
    """``twin``: every line of every host behind a ``kubectl logs --timestamps`` prefix
    (RFC 3339 with nanoseconds), one ``app.log`` per host as in the plain corpus."""
    return _prefixed_twin(plain, twin, "")


def cri_twin(plain: Path, twin: Path) -> Path:
    """``twin``: every line of every host as the container runtime writes it under
    ``/var/log/pods`` (``<RFC 3339> stdout F <line>``), one ``app.log`` per host."""
    return _prefixed_twin(plain, twin, "stdout F ")


def _prefixed_twin(plain: Path, twin: Path, after_time: str) -> Path:
    """``twin``: every line behind its RFC 3339 time with nanoseconds, advancing
    ``KUBECTL_STEP_NS`` a line, a space and ``after_time``."""

    def write(manifest: dict, out: Path) -> None:
        for rel in manifest["files"]:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            with open(plain / rel, encoding="utf-8") as src, open(out / rel, "w", encoding="utf-8", newline="\n") as dst:
                for i, line in enumerate(src):
                    at = START + timedelta(microseconds=i * KUBECTL_STEP_NS // 1000)
                    dst.write(f"{at:%Y-%m-%dT%H:%M:%S}.{at.microsecond:06d}000Z {after_time}{line}")

    manifest = json.loads((plain / "manifest.json").read_text())
    return _twin(plain, twin, manifest["files"], write)


EXPORT_FILE = "kibana-export.csv"


def export_twin(plain: Path, twin: Path) -> Path:
    """``twin``: the whole fleet as ONE log-platform export, ``kibana-export.csv``: a header
    ``"@timestamp","host.name","message"``, one row per record (a head and its continuation
    lines, quoted, so stack traces span lines), Kibana's ``Mar 1, 2024 @ 00:00:00.000`` times,
    each host's records newest first."""

    def write(manifest: dict, out: Path) -> None:
        with open(out / EXPORT_FILE, "w", encoding="utf-8", newline="") as dst:
            table = csv.writer(dst, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
            table.writerow(["@timestamp", "host.name", "message"])
            for h, rel in enumerate(manifest["files"]):
                layout = LAYOUTS[h % 2]
                recs = records(read_lines(plain / rel), HEAD[layout])
                for rec in reversed(recs):
                    stamp = datetime.strptime(rec[0][STAMP[layout]], "%Y-%m-%d %H:%M:%S,%f")
                    kibana = f"{stamp:%b} {stamp.day}, {stamp:%Y @ %H:%M:%S}.{stamp.microsecond // 1000:03d}"
                    table.writerow([kibana, Path(rel).parent.name, "\n".join(rec)])

    return _twin(plain, twin, [EXPORT_FILE], write)


def ensure(out: Path, lines: int, seed: int = 1, hosts: int = 8, kafka_share: float = 0.05) -> dict:
    """The manifest of the corpus at ``out``, building it first unless it exists with these arguments."""
    path = out / "manifest.json"
    if path.exists():
        manifest = json.loads(path.read_text())
        same = (
            manifest.get("generator_version"),
            manifest.get("seed"),
            manifest.get("requested_lines"),
            manifest.get("hosts"),
            manifest.get("kafka_share"),
        )
        if same == (GENERATOR_VERSION, seed, lines, hosts, kafka_share):
            return manifest
    shutil.rmtree(out, ignore_errors=True)
    return build(out, lines, seed, hosts, kafka_share)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=4_000_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--kafka-share", type=float, default=0.05)
    parser.add_argument("--gzip", action="store_true", help="also write the gzip twin in OUT.gz/")
    parser.add_argument("--kubectl", action="store_true", help="also write the kubectl-wrapped twin in OUT.kubectl/")
    parser.add_argument("--cri", action="store_true", help="also write the container runtime's twin in OUT.cri/")
    parser.add_argument("--export", action="store_true", help="also write the Kibana CSV export twin in OUT.export/")
    args = parser.parse_args(argv)
    manifest = ensure(args.out, args.lines, args.seed, args.hosts, args.kafka_share)
    if args.gzip:
        gzip_twin(args.out, args.out.with_name(args.out.name + ".gz"))
    if args.kubectl:
        kubectl_twin(args.out, args.out.with_name(args.out.name + ".kubectl"))
    if args.cri:
        cri_twin(args.out, args.out.with_name(args.out.name + ".cri"))
    if args.export:
        export_twin(args.out, args.out.with_name(args.out.name + ".export"))
    print(json.dumps({k: v for k, v in manifest.items() if k != "files"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
