"""Sniffing: a download from a log platform told from an ordinary log file by its first characters."""

from __future__ import annotations

from .shape import ExportShape
from .sniff_delimited import delimited_shape
from .sniff_json import array_shape, ndjson_shape

SNIFF_CHARS = 64 * 1024
"""How much of a file ``sniff_export`` wants to see (decoded text)."""


def sniff_export(head: str, columns: dict[str, str] | None = None) -> ExportShape | None:
    """The export shape of a file from its first ~64 KiB of text, or None for an ordinary log
    file (log4j, logback, JSON lines of an application with no platform envelope, librdkafka).

    ``columns`` (role -> column, see ``parse_columns_option``) overrides or adds roles; with it a
    CSV/TSV header holding the named columns is an export even without any usual name, JSON
    entries are one even without a platform's envelope, and a header or JSON entry lacking a
    named column raises a ``ForensicsError`` naming what is there. A file whose first line is
    no header (a log4j or logback file) stays None: give ``columns`` for files meant as exports.
    """
    text = head.lstrip("\ufeff")
    body = text.lstrip()
    if not body:
        return None
    if body[0] == "[":
        return array_shape(body, columns)
    if body[0] == "{":
        return ndjson_shape(body, columns)
    return delimited_shape(text, columns)
