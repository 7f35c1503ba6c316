"""Sniffing JSON exports: NDJSON, a JSON array, or pretty-printed documents one after another."""

from __future__ import annotations

import json

from ...errors import ForensicsError
from .json_fields import format_path, leaf_paths, lookup, parse_path
from .json_scan import skip_separator
from .platforms import NAMES, platform_envelope
from .roles import KAFKA_TEXT, SAMPLES, no_message, roles_by_values
from .shape import LINE_SPLIT, ExportShape


def ndjson_shape(body: str, columns: dict[str, str] | None) -> ExportShape | None:
    """NDJSON: one entry per line inside a platform's envelope (or ``columns`` given)."""
    objects = _ndjson_samples(body)
    if not objects:
        return _sniff_documents(body, columns)
    envelope = platform_envelope(objects[0])
    if envelope is None and not columns:
        return None
    return _json_shape("ndjson", objects, envelope, columns)


def _sniff_documents(body: str, columns: dict[str, str] | None) -> ExportShape | None:
    """JSON objects one after another, each over several lines (records pasted pretty-printed):
    read as one document each where a field holds their message (by its name or its Kafka text).
    A JSON log line per line is the ``json_lines`` layout's, not this."""
    objects, end = _documents(body, SAMPLES)
    if not objects or not all(isinstance(o, dict) for o in objects) or "\n" not in body[:end].strip():
        return None  # a JSON line, damaged after its object (a stray brace), is the json_lines layout's
    one_line = [o for o in LINE_SPLIT.split(body[:end]) if o.strip().startswith("{") and o.strip().endswith("}")]
    if one_line:
        return None
    envelope = platform_envelope(objects[0])
    roles = _json_roles(objects, (envelope or (None, ("",)))[1])
    if not columns and not ({"message", "time"} <= roles.keys() and _holds_kafka_text(objects, roles["message"])):
        return None  # records of a log hold a time and Kafka's text; other JSON documents (test labels, results) are none
    return _json_shape("json_documents", objects, envelope, columns)


def _documents(text: str, limit: int | None = None) -> tuple[list, int]:
    """The complete JSON values at the top level of ``text`` one after another (up to ``limit``),
    and where the last of them ends."""
    decoder = json.JSONDecoder()
    values, at, end = [], 0, 0
    while limit is None or len(values) < limit:
        at = skip_separator(text, at)
        if at >= len(text):
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        values.append(value)
        end = at
    return values, end


def _ndjson_samples(body: str) -> list[dict]:
    """The JSON objects on the head's first lines; empty when the first is none."""
    lines = [line for line in LINE_SPLIT.split(body) if line.strip()]
    objects: list[dict] = []
    for number, line in enumerate(lines[: SAMPLES + 1]):
        try:
            value = json.loads(line)
        except ValueError:
            if number == 0:
                return []
            break  # the head's last line, cut short, or a line that is no JSON
        if not isinstance(value, dict):
            return objects if number else []
        objects.append(value)
    return objects


def array_shape(body: str, columns: dict[str, str] | None) -> ExportShape | None:
    """A JSON array of entries (objects); no ordinary log file is one."""
    items = _array_samples(body)
    if not items or not isinstance(items[0], dict):
        return None
    objects = [item for item in items if isinstance(item, dict)]
    return _json_shape("json_array", objects, platform_envelope(objects[0]), columns)


def _array_samples(body: str) -> list:
    """The first elements of the JSON array that ``body`` opens, as far as the head holds them."""
    decoder = json.JSONDecoder()
    items, at = [], 1
    while len(items) < SAMPLES:
        at = skip_separator(body, at)
        if at >= len(body) or body[at] == "]":
            break
        try:
            value, at = decoder.raw_decode(body, at)
        except ValueError:
            break
        items.append(value)
    return items


def _json_shape(kind: str, objects: list[dict], envelope, columns: dict[str, str] | None) -> ExportShape | None:
    """The shape of JSON entries: usual names under the envelope's prefixes, then ``columns``."""
    platform, prefixes = envelope or (None, ("",))
    roles = _json_roles(objects, prefixes)
    seen = _keys_seen(objects)
    if columns:
        roles.update(_json_overrides(objects, prefixes, columns, seen))
    if "message" not in roles:
        return no_message(columns, seen)
    return ExportShape(kind, platform, roles, seen)


