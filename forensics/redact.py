"""Redaction for shared reports: identifiers replaced by keyed pseudonyms, consistently.

Hosts, IP addresses, client ids, member ids (and any UUID), group instance ids, group ids, file
paths and, optionally, topic names are replaced everywhere in an analysis result, and in any log text shown
with it, by ``<kind>-<8 hex>`` where the hex is an HMAC-SHA256 of the identifier under one key:
the same identifier gets the same pseudonym in every file, table and figure, so joins still work,
and without the key a pseudonym cannot be turned back (nor guessed by hashing candidate names).
Log text held in a result (``text`` of the samples, ``message`` of a file's first record) is
dropped: besides the identifiers known here it names brokers, paths and data.

The names of the directories and files read (``path_names``) are learned after the result is
redacted: inside the result they only occur within whole paths (pseudonymised whole) and as hosts,
so they are masked in the text composed around it, titles, parameters and file names; masking
them in the result's own text would also mask a detector named like its sample directory.
"""

from __future__ import annotations

import glob
import hashlib
import hmac
import os
import re
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
IP = re.compile(rf"(?<![\d.]){_OCTET}(?:\.{_OCTET}){{3}}(?![\d.])")
UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
MIN_LENGTH = 3
"""Shorter identifiers (``c1``, ``a``) are left alone: replacing them would garble ordinary text."""

