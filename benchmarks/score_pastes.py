"""Score the toolkit on the paste corpus (``tests/data/pastes``, issue 86): excerpts of public
threads about Kafka incidents, each labelled with what a careful reader establishes.

Every excerpt is analysed alone, as ``forensics analyze <dir>`` does, in one Spark session.
A fact counts as found only where the toolkit states it:

- ``record``: a typed event of that type at that file and line. The JSON result holds no
  per-line events, so they are the toolkit's own parse of the same inputs (``route_inputs``,
  ``ingest_files``, ``parse_events``: the functions ``analyze`` runs);
- ``generation``: a row of the result's ``rebalances`` with that group and generation;
- ``finding``: a finding of that detector, on that topic and partition and with those offsets
  where the label gives them;
- ``commit``: a row of ``commits`` at that file and line with that topic, partition and offset;
- ``member``: a rebalance of that group (and generation) naming that member id.

A healthy excerpt must also have no loss or duplication finding (a false alarm).

    .venv/bin/python benchmarks/score_pastes.py [--only SUBSTRING] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PASTES = ROOT / "tests" / "data" / "pastes"
JAVA_CLIENTS = ("java-consumer", "kafka-streams", "spring-kafka", "connect", "ksqldb", "flink", "spark")
WITNESSES = ("broker", "lag-monitor")
DAMAGE = ("loss", "duplication")


def family(client: str) -> str:
    """The family a client's total is reported under."""
    if client in JAVA_CLIENTS:
        return "java/streams"
    if client in WITNESSES:
        return "broker/lag-monitor"
    return "other clients"


def local_path(name: str | None) -> Path | None:
    """A path the toolkit reports (plain, or a ``file:`` URI) as a resolved local path."""
    if not name:
        return None
    if name.startswith("file:"):
        name = name[len("file:") :].lstrip("/")
        name = "/" + name
    return Path(name).resolve()


def typed_events(spark, excerpt: Path) -> set[tuple[Path, int, str]]:
    """(file, line, event type) of every event the toolkit types in the excerpt's logs."""
    from forensics import schema as s
    from forensics.events import parse_events
    from forensics.ingest import ingest_files, route_inputs
    from forensics.offsets import sniff_file

    inputs = route_inputs([str(excerpt)], [], sniff_file, None, "UTC", None)
    if not inputs.logs:
        return set()
    records = ingest_files(spark, inputs.logs).records
    rows = parse_events(records).select(s.SOURCE_FILE, s.LINE, s.EVENT_TYPE).collect()
    return {(local_path(row[0]), int(row[1]), row[2]) for row in rows}


def found(fact: dict, excerpt: Path, result: dict, events: set) -> bool:
    """Whether the toolkit states ``fact`` (see the module's docstring)."""
    kind = fact["kind"]
    if kind == "record":
        return ((excerpt / fact["file"]).resolve(), fact["line"], fact["event_type"]) in events
    if kind == "generation":
        return any(
            row.get("group") == fact["group"] and row.get("generation") == fact["generation"] for row in result.get("rebalances") or []
        )
    if kind == "member":
        return any(
            row.get("group") == fact["group"]
            and fact["member_id"] in (row.get("member_ids") or [])
            and fact.get("generation", row.get("generation")) == row.get("generation")
            for row in result.get("rebalances") or []
        )
    if kind == "commit":
        path = (excerpt / fact["file"]).resolve()
        return any(
            local_path(row.get("source_file")) == path
            and row.get("line") == fact["line"]
            and row.get("topic") == fact["topic"]
            and row.get("partition") == fact["partition"]
            and row.get("offset") == fact["offset"]
            for row in result.get("commits") or []
        )
    if kind == "finding":

        def matches(row: dict) -> bool:
            wanted = {
                "detector": fact["detector"],
                "topic": fact["topic"],
                "partition": fact["partition"],
                "offset_from": fact["from"],
                "offset_to": fact["to"],
            }
            return all(row.get(key) == value for key, value in wanted.items() if value is not None or key == "detector")

        return any(matches(row) for row in result.get("findings") or [])
    raise ValueError(f"unknown fact kind {kind!r}")


def as_fed(excerpt: Path, scratch: Path) -> Path:
    """A copy of the excerpt's files without its labels, as a user would feed them."""
    copy = scratch / excerpt.name
    shutil.copytree(excerpt, copy, ignore=shutil.ignore_patterns("labels.json"))
    return copy


