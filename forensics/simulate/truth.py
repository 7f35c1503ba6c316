"""Comparing findings with an incident's ground truth (``EXPECTED.json``), for the tests and the
accuracy benchmark."""

from __future__ import annotations

import os
from collections import Counter

KEY = ("detector", "group", "topic", "partition", "task", "offset_from", "offset_to", "records", "verdict", "classification", "exact")
"""What must match exactly; the explanation's wording and the extra evidence may differ."""


def key(finding: dict) -> tuple:
    return tuple(finding.get(field) for field in KEY)


def relative(evidence: list[dict], root: str) -> set[tuple[str, int]]:
    return {(os.path.relpath(e["file"], root), e["line"]) for e in evidence}


def bundle_of(finding: dict, root: str) -> str:
    """The incident directory (first path component under ``root``) a finding's evidence is in."""
    first = os.path.relpath(finding["evidence"][0]["file"], root)
    return first.split(os.sep)[0]


def by_bundle(findings: list[dict], root: str) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for finding in findings:
        grouped.setdefault(bundle_of(finding, root), []).append(finding)
    return grouped


def compare(expected: list[dict], found: list[dict], bundle_root: str) -> tuple[list[tuple], list[tuple], list[str]]:
    """(missing, unexpected, evidence problems) of ``found`` against ``expected`` findings."""
    want, got = Counter(map(key, expected)), Counter(map(key, found))
    missing = sorted((want - got).elements(), key=repr)
    unexpected = sorted((got - want).elements(), key=repr)
    problems = []
    for item in expected:
        matches = [f for f in found if key(f) == key(item)]
        needed = {(e["file"], e["line"]) for e in item.get("evidence", [])}
        if matches and not any(needed <= relative(f["evidence"], bundle_root) for f in matches):
            problems.append(f"{key(item)}: evidence {sorted(needed)} not all cited")
    return missing, unexpected, problems
