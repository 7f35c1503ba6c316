"""Kafka version strings and the catalogue's ``versions`` ranges (``"2.4-4.0"``, ``"1.0-2.3,4.1-4.4"``)."""

from __future__ import annotations


def parse(version: str) -> tuple[int, ...]:
    """``"2.0.1"`` -> ``(2, 0, 1)``."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def in_range(version: str, ranges: str) -> bool:
    """True when ``version`` lies in one of the comma-separated ``a-b`` ranges.

    Bounds compare on as many components as they give: ``2.3`` covers ``2.3.1``; ``1.5.0``
    as an upper bound excludes ``1.5.2``.
    """
    v = parse(version)
    for part in str(ranges).split(","):
        low, _, high = part.strip().partition("-")
        high = high or low
        lo, hi = parse(low), parse(high)
        if v[: len(lo)] >= lo and v[: len(hi)] <= hi:
            return True
    return False


class Version:
    """A Kafka client version with comparisons against ``"x.y"`` texts."""

    def __init__(self, text: str):
        self.text = text
        self.tuple = parse(text)

    def at_least(self, other: str) -> bool:
        return self.tuple >= parse(other)

    def below(self, other: str) -> bool:
        return not self.at_least(other)

    def within(self, ranges: str) -> bool:
        return in_range(self.text, ranges)

    def __str__(self) -> str:
        return self.text
