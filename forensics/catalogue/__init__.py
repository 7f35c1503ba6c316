"""The catalogue of Kafka log message templates: data in ``templates.yaml`` (the Java client and
Kafka Streams) and the other ``*.yaml`` files next to it (other witnesses), loaded here.

Each entry names the event type a message becomes, the Kafka versions whose source has that
exact wording, the loggers that print it, a regex with named groups matched against the
message after its log-context prefix (``[Consumer clientId=..]``, ``stream-thread [..]``, ...),
and an example line with the fields it must yield. Code only loads and applies it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from .. import schema as s
from ..layouts._common import java_pattern

CATALOGUE_PATH = Path(__file__).with_name("templates.yaml")


def catalogue_files() -> tuple[Path, ...]:
    """The catalogue's data files in matching order: ``templates.yaml`` first, then the others by name."""
    others = sorted(path for path in CATALOGUE_PATH.parent.glob("*.yaml") if path != CATALOGUE_PATH)
    return (CATALOGUE_PATH, *others)


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""PyYAML's safe loader, in C where PyYAML was built with libyaml: every command loads the
catalogue's files once, and the pure-Python loader is the slower by far."""


def catalogue_entries(paths=None) -> list[dict]:
    """The raw entries of the given data files (default: every catalogue file), in order."""
    entries: list[dict] = []
    for path in paths or catalogue_files():
        entries.extend(yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or [])
    return entries


_MULTILINE_HINTS = ("\\n", "\\s\\S", "\\S\\s", "\\t")


@dataclass(frozen=True)
class Template:
    """One catalogue entry, ready to apply in Spark (Java regex syntax, numbered groups)."""

    key: str
    reference_id: str
    event_type: str
    versions: str
    loggers: tuple[str, ...]
    pattern: str
    groups: tuple[tuple[str, int], ...]
    gate: str
    gate_at_start: bool
    multiline: bool
    example: str
    fields: tuple[tuple[str, str], ...]
    needs_logger: bool = False
    """Matched only where the record names one of ``loggers`` (``needs_logger: true``): wording
    that other loggers print too with another meaning, such as librdkafka's partition list line
    `` topic [N] offset X`` (ASSIGNMENT, but also DUMP_ALL), which a log handler that drops the
    facility leaves ambiguous (issue 85); such a line stays unrecognised Kafka."""


def literal_gate(pattern: str) -> tuple[str, bool]:
    """The longest run of literal text the pattern requires at its top level, and whether
    that run starts the match (``^`` then literal text).

    Text inside groups is ignored (a group may be optional, an alternative or a lookahead),
    so the gate is always safe: every match contains it. Used as a cheap
    ``startswith``/``contains`` test before the regex.
    """
    runs = _top_level_runs(pattern)
    if not runs:
        return "", False
    text, offset = max(runs, key=lambda run: len(run[0]))
    return text, pattern.startswith("^") and offset == 1


def leading_text(template: Template) -> str:
    """The literal text every message of the template opens with (``""`` where its pattern opens
    with a group, a class or an alternation): a pasted line's message starts there."""
    runs = _top_level_runs(template.pattern)
    if not runs or runs[0][1] != 1 or not template.pattern.startswith("^"):
        return ""
    return runs[0][0]


def literal_runs(template: Template) -> tuple[str, ...]:
    """The runs of literal text the template's pattern requires at its top level, in order (none
    where it has a top-level alternation): every message of the template holds each of them."""
    return tuple(text for text, _ in _top_level_runs(template.pattern))


def first_word(template: Template) -> str | None:
    """The first word every message of the template starts with, when the pattern fixes it."""
    runs = _top_level_runs(template.pattern)
    if not runs or runs[0][1] != 1 or not template.pattern.startswith("^"):
        return None
    text, _ = runs[0]
    end = 1 + len(_escaped_prefix(template.pattern[1:], len(text)))
    rest = template.pattern[end:]
    complete = " " in text or not rest or rest.startswith(("$", SPACES_AT_END))
    return text.split(" ", 1)[0] if complete and text.split(" ", 1)[0] else None


def _escaped_prefix(body: str, literal_chars: int) -> str:
    """The pattern text that spells the first ``literal_chars`` literal characters of ``body``."""
    i = seen = 0
    while seen < literal_chars:
        i += 2 if body[i] == "\\" else 1
        seen += 1
    return body[:i]


def _top_level_runs(pattern: str) -> list[tuple[str, int]]:
    """(literal text, pattern offset) runs outside groups and classes; none with top-level ``|``."""
    runs: list[tuple[str, int]] = []
    current, start, depth, i = "", 0, 0, 0

    def close(next_start: int) -> None:
        nonlocal current, start
        if current:
            runs.append((current, start))
        current, start = "", next_start

    while i < len(pattern):
        char = pattern[i]
        nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
        if depth == 0 and char == "|":
            return []
        if char == "\\" and nxt and not nxt.isalnum() and depth == 0:
            piece, width = nxt, 2
        elif char == "\\":
            close(i + 2) if depth == 0 else None
            i += 2
            continue
        elif char == "[":
            close(i) if depth == 0 else None
            i = _class_end(pattern, i)
            start = i
            continue
        elif char in "()":
            depth += 1 if char == "(" else -1
            close(i + 1)
            i += 1
            continue
        elif depth > 0 or char in ".^$*+?{}":
            close(i + 1) if depth == 0 else None
            i += 1
            continue
        else:
            piece, width = char, 1
        if i + width < len(pattern) and pattern[i + width] in "*?{":
            close(i + width)  # the quantified character is optional
            i += width
            continue
        if not current:
            start = i
        current += piece
        i += width
    close(len(pattern))
    return runs


