"""Dotted paths to the fields of JSON entries (``_source.host.name``, ``labels."k8s-pod/app"``),
found nested or flattened."""

from __future__ import annotations

from ...errors import ForensicsError


def split_outside_quotes(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` where it is not inside double quotes."""
    parts, current, quoted = [], [], False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == sep and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def lookup(entry, names: list[str]) -> tuple[list[str], object] | None:
    """(actual keys, value) of lowercase key segments ``names``, each step nested or flattened
    (``host.name`` finds ``{"host": {"name": ..}}`` and ``{"host.name": ..}``)."""
    if not names:
        return [], entry
    if not isinstance(entry, dict):
        return None
    keys = {k.lower(): k for k in entry}
    for cut in range(len(names), 0, -1):
        key = keys.get(".".join(names[:cut]))
        if key is not None:
            rest = lookup(entry[key], names[cut:])
            if rest is not None:
                return [key, *rest[0]], rest[1]
    return None


def leaf_paths(value, path: list[str]):
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from leaf_paths(inner, [*path, key])
    elif path:
        yield path


def format_path(keys: list[str]) -> str:
    """Keys -> dotted path; a key holding a dot or a quote is double-quoted."""
    return ".".join(f'"{k}"' if ("." in k or '"' in k or not k) else k for k in keys)


def parse_path(path: str) -> list[str]:
    """Dotted path -> keys (``labels."k8s-pod/app"`` -> ``["labels", "k8s-pod/app"]``)."""
    return [part[1:-1] if len(part) >= 2 and part[0] == part[-1] == '"' else part for part in split_outside_quotes(path, ".")]


def json_path(path: str) -> str:
    """Dotted path -> Spark JSON path (``host."a.b"`` -> ``$['host']['a.b']``)."""
    keys = parse_path(path)
    if any("'" in key for key in keys):
        raise ForensicsError(
            f"JSON field {path!r} holds a single quote, which Spark's JSON paths cannot name.", "Rename the field or convert the export."
        )
    return "$" + "".join(f"['{key}']" for key in keys)
