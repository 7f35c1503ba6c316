"""Small hand-written incidents for the detector tests: written to disk and analysed as ``analyze``
analyses a small incident, one alone (``analyse``) or many in one run (``analyse_apart``).

Many in one run: each incident in a directory of its own (its hosts' logs and its offset dumps),
the findings split by the incident their evidence lies in (``truth.by_bundle``), as the sample
bundles are. One analysis would merge incidents that share a host, a group, a member or a
partition, so ``analyse_apart`` refuses a run where two do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forensics.detect import detect, findings_json
from forensics.offsets import read_offsets
from forensics.simulate.truth import by_bundle
from tests.helpers import as_small_incident, ingest_paths, small_model

KEY = ("detector", "group", "topic", "partition", "task", "offset_from", "offset_to", "records", "verdict", "classification", "exact")


def keys(findings: list[dict]) -> list[tuple]:
    return [tuple(f[k] for k in KEY) for f in findings]


def write(root, logs: dict[str, list[str]]):
    """``root/<host>/app.log`` for each host's lines: the host is its directory's name."""
    for host, lines in logs.items():
        (root / host).mkdir(parents=True, exist_ok=True)
        (root / host / "app.log").write_text("\n".join(lines) + "\n")
    return root


def analysed(spark, roots: list, offsets=None):
    """The model of the logs under ``roots`` (and offset dumps ``offsets``) and its findings."""
    dumps = read_offsets(spark, [str(p) for p in offsets]) if offsets else None
    model = small_model(spark, ingest_paths(spark, *roots).records, dumps)
    with as_small_incident(spark):
        return model, findings_json(detect(model))


def analyse(spark, root, offsets=None) -> list[dict]:
    return analysed(spark, [root], offsets)[1]


@dataclass(frozen=True)
class Incident:
    logs: dict[str, list[str]]
    """Each host's lines (``write``)."""
    dumps: tuple[str, ...] = ()
    """The text of each ``kafka-dump-log.sh`` output analysed with the logs."""


def analyse_apart(spark, root: Path, incidents: dict[str, Incident]) -> dict[str, list[dict]]:
    """Each incident's findings, all of them analysed in one run: ``root/<name>/<host>/app.log``
    and ``root/<name>/dump-<i>.txt``. Refused (``ValueError``) where two incidents share a host,
    their events a group, a member id or a topic partition, or an incident has no events."""
    hosts = [host for incident in incidents.values() for host in incident.logs]
    if len(hosts) != len(set(hosts)):
        raise ValueError(f"incidents of one run share hosts: {sorted({h for h in hosts if hosts.count(h) > 1})}")
    logs, dumps = [], []
    for name, incident in incidents.items():
        write(root / name, incident.logs)
        logs += [root / name / host for host in incident.logs]
        for i, text in enumerate(incident.dumps):
            dumps.append(root / name / f"dump-{i}.txt")
            dumps[-1].write_text(text)
    model, findings = analysed(spark, logs, dumps)
    _refuse_shared(model, str(root), incidents)
    found = by_bundle(findings, str(root))
    if not set(found) <= set(incidents):
        raise ValueError(f"findings outside the incidents' directories: {sorted(set(found) - set(incidents))}")
    return {name: found.get(name, []) for name in incidents}


def _refuse_shared(model, root: str, incidents) -> None:
    """A group, a member id or a topic partition named by the events of two incidents' files, or
    an incident none of whose lines is an event (a copy renamed out of every template)."""
    from forensics import schema as s
    from forensics.simulate.truth import bundle_of

    owners: dict[tuple, set[str]] = {}
    seen = set()
    for row in model.events.select(s.SOURCE_FILE, s.GROUP_ID, s.MEMBER_ID, s.TOPIC, s.PARTITION).distinct().collect():
        incident = bundle_of({"evidence": [{"file": row[s.SOURCE_FILE]}]}, root)
        seen.add(incident)
        names = [(s.GROUP_ID, row[s.GROUP_ID]), (s.MEMBER_ID, row[s.MEMBER_ID]), (s.TOPIC, row[s.TOPIC], row[s.PARTITION])]
        for name in names:
            if name[1] is not None:
                owners.setdefault(name, set()).add(incident)
    if set(incidents) - seen:
        raise ValueError(f"incidents without events: {sorted(set(incidents) - seen)}")
    shared = {name: sorted(where) for name, where in owners.items() if len(where) > 1}
    if shared:
        raise ValueError(f"incidents of one run share groups, members or partitions: {shared}")


def renamed(lines: list[str], names: dict[str, str]) -> list[str]:
    """``lines`` with each name of ``names`` replaced by its value: an incident's copy named apart
    from another of its run."""
    for old, new in names.items():
        lines = [line.replace(old, new) for line in lines]
    return lines