def score_excerpt(spark, excerpt: Path, scratch: Path) -> dict:
    """The excerpt's facts, each found or not, its false alarms and what ingest made of it."""
    from forensics.analyze import analyze

    labels = json.loads((excerpt / "labels.json").read_text(encoding="utf-8"))
    started = time.monotonic()
    error = None
    fed = as_fed(excerpt, scratch)
    try:
        result = json.loads(json.dumps(analyze(spark, [str(fed)]), default=str))
        events = typed_events(spark, fed)
    except Exception as exc:  # an excerpt the toolkit cannot read at all finds nothing; say why
        result, events, error = {}, set(), f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    facts = [{**fact, "found": found(fact, fed, result, events)} for fact in labels["facts"]]
    alarms = [
        {
            "detector": row.get("detector"),
            "verdict": row.get("verdict"),
            "topic": row.get("topic"),
            "partition": row.get("partition"),
            "from": row.get("offset_from"),
            "to": row.get("offset_to"),
        }
        for row in result.get("findings") or []
        if row.get("verdict") in DAMAGE
    ]
    inputs = [
        {
            "file": Path(entry["path"]).name,
            "layout": entry.get("layout"),
            "wrappers": entry.get("wrappers"),
            "export": entry.get("export"),
            "records": entry.get("records"),
            "unparsed": entry.get("unparsed"),
            "irrelevant": entry.get("irrelevant"),
        }
        for entry in result.get("inputs") or []
        if entry.get("kind") == "log" and not entry.get("problem")
    ]
    return {
        "id": excerpt.name,
        "client": labels["client"],
        "family": family(labels["client"]),
        "shape": labels["shape"],
        "healthy": labels["healthy"],
        "source": labels["source"],
        "facts": facts,
        "total": len(facts),
        "found": sum(f["found"] for f in facts),
        "false_alarms": alarms if labels["healthy"] else [],
        "accounting": result.get("accounting"),
        "inputs": inputs,
        "unrecognised_kafka_samples": (result.get("unrecognised_kafka_samples") or [])[:5],
        "error": error,
        "seconds": round(time.monotonic() - started, 1),
    }


def totals(scores: list[dict]) -> dict:
    """Facts found over facts labelled, per family, per kind of fact and overall."""
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for score in scores:
        for key in (score["family"], "overall"):
            groups[key][0] += score["found"]
            groups[key][1] += score["total"]
        for fact in score["facts"]:
            groups[f"kind:{fact['kind']}"][0] += fact["found"]
            groups[f"kind:{fact['kind']}"][1] += 1
    return {key: {"found": f, "facts": t, "share": round(f / t, 3) if t else None} for key, (f, t) in groups.items()}


def print_table(scores: list[dict], summary: dict) -> None:
    print(f"{'id':44} {'client':24} {'shape':40} {'facts':>5} {'found':>5} {'share':>6}  note")
    for score in scores:
        share = score["found"] / score["total"] if score["total"] else 0.0
        note = []
        if score["error"]:
            note.append(f"error: {score['error'][:60]}")
        if score["false_alarms"]:
            note.append(f"FALSE ALARM x{len(score['false_alarms'])}")
        print(
            f"{score['id'][:44]:44} {score['client'][:24]:24} {score['shape'][:40]:40} "
            f"{score['total']:>5} {score['found']:>5} {share:>6.2f}  {'; '.join(note)}"
        )
    print()
    for key in ("java/streams", "other clients", "broker/lag-monitor", "overall"):
        if key in summary:
            row = summary[key]
            print(f"{key:22} {row['found']:>4} / {row['facts']:<4} facts found  share {row['share']:.3f}")
    for key in sorted(k for k in summary if k.startswith("kind:")):
        row = summary[key]
        print(f"{key:22} {row['found']:>4} / {row['facts']:<4} facts found  share {row['share']:.3f}")
    healthy = [s for s in scores if s["healthy"]]
    alarmed = [s["id"] for s in healthy if s["false_alarms"]]
    print(f"healthy excerpts       {len(healthy)}, with a loss/duplication finding: {len(alarmed)} {alarmed if alarmed else ''}")
    shares = [s["found"] / s["total"] for s in scores if s["total"]]
    if shares:
        print(f"mean share per excerpt {sum(shares) / len(shares):.3f} over {len(shares)} excerpts")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="score only the excerpts whose directory name contains this")
    parser.add_argument("--json", dest="json_out", help="write the scores to this file")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)

    from forensics.spark import INTERPRETED, get_session

    excerpts = sorted(p for p in PASTES.iterdir() if p.is_dir() and (not args.only or args.only in p.name))
    spark = get_session(
        args.master, app_name="score-pastes", conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2", **INTERPRETED}
    )
    scores = []
    try:
        with tempfile.TemporaryDirectory(prefix="score-pastes-") as scratch:
            for excerpt in excerpts:
                scores.append(score_excerpt(spark, excerpt, Path(scratch)))
                print(
                    f"scored {excerpt.name}: {scores[-1]['found']}/{scores[-1]['total']} in {scores[-1]['seconds']} s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        spark.stop()
    summary = totals(scores)
    print_table(scores, summary)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"totals": summary, "excerpts": scores}, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
