"""What the analysis result holds beyond the findings, keyed for the recovery plans: commits,
known log starts, out-of-range positions, client settings and the members of each group."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from ..contract import COMMITTED_KINDS, OUT_OF_RANGE, RESET


@dataclass(frozen=True)
class Facts:
    """What the result says beyond the findings, keyed for the plans."""

    commits: dict  # (group, topic, partition) -> committed offsets seen, oldest first: {offset, at, evidence}
    log_starts: dict  # (topic, partition) -> log starts known: {offset, at, evidence, source}
    out_of_range: dict  # (topic, partition) -> positions found out of range: {offset, at, evidence}
    settings: dict  # group or application id -> {host: settings of its clients' config blocks}
    topics: dict  # group -> topics its members owned
    hosts: dict  # group -> hosts of its members
    dump_files: frozenset


def time_of(value) -> datetime | None:
    """An ISO 8601 result time (``...Z``) as an aware datetime, for ordering."""
    if not value:
        return None
    try:
        stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _point(commit: dict, source: str | None = None) -> dict:
    """An offset the logs or dumps show at a time, with the line that shows it."""
    evidence = {"file": commit.get("source_file"), "line": commit.get("line")} if commit.get("line") is not None else None
    point = {"offset": commit.get("offset"), "at": commit.get("ts"), "evidence": evidence}
    return {**point, "source": source} if source else point


def partition_of(entry: dict) -> tuple:
    return entry.get("topic"), entry.get("partition")


def _grouped(entries, key, value=lambda e: e) -> dict:
    grouped: dict = {}
    for entry in entries:
        grouped.setdefault(key(entry), []).append(value(entry))
    return grouped


def _in_time_order(commits: list[dict]) -> list[dict]:
    undated = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(commits, key=lambda c: time_of(c.get("ts")) or undated)


def _settings_by_owner(config: list[dict]) -> dict:
    settings: dict = {}
    for block in config:
        owner = block.get("group_id") or block.get("application_id")
        settings.setdefault(owner, {}).setdefault(block.get("host"), {}).update(block.get("settings") or {})
    return settings


FACT_KINDS = (*COMMITTED_KINDS, RESET, OUT_OF_RANGE)
"""The kinds of ``commits`` rows ``facts_of`` reads."""
FACT_FIELDS = ("group_id", "topic", "partition", "ts", "kind", "offset", "strategy", "source_file", "line")
"""The fields of a ``commits`` row ``facts_of`` reads."""
FACT_SETTINGS = ("bootstrap.servers", "state.dir", "processing.guarantee")
"""The client settings the plans read from the ``config`` table."""


def facts_of(result: dict) -> Facts:
    """Commits, known log starts, out-of-range positions, settings and members, from ``result``."""
    commits = _in_time_order(result.get("commits") or [])
    earliest = [c for c in commits if c.get("kind") == RESET and str(c.get("strategy") or "").lower() == "earliest"]
    owned = _grouped(result.get("ownership") or [], lambda o: o.get("group"))
    return Facts(
        commits=_grouped([c for c in commits if c.get("kind") in COMMITTED_KINDS], lambda c: (c.get("group_id"), *partition_of(c)), _point),
        log_starts=_grouped(earliest, partition_of, lambda c: _point(c, "the consumer's reset to the earliest offset")),
        out_of_range=_grouped([c for c in commits if c.get("kind") == OUT_OF_RANGE], partition_of, _point),
        settings=_settings_by_owner(result.get("config") or []),
        topics={g: sorted({o.get("topic") for o in rows if o.get("topic")}) for g, rows in owned.items()},
        hosts={g: sorted({o.get("host") for o in rows if o.get("host")}) for g, rows in owned.items()},
        dump_files=frozenset(e.get("path") for e in result.get("inputs") or [] if e.get("kind") == "offsets"),
    )


def setting(facts: Facts, group, key: str, host=None):
    """A client setting of ``group`` (from ``host``'s config block first)."""
    per_host = facts.settings.get(group) or {}
    for settings in ([per_host.get(host)] if host in per_host else []) + list(per_host.values()):
        if settings and settings.get(key) not in (None, "", "null"):
            return settings[key]
    return None


def bootstrap_servers(facts: Facts, group) -> str | None:
    """``bootstrap.servers`` of the group's clients as the CLI takes it (``a:9092,b:9092``)."""
    value = setting(facts, group, "bootstrap.servers")
    return ",".join(part.strip() for part in value.strip("[]").split(",") if part.strip()) if value else None
