"""Seeded incident generator: realistic Kafka client / Kafka Streams logs with ground truth.

``generate_incident(out_dir, seed, faults, scale)`` plays a small deterministic simulation
(one ``random.Random`` per incident, no wall clock) of consumer groups on the classic protocol
and of Kafka Streams applications, injects the named faults, and writes per host a log file in
a real layout for a stated Kafka version (config blocks, version banner, application noise with
stack traces), offset dumps where the fault needs them, ``EXPECTED.json`` (every finding the
incident implies, with the evidence lines) and ``NOTES.md``. ``BUNDLES`` are the named sample
incidents (``python -m forensics.simulate sample_logs`` writes them all).
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone
from pathlib import Path

from . import consumer_stories as cs
from . import member_failure_stories as ms
from . import streams_stories as ss
from .context import APPS, Ctx
from .streams_app import STREAMS_APPS
from .versions import in_range
from .world import Incident, incident_tag

CONSUMER_VERSIONS = ["1.1.1", "2.0.1", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.7.0", "2.8.2", "3.0.2", "3.3.2", "3.6.1", "3.9.0"]

FAULTS: dict[str, tuple] = {
    # name: (story, Kafka versions it can be told in, streams app?)
    "skipped_restore": (ss.skipped_restore, ["1.1.1", "2.0.0", "2.0.1"], True),
    "redundant_restore": (ss.redundant_restore, ["1.1.0", "1.1.1"], True),
    "reset_to_latest_gap": (cs.reset_to_latest_gap, [v for v in CONSUMER_VERSIONS if in_range(v, "2.3-3.9")], False),
    "out_of_range_reset": (cs.out_of_range_reset, CONSUMER_VERSIONS, False),
    "backward_commit": (cs.backward_commit, CONSUMER_VERSIONS, False),
    "reprocessing": (ms.reprocessing, CONSUMER_VERSIONS, False),
    "rebalance_storm": (ms.rebalance_storm, CONSUMER_VERSIONS, False),
    "poll_timeout": (ms.poll_timeout, [v for v in CONSUMER_VERSIONS if in_range(v, "2.1-3.9")], False),
    "session_timeout": (ms.session_timeout, [v for v in CONSUMER_VERSIONS if in_range(v, "2.0-3.9")], False),
    "fenced": (ss.fenced, ["2.6.3", "2.8.2", "3.4.1", "3.6.1", "3.9.0"], True),
    "risky_config": (cs.risky_config, CONSUMER_VERSIONS, False),
    "healthy_control": (ss.healthy_streams, ["2.8.2", "3.4.1", "3.7.1", "3.9.0"], True),
    "healthy": (cs.healthy, CONSUMER_VERSIONS, False),
}
LAYOUT_CHOICES = ["log4j", "logback", "logback_thread", "json_lines"]

_SEED000 = {
    "app_id": "AuditTrailBatch",
    "source": "AuditTrailBatch-0",
    "repartition": "AuditTrailBatch-store1-repartition",
    "store": "store1",
    "host1": "audit-batch-1",
    "host2": "audit-batch-3",
    "host2_file": "app.log.gz",
    "generation": 323,
    "domain": "prod",
    "t0": "2018-10-23T08:20:00",
    "package": ("AuditTrailBatch", "com.example.audit", ["AuditTrailBatch", "WarehouseClient", "Tenants"]),
}

BUNDLES: dict[str, dict] = {
    "skipped_restore": {"seed": 0, "kafka_version": "2.0.0", "layout": "logback", "faults": ["skipped_restore"], "fixed": _SEED000},
    "redundant_restore": {
        "seed": 1,
        "kafka_version": "1.1.1",
        "layout": "log4j",
        "faults": ["redundant_restore"],
        "fixed": {"app_id": "LedgerBalances", "host1": "ledger-balances-1", "host2": "ledger-balances-2", "t0": "2018-10-24T10:02:00"},
    },
    "reset_to_latest_gap": {
        "seed": 2,
        "kafka_version": "2.7.0",
        "layout": "log4j",
        "faults": ["reset_to_latest_gap"],
        "fixed": {
            "topic": "demo-topic",
            "group": "demo-consumer",
            "host1": "demo-consumer-1",
            "producer_host": "demo-producer-1",
            "gap": 5,
            "t0": "2021-02-10T15:40:00",
            "package": ("demo", "com.example.demo", ["Consumer", "MessageHandler"]),
        },
    },
    "backward_commit": {
        "seed": 3,
        "kafka_version": "2.5.1",
        "layout": "logback_thread",
        "faults": ["backward_commit"],
        "fixed": {
            "partitions": 2,
            "base": 4,
            "base_step": 3,
            "late": 5,
            "ahead": 7,
            "host1": "c1-alpakka-worker",
            "host2": "c2-alpakka-worker",
        },
    },
    "out_of_range_reset": {"seed": 4, "kafka_version": "3.3.2", "layout": "json_lines", "faults": ["out_of_range_reset"]},
    "reprocessing": {"seed": 6, "kafka_version": "2.3.1", "layout": "log4j", "faults": ["reprocessing"]},
    "rebalance_storm": {"seed": 7, "kafka_version": "3.6.1", "layout": "log4j", "faults": ["rebalance_storm"]},
    "poll_timeout": {"seed": 8, "kafka_version": "3.6.1", "layout": "log4j", "faults": ["poll_timeout"]},
    "session_timeout": {"seed": 9, "kafka_version": "2.4.1", "layout": "logback", "faults": ["session_timeout"]},
    "fenced": {"seed": 10, "kafka_version": "3.4.1", "layout": "log4j", "faults": ["fenced"]},
    "risky_config": {"seed": 11, "kafka_version": "2.2.2", "layout": "logback", "faults": ["risky_config"]},
    "healthy_control": {"seed": 12, "kafka_version": "3.7.1", "layout": "log4j", "faults": ["healthy_control"]},
}


def _epoch_ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp() * 1000)


def _pick_version(rng: random.Random, faults: list[str], requested: str | None) -> list[str]:
    """One version for all faults when their ranges overlap, else one per fault."""
    if requested:
        return [requested] * len(faults)
    common = set.intersection(*(set(FAULTS[f][1]) for f in faults))
    if common:
        version = rng.choice(sorted(common))
        return [version] * len(faults)
    return [rng.choice(FAULTS[f][1]) for f in faults]


def generate_incident(
    out_dir,
    seed: int,
    faults: list[str],
    scale: int = 1,
    kafka_version: str | None = None,
    layout: str | None = None,
    name: str | None = None,
    fixed: dict | None = None,
    description: str | None = None,
) -> dict:
    """Write one incident with the injected ``faults`` (empty: a healthy group) into ``out_dir``
    and return its EXPECTED dict. ``scale`` multiplies noise lines, records and quiet durations."""
    faults = list(faults) or ["healthy"]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        raise ValueError(f"unknown faults {unknown}; known: {sorted(FAULTS)}")
    rng = random.Random(f"forensics-simulate:{seed}")
    tag = incident_tag(seed)
    versions = _pick_version(rng, faults, kafka_version)
    layout = layout or rng.choice(LAYOUT_CHOICES)
    fixed = dict(fixed or {})
    t0 = (
        _epoch_ms(fixed["t0"])
        if "t0" in fixed
        else _epoch_ms("2023-01-02T00:00:00") + rng.randint(0, 600) * 86_400_000 + rng.randint(0, 20) * 3_600_000
    )
    inc = Incident(seed=seed, scale=max(1, int(scale)))
    apps = rng.sample(APPS, len(APPS))
    sapps = rng.sample(STREAMS_APPS, len(STREAMS_APPS))
    for i, (fault, version) in enumerate(zip(faults, versions)):
        story, allowed, streams = FAULTS[fault]
        if version not in allowed and not any(in_range(version, a.rsplit(".", 1)[0]) for a in allowed):
            raise ValueError(f"fault {fault} cannot be told in Kafka {version} (supported: {allowed})")
        app = fixed.get("package") or (sapps[i % len(sapps)] if streams else apps[i % len(apps)])
        ctx = Ctx(
            inc,
            random.Random(f"forensics-simulate:{seed}:{i}:{fault}"),
            version,
            layout,
            tag if len(faults) == 1 else f"{tag}{i}",
            t0 + i * 1_800_000,
            app,
            fixed,
        )
        story(ctx)
    inc.finish_noise()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path_of, line_counts = {}, {}
    for host in inc.hosts:
        line_counts[host.path] = host.write(out)
        for record in host.records:
            path_of[id(record)] = host.path
    for file, text in inc.dumps.items():
        (out / "offsets").mkdir(exist_ok=True)
        (out / "offsets" / file).write_text(text, encoding="utf-8")
    findings = sorted(inc.findings, key=lambda f: f.sort_key())
    shown_layout = "logback" if layout == "logback_thread" else layout
    version_text = versions[0] if len(set(versions)) == 1 else ", ".join(versions)
    expected = {
        "bundle": name or out.name,
        "seed": seed,
        "kafka_version": version_text,
        "layout": shown_layout,
        "description": description or f"Injected faults: {', '.join(faults)}.",
        "faults": inc.faults,
        "findings": [f.to_json(path_of) for f in findings],
    }
    (out / "EXPECTED.json").write_text(json.dumps(expected, indent=2) + "\n", encoding="utf-8")
    notes = [n() if callable(n) else n for n in inc.notes]
    hosts = "\n".join(f"- `{h.path}`: {line_counts[h.path]} lines" for h in inc.hosts)
    dumps = "\n".join(f"- `offsets/{d}`" for d in inc.dumps) or "- none"
    (out / "NOTES.md").write_text(
        f"# {expected['bundle']}\n\n{expected['description']}\n\n"
        f"Kafka version {version_text}, layout {shown_layout}, seed {seed}. Generated by `forensics.simulate` "
        f"(ground truth in `EXPECTED.json`; evidence line numbers are 1-based physical lines of the record's first line).\n\n"
        f"## Story\n\n" + "\n".join(notes) + f"\n\n## Files\n\n{hosts}\n\nOffset dumps:\n\n{dumps}\n",
        encoding="utf-8",
    )
    return expected


DESCRIPTIONS = {
    "skipped_restore": "KAFKA-7672 (seed 000): a task reassigned under EOS finds no checkpoint, resets its changelog to 0 and goes RUNNING without restoring.",
    "redundant_restore": "KAFKA-7672's second half (seed 000): a task moves between two threads of one instance and is restored from scratch needlessly.",
    "reset_to_latest_gap": "Seed 001: a partition added under auto.offset.reset=latest; the records produced before the consumer saw it are never consumed.",
    "out_of_range_reset": "A lagging consumer's position falls below the log start (retention); reset to earliest skips the deleted records.",
    "backward_commit": "Seed 003: a consumer that lost a partition commits it late, below the new owner's commit.",
    "reprocessing": "A commit fails while the group rebalances; the new owner resumes from the older commit and reprocesses the range.",
    "rebalance_storm": "A crash-looping member joins and leaves again and again: a rebalance storm.",
    "poll_timeout": "A member exceeds max.poll.interval.ms, leaves, its commit fails: the new owners reprocess.",
    "session_timeout": "The broker expires a stalled member's session; its commit fails: the new owners reprocess.",
    "fenced": "Exactly-once Kafka Streams: a thread that missed a rebalance is fenced.",
    "risky_config": "session.timeout.ms below 3 x heartbeat.interval.ms; otherwise a clean rebalance.",
    "healthy_control": "A healthy Kafka Streams rolling restart with complete restores: no findings.",
}


def write_bundle(name: str, out_dir) -> dict:
    """Write the named sample bundle into ``out_dir/<name>/``; returns its EXPECTED dict."""
    spec = BUNDLES[name]
    return generate_incident(
        Path(out_dir) / name,
        spec["seed"],
        spec["faults"],
        1,
        spec["kafka_version"],
        spec["layout"],
        name=name,
        fixed=spec.get("fixed"),
        description=DESCRIPTIONS[name],
    )


__all__ = ["BUNDLES", "FAULTS", "generate_incident", "write_bundle"]