FIELDS = {
    "host": ("host", "previous_host", "reference"),
    "client": ("client_id",),
    "member": ("member_id", "member_ids", "leader", "consumer_id"),
    "instance": ("instance_id", "instance_ids"),
    "group": ("group", "group_id", "application_id"),
    "transactional": ("transactional_id", "transactional.id"),
    "topic": ("topic",),
    "file": ("path", "source_file", "file", "duplicate_of"),
}
"""Result fields that name an identifier of each kind (values or lists of values)."""
MEMBER_FIELDS = ("member", "members", "members_joined", "members_left")
"""Fields holding ``host/client`` member names."""
BROKER_FIELDS = ("bootstrap.servers", "bootstrap_servers")
"""Fields listing brokers (``[SASL_SSL://kafka-1.internal:9093, ...]``): each host a ``broker``."""
BROKER_HOST = re.compile(r"(?:\w+://)?([^\s,\[\]/:]+)(?::\d+)?")
LOG_TEXT_FIELDS = ("text", "message")
"""Fields holding log text (samples' lines, a file's first record): replaced by ``REDACTED``."""
REDACTED = "(redacted)"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/*")


def _walk(value, visit):
    if isinstance(value, dict):
        for key, item in value.items():
            visit(key, item)
            _walk(item, visit)
    elif isinstance(value, list):
        for item in value:
            _walk(item, visit)


def identifiers(result: dict, topics: bool = False) -> dict[str, str]:
    """Identifier -> kind, collected from an analysis result's fields."""
    found: dict[str, str] = {}
    kinds = {name: kind for kind, names in FIELDS.items() for name in names if kind != "topic" or topics}

    def add(kind: str, value) -> None:
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and len(item) >= MIN_LENGTH and item not in ("null", "None"):
                found.setdefault(item, kind)

    def visit(key: str, value) -> None:
        if key in kinds:
            add(kinds[key], value)
        elif key in MEMBER_FIELDS:
            for member in value if isinstance(value, list) else [value]:
                if isinstance(member, str) and "/" in member:
                    host, client = member.split("/", 1)
                    add("host", host)
                    add("client", client)
        elif key in BROKER_FIELDS and isinstance(value, str):
            add("broker", BROKER_HOST.findall(value))
        elif key == "assignments" and isinstance(value, list):
            visit("members", [a.get("member") for a in value if isinstance(a, dict)])

    _walk(result, visit)
    return found


@dataclass
class Redactor:
    """Replaces the identifiers of one analysis (and IPs and UUIDs anywhere) by pseudonyms."""

    names: dict[str, str]
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._seen: dict[str, str] = {}
        self._compile()

    def _compile(self) -> None:
        ordered = sorted(self.names, key=len, reverse=True)  # longest first: a client id before its group
        self._pattern = re.compile("|".join(re.escape(name) for name in ordered)) if ordered else None

    def learn(self, names: Iterable[str], kind: str = "path") -> Redactor:
        """Also mask ``names`` (as ``kind`` unless already known) in later ``text`` calls."""
        self.names = {**{name: kind for name in names}, **self.names}
        self._compile()
        return self

    def pseudonym(self, kind: str, value: str) -> str:
        if value not in self._seen:
            digest = hmac.new(self.key, f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()[:8]
            self._seen[value] = f"{kind}-{digest}"
            self.counts[kind] += 1
        return self._seen[value]

    def name(self, kind: str, value: str | None) -> str | None:
        """The pseudonym of one identifier a user typed (``--group``): the one it has in the
        result when known there, else one of ``kind``."""
        return None if value is None else self.pseudonym(self.names.get(value, kind), value)

    def text(self, value: str | None) -> str | None:
        """``value`` with every known identifier, UUID and IP address replaced."""
        if not value:
            return value
        if self._pattern is not None:
            value = self._pattern.sub(lambda m: self.pseudonym(self.names[m.group(0)], m.group(0)), value)
        value = UUID.sub(lambda m: self.pseudonym("id", m.group(0)), value)
        return IP.sub(lambda m: self.pseudonym("ip", m.group(0)), value)

    def apply(self, value):
        """A deep copy of a JSON-like value with every string redacted (keys kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: REDACTED if key in LOG_TEXT_FIELDS and isinstance(item, str) else self.apply(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.apply(item) for item in value]
        return value

    def summary(self) -> dict[str, int]:
        """How many distinct identifiers of each kind were masked."""
        return dict(sorted(self.counts.items()))


def redactor_for(result: dict, key: str | bytes | None = None, topics: bool = False) -> Redactor:
    """A redactor for an analysis result; ``key`` (text or bytes) makes pseudonyms stable across
    reports, else a random key is used (stable within one report only)."""
    names = identifiers(result, topics)
    if key is None:
        return Redactor(names)
    return Redactor(names, key.encode() if isinstance(key, str) else key)


def _parts(path: str) -> tuple[str, ...]:
    """A path's names from its root down (a URI's scheme dropped; ``/`` or ``\\``)."""
    return tuple(name for name in _SCHEME.sub("", str(path).replace("\\", "/")).split("/") if name not in ("", "."))


def _identifying(name: str) -> bool:
    """A directory or file name that can tell whose a file is: not generic by ingest's own rule
    for hosts (``logs``, ``2024-03-11``, ``app.log``, ``kafka``) and not too short. (Imported
    here: ``forensics.ingest`` loads pyspark, which a notebook reading a saved result never needs.)"""
    from .ingest.paths import GENERIC_DIRS, GENERIC_FILES, host_from_name

    return len(name) >= MIN_LENGTH and not GENERIC_DIRS.match(name) and not GENERIC_FILES.match(host_from_name(name))


def _named_root(path: str) -> tuple[str, ...]:
    """The names of a path the user named, up to its first glob pattern (absolute when local)."""
    if not _SCHEME.match(path):
        path = os.path.abspath(os.path.expanduser(path))
    parts = _parts(path)
    fixed = [i for i, name in enumerate(parts) if glob.has_magic(name)]
    return parts[: fixed[0]] if fixed else parts


def _anchor(root: tuple[str, ...]) -> list[str]:
    """A root's last identifying name (``incident/logs`` -> ``incident``), the way
    ``forensics.ingest.paths.infer_host`` walks up past generic directories."""
    return next(([name] for name in reversed(root) if _identifying(name)), [])


def path_names(files: Iterable[str | None], named: Iterable[str] = ()) -> set[str]:
    """The directory and file names that identify an incident's inputs: each path the user
    named (``named``) by its own name, or its nearest identifying parent's, and every name below
    it down to the ``files`` read (absolute paths or URIs, as the result's ``inputs[].path``);
    without ``named``, the same below the directory all files share. Generic names are left out."""
    paths = [_parts(f) for f in files if f]
    roots = [_named_root(str(p)) for p in named] or ([tuple(os.path.commonprefix([p[:-1] for p in paths]))] if paths else [])
    names: set[str] = set()
    for root in roots:
        names.update(_anchor(root))
        for parts in paths:
            if parts[: len(root)] == root:
                names.update(name for name in parts[len(root) :] if _identifying(name))
    return names


__all__ = ["REDACTED", "Redactor", "identifiers", "path_names", "redactor_for"]