def _json_roles(objects: list[dict], prefixes: tuple[str, ...]) -> dict[str, str]:
    """Role -> dotted path of the first usual name found (with a scalar value) in the samples;
    roles no usual name gives, and a message whose values hold no Kafka text where another
    field's do, told by what the fields hold at any depth (``roles_by_values``)."""
    roles: dict[str, str] = {}
    for role, candidates in NAMES.items():
        path = _first_path(objects, [f"{p}.{c}" if p else c for c in candidates for p in prefixes], strings=role == "message")
        if path is not None:
            roles[role] = path
    paths = [path for path in _scalar_paths(objects) if _under(path, prefixes)]
    rows = [[_value_at(entry, path) for path in paths] for entry in objects]
    by_values = roles_by_values(paths, rows)
    named_message = roles.get("message")
    if "message" in by_values and (named_message is None or not _holds_kafka_text(objects, named_message)):
        roles["message"] = by_values["message"]
    for role in ("time", "level", "host"):
        if role not in roles and role in by_values and by_values[role] not in roles.values():
            roles[role] = by_values[role]
    return roles


def _scalar_paths(objects: list[dict], limit: int = 200) -> list[str]:
    """Dotted paths of the string and number leaves of the samples, in first-seen order."""
    seen: dict[str, None] = {}
    for entry in objects:
        for keys in leaf_paths(entry, []):
            hit = lookup(entry, [k.lower() for k in keys])
            if hit is not None and _scalar(hit[1], False):
                seen.setdefault(format_path(keys))
            if len(seen) >= limit:
                return list(seen)
    return list(seen)


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    keys = [k.lower() for k in parse_path(path)]
    return any(not p or keys[: len(p.split("."))] == p.split(".") for p in prefixes)


def _value_at(entry: dict, path: str):
    hit = lookup(entry, [k.lower() for k in parse_path(path)])
    return hit[1] if hit is not None and _scalar(hit[1], False) else None


def _holds_kafka_text(objects: list[dict], path: str) -> bool:
    return any(isinstance(v, str) and KAFKA_TEXT.search(v) for v in (_value_at(o, path) for o in objects))


def _first_path(objects: list[dict], candidates: list[str], strings: bool = False) -> str | None:
    """The first candidate (dotted, lowercase) that resolves to a scalar in any sample."""
    for candidate in candidates:
        names = candidate.split(".")
        for entry in objects:
            hit = lookup(entry, names)
            if hit is not None and _scalar(hit[1], strings):
                return format_path(hit[0])
    return None


def _scalar(value, strings: bool) -> bool:
    if strings:
        return isinstance(value, str)
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _json_overrides(objects: list[dict], prefixes, columns: dict[str, str], seen: tuple[str, ...]) -> dict[str, str]:
    """Role -> path for each ``columns`` entry, from the root or under the envelope's prefix."""
    found, missing = {}, []
    for role, column in columns.items():
        names = [n.lower() for n in parse_path(column)]
        candidates = [".".join(filter(None, (p, *names))) for p in ("", *prefixes)]
        path = _first_path(objects, candidates) or _first_any(objects, candidates)
        if path is None:
            missing.append(f"{role}={column}")
        else:
            found[role] = path
    if missing:
        raise ForensicsError(
            f"--columns {', '.join(missing)}: no such field in the export's entries.", f"Fields seen: {', '.join(seen[:60])}."
        )
    return found


def _first_any(objects: list[dict], candidates: list[str]) -> str | None:
    """The first candidate present in any sample, whatever its value."""
    for candidate in candidates:
        for entry in objects:
            hit = lookup(entry, candidate.split("."))
            if hit is not None:
                return format_path(hit[0])
    return None


def _keys_seen(objects: list[dict], limit: int = 400) -> tuple[str, ...]:
    """Dotted paths of the leaves in the samples, in first-seen order."""
    seen: dict[str, None] = {}
    for entry in objects:
        for path in leaf_paths(entry, []):
            seen.setdefault(format_path(path))
            if len(seen) >= limit:
                return tuple(seen)
    return tuple(seen)
