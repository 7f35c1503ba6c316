"""Redaction for shared reports: identifiers replaced by keyed pseudonyms, consistently.

Hosts, IP addresses, client ids, member ids (and any UUID), group instance ids, group ids, file
paths and, optionally, topic names are replaced everywhere in an analysis result, and in any log text shown
with it, by ``<kind>-<8 hex>`` where the hex is an HMAC-SHA256 of the identifier under one key:
the same identifier gets the same pseudonym in every file, table and figure, so joins still work,
and without the key a pseudonym cannot be turned back (nor guessed by hashing candidate names).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections import Counter
from dataclasses import dataclass, field

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
    "topic": ("topic",),
    "file": ("path", "source_file", "file", "duplicate_of"),
}
"""Result fields that name an identifier of each kind (values or lists of values)."""
MEMBER_FIELDS = ("member", "members", "members_joined", "members_left")
"""Fields holding ``host/client`` member names."""


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
        ordered = sorted(self.names, key=len, reverse=True)  # longest first: a client id before its group
        self._pattern = re.compile("|".join(re.escape(name) for name in ordered)) if ordered else None
        self._seen: dict[str, str] = {}

    def pseudonym(self, kind: str, value: str) -> str:
        if value not in self._seen:
            digest = hmac.new(self.key, f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()[:8]
            self._seen[value] = f"{kind}-{digest}"
            self.counts[kind] += 1
        return self._seen[value]

    def text(self, value: str) -> str:
        """``value`` with every known identifier, UUID and IP address replaced."""
        if self._pattern is not None:
            value = self._pattern.sub(lambda m: self.pseudonym(self.names[m.group(0)], m.group(0)), value)
        value = UUID.sub(lambda m: self.pseudonym("id", m.group(0)), value)
        return IP.sub(lambda m: self.pseudonym("ip", m.group(0)), value)

    def apply(self, value):
        """A deep copy of a JSON-like value with every string redacted (keys kept)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.apply(item) for key, item in value.items()}
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


__all__ = ["Redactor", "identifiers", "redactor_for"]
