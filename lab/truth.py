"""Jepsen-style truth of a lab run: what the producers had acknowledged, what each member processed.

Drivers append one JSON object per line: `journal/produced.jsonl` holds `{"topic","partition","offset"}`
per acked record, `journal/processed-<member>.jsonl` holds `{"member","generation","topic",
"partition","offset"}` per processed record (generation null when the client cannot tell).
`compact` rewrites them as ranges (`"from"`, `"to"` exclusive) so fixtures stay small; every reader
here accepts both forms.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, Iterator

__all__ = ["read_journal", "produced", "processed", "lost_and_duplicated", "merge_ranges", "compact", "write_truth", "TRUTH_KEYS"]

TRUTH_KEYS = (
    "scenario",
    "client",
    "version",
    "healthy",
    "lost",
    "duplicated",
    "expect_findings",
    "forbid_verdicts",
    "expect_rebalance_generations",
)


def read_journal(path: Path) -> Iterator[dict]:
    """Each record of one journal file, a compacted range expanded into one dict per offset."""
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                # a driver killed mid-write leaves a torn last line; anything else is a bug
                if handle.readline() == "":
                    continue
                raise ValueError(f"{path}:{number}: not JSON: {line[:200]!r}") from None
            if "from" in entry:
                for offset in range(entry["from"], entry["to"]):
                    yield {**{k: v for k, v in entry.items() if k not in ("from", "to")}, "offset": offset}
            else:
                yield entry


def _journal(run_dir: Path) -> Path:
    return Path(run_dir) / "journal"


def produced(run_dir: Path) -> list[tuple[str, int, int]]:
    """(topic, partition, offset) of every acked record, each once."""
    path = _journal(run_dir) / "produced.jsonl"
    if not path.exists():
        return []
    return sorted({(r["topic"], r["partition"], r["offset"]) for r in read_journal(path)})


def processed(run_dir: Path) -> list[dict]:
    """Every processed-record entry of every member, in journal order per member."""
    out = []
    for path in sorted(_journal(run_dir).glob("processed-*.jsonl")):
        out.extend(read_journal(path))
    return out


def merge_ranges(keys: Iterable[tuple[str, int, int]]) -> list[dict]:
    """(topic, partition, offset) triples -> maximal `{topic, partition, from, to}` ranges, `to` exclusive."""
    ranges: list[dict] = []
    for topic, partition, offset in sorted(set(keys)):
        last = ranges[-1] if ranges else None
        if last and last["topic"] == topic and last["partition"] == partition and last["to"] == offset:
            last["to"] = offset + 1
        else:
            ranges.append({"topic": topic, "partition": partition, "from": offset, "to": offset + 1})
    return ranges


def lost_and_duplicated(run_dir: Path) -> tuple[list[dict], list[dict]]:
    """Lost: acked by the broker and processed by no one. Duplicated: processed more than once
    (by anyone, in any generation). Both as merged ranges."""
    counts = Counter((r["topic"], r["partition"], r["offset"]) for r in processed(run_dir))
    lost = [key for key in produced(run_dir) if key not in counts]
    duplicated = [key for key, n in counts.items() if n > 1]
    return merge_ranges(lost), merge_ranges(duplicated)


def _compact_entries(entries: Iterable[dict]) -> list[dict]:
    """Entries equal but for consecutive offsets become one range entry. Runs are kept per
    (member, generation, topic, partition) in the order each run started, so a member that
    processes several partitions in turn still compacts to one entry per partition and generation."""
    out: list[dict] = []
    open_runs: dict[tuple, dict] = {}
    for entry in entries:
        rest = {k: v for k, v in entry.items() if k != "offset"}
        key = tuple(sorted((k, json.dumps(v)) for k, v in rest.items()))
        run = open_runs.get(key)
        if run is not None and run["to"] == entry["offset"]:
            run["to"] += 1
        else:
            run = {**rest, "from": entry["offset"], "to": entry["offset"] + 1}
            open_runs[key] = run
            out.append(run)
    return out


def compact(run_dir: Path) -> None:
    """Rewrite every journal of `run_dir` as ranges; the records they stand for are unchanged."""
    for path in sorted(_journal(run_dir).glob("*.jsonl")):
        entries = list(read_journal(path))
        if path.name == "produced.jsonl":
            entries.sort(key=lambda r: (r["topic"], r["partition"], r["offset"]))
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as handle:
            for entry in _compact_entries(entries):
                handle.write(json.dumps(entry, sort_keys=True) + "\n")
        tmp.replace(path)


def write_truth(
    run_dir: Path,
    *,
    scenario: str,
    client: str,
    version: str,
    healthy: bool | None = None,
    expect_findings: list[dict] | None = None,
    forbid_verdicts: list[str] | None = None,
    expect_rebalance_generations: list[int] | None = None,
    **extra,
) -> dict:
    """Compact the journals, compute lost/duplicated from them and write `truth.json`.

    `healthy` defaults to "nothing lost and nothing duplicated"; extra keys (notes, settings)
    are kept beside the standard ones.
    """
    run_dir = Path(run_dir)
    compact(run_dir)
    lost, duplicated = lost_and_duplicated(run_dir)
    truth = {
        "scenario": scenario,
        "client": client,
        "version": version,
        "healthy": (not lost and not duplicated) if healthy is None else healthy,
        "lost": lost,
        "duplicated": duplicated,
        "expect_findings": expect_findings or [],
        "forbid_verdicts": forbid_verdicts or [],
        "expect_rebalance_generations": expect_rebalance_generations or [],
        **extra,
    }
    (run_dir / "truth.json").write_text(json.dumps(truth, indent=2, sort_keys=False) + "\n")
    return truth


def load_truth(run_dir: Path) -> dict:
    """The run's truth.json."""
    return json.loads((Path(run_dir) / "truth.json").read_text())


def member_generations(run_dir: Path) -> dict[str, list]:
    """Each member's generations in the order it processed records under them (for truth checks)."""
    seen: dict[str, list] = defaultdict(list)
    for record in processed(run_dir):
        gens = seen[record["member"]]
        if not gens or gens[-1] != record.get("generation"):
            gens.append(record.get("generation"))
    return dict(seen)
