"""An export's columns told by what their values hold, and the message column every export needs."""

from __future__ import annotations

import re
from typing import Sequence

from ...errors import ForensicsError
from ...layouts._common import ANY_TIMESTAMP, KAFKA_OPENINGS, KAFKAJS_NAMESPACE, LEVELS

SAMPLES = 50
"""Entries of the head looked at to find the columns."""


KAFKA_TEXT = re.compile(
    rf"{KAFKA_OPENINGS}|org\.apache\.kafka|o\.a\.k\.|rdkafka|kafkajs|\[thrd:|{KAFKAJS_NAMESPACE}|"
    r"\b(?:Setting (?:offset|newly assigned partitions)|(?:Revoke|Adding newly|Lost) (?:previously )?assigned partitions|"
    r"(?:Successfully )?joined (?:the )?group|(?:Discovered|Found) group coordinator|Heartbeat failed|Attempt to heartbeat)\b"
)
"""Text only a Kafka client or broker writes: a log-context prefix, a Kafka class, a client's
name or namespace, the group protocol's steps in their clients' words. The column whose values
hold it most is a structured record's message."""

TIME_VALUE = re.compile(rf"^\s*(?:{ANY_TIMESTAMP})\s*$")

_LEVEL_VALUE = re.compile(rf"^\s*(?:{LEVELS}|WARNI?|ERR|DBG|TRC|FINE|CONFIG)\s*$", re.IGNORECASE)
_HOST_VALUE = re.compile(r"^[A-Za-z0-9][\w.-]{0,252}$")


def roles_by_values(names: Sequence[str], rows: list[list]) -> dict[str, str]:
    """Role -> column of ``rows`` (lists of cell values, by position in ``names``) told by what
    the values hold: the message the column with the most values holding Kafka text (the longer
    on a tie), the time a column whose every value is a time, the level one of levels, the host
    the first other column of one-word names (one with dots, dashes or digits first: a pod or
    a host rather than an application's name)."""

    def values(at: int) -> list[str]:
        return [str(row[at]) for row in rows if at < len(row) and row[at] is not None and str(row[at]).strip()]

    columns = {name: values(at) for at, name in enumerate(names)}
    columns = {name: vals for name, vals in columns.items() if vals}
    roles: dict[str, str] = {}
    scored = [(sum(bool(KAFKA_TEXT.search(v)) for v in vals), sum(map(len, vals)) / len(vals), name) for name, vals in columns.items()]
    best = max(scored, key=lambda s: (s[0], s[1]), default=None)
    if best and best[0] > 0:
        roles["message"] = best[2]
    for name, vals in columns.items():
        if name in roles.values():
            continue
        if "time" not in roles and all(TIME_VALUE.match(v) for v in vals):
            roles["time"] = name
        elif "level" not in roles and all(_LEVEL_VALUE.match(v) for v in vals):
            roles["level"] = name
    hosts = [
        name for name, vals in columns.items() if name not in roles.values() and all(_HOST_VALUE.match(v) and not v.isdigit() for v in vals)
    ]
    if hosts:
        roles["host"] = next((n for n in hosts if all(re.search(r"[.\d-]", v) for v in columns[n])), hosts[0])
    return roles


def no_message(columns: dict[str, str] | None, available) -> None:
    """Without a message column a file is no export, unless the user named columns: then say so."""
    if columns:
        raise ForensicsError(
            "--columns gives no message column and none of the usual ones (_raw, @message, Line, textPayload, message, msg) is there.",
            f"Add message=<column>; columns available: {', '.join(list(available)[:60])}.",
        )
    return None