def _class_end(pattern: str, i: int) -> int:
    """Index just past the character class that starts at ``pattern[i] == '['``."""
    i += 2 if pattern[i + 1 : i + 2] == "]" else 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


SAME_LINES = {"ConsumerCoordinator": ("WorkerCoordinator", "AbstractCoordinator")}
"""Logger -> others that print the same lines. From Kafka 3.0 AbstractCoordinator logs under the
class of the coordinator running its code, a consumer's (``ConsumerCoordinator``) or a Kafka
Connect worker's in its cluster's group (``WorkerCoordinator``, ``[Worker clientId=.., groupId=..]``),
whose rebalances the same lines record; and a layout that prints the caller's class instead of
the logger (``%C``, ``%class``) names AbstractCoordinator for those lines."""


def _loggers(entry: dict) -> tuple[str, ...]:
    """An entry's loggers, with those that print the same lines (``SAME_LINES``)."""
    named = tuple(entry["loggers"])
    same = [other for name in named for other in SAME_LINES.get(name, ())]
    return named + tuple(dict.fromkeys(other for other in same if other not in named))


SPACES_AT_END = " *$"
"""What an anchored pattern ends with as loaded (``spaces_allowed_at_end``)."""


def spaces_allowed_at_end(pattern: str) -> str:
    """The pattern, if anchored at its end (``$``), allowing spaces before that end.

    Some layouts write spaces after the message: Faust's worker log ends every line with
    ``%(message)s %(extra)s``, an empty extra. A capture before the end keeps its spaces where it
    takes them greedily (Java's ``Adding newly assigned partitions: `` names an empty list)."""
    body = pattern[:-1]
    escaped = (len(body) - len(body.rstrip("\\"))) % 2
    return body + SPACES_AT_END if pattern.endswith("$") and not escaped else pattern


def _template(entry: dict, key: str) -> Template:
    pattern, groups = java_pattern(spaces_allowed_at_end(entry["pattern"]))
    gate, at_start = literal_gate(pattern)
    return Template(
        key=key,
        reference_id=entry["id"],
        event_type=entry["event_type"],
        versions=str(entry["versions"]),
        loggers=_loggers(entry),
        pattern=pattern,
        groups=groups,
        gate=gate,
        gate_at_start=at_start,
        multiline=any(hint in entry["pattern"] for hint in _MULTILINE_HINTS),
        example=entry["example"],
        fields=tuple(sorted((name, str(value)) for name, value in (entry.get("fields") or {}).items())),
        needs_logger=bool(entry.get("needs_logger", False)),
    )


def precedence(templates: tuple[Template, ...]) -> list[tuple[int, Template]]:
    """(rank, template) in the order a record tries them, the first that matches winning:
    multi-line templates first, then catalogue order. A template that reads a record's later
    lines is the more specific reading: Faust's table under aiokafka's ``Revoking previously
    assigned partitions `` (PY41) against the Java consumer's K08, which reads that first line
    alone as a revoke of no partitions where the layout names no logger."""
    ordered = sorted(range(len(templates)), key=lambda i: (not templates[i].multiline, i))
    return [(rank, templates[i]) for rank, i in enumerate(ordered)]


@lru_cache(maxsize=4)
def load_catalogue(path: str | Path | None = None) -> tuple[Template, ...]:
    """All templates of one data file, or of every catalogue file, in order (which a record tries
    first: ``precedence``). Validates the data: known event types and field names, unique keys
    (``G39`` or ``G39.2`` when an id repeats)."""
    entries = catalogue_entries([path] if path else None)
    repeats, seen = Counter(entry["id"] for entry in entries), Counter()
    templates = []
    for entry in entries:
        seen[entry["id"]] += 1
        key = entry["id"] if repeats[entry["id"]] == 1 else f"{entry['id']}.{seen[entry['id']]}"
        template = _template(entry, key)
        if template.event_type not in s.EVENT_TYPES:
            raise ValueError(f"{key}: unknown event type {template.event_type!r}")
        unknown = {name for name, _ in template.groups} - set(s.CATALOGUE_FIELDS)
        if unknown:
            raise ValueError(f"{key}: unknown field names {sorted(unknown)}")
        templates.append(template)
    return tuple(templates)


__all__ = [
    "CATALOGUE_PATH",
    "Template",
    "catalogue_entries",
    "catalogue_files",
    "java_pattern",
    "leading_text",
    "literal_gate",
    "literal_runs",
    "load_catalogue",
    "precedence",
]
