"""The vocabulary and the serializer of the JSON result (``forensics analyze --json``), with no
Spark in it: the report side reads the JSON with these names alone.

The field names are a stable contract: add, never rename or drop.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from functools import lru_cache
from importlib import resources
from typing import Callable, Iterable, Iterator, Mapping, TextIO

CONTRACT_VERSION = "1.1"
"""The version of the result's contract (``result.schema.json``), written as ``contract_version``.
Its minor grows when fields are added; names are never renamed or dropped, so the major stays."""
CHECK_ENV = "FORENSICS_CHECK_CONTRACT"
"""Set (to anything but empty or 0), every analysis checks its result against the schema as it
is built and read (``checked``): the test suite sets it, so that every analysis it runs is checked."""

GROUP = "group"
"""The JSON's name of the model tables' ``group_id`` (``rebalances``, ``ownership``, ``findings``)."""

# The kinds of a partition's commit history (``model.commits.kind``, ``commits[].kind``): what
# the consumer logged about its committed offset or position, and the offset dumps' rows.
COMMIT = "commit"
COMMIT_FAILED = "commit failed"
RESET = "reset"
OUT_OF_RANGE = "out of range"
NO_COMMITTED_OFFSET = "no committed offset"
POSITION_FROM_COMMIT = "position from commit"
SEEK = "seek"
DUMP_COMMIT = "dump commit"
DUMP_SNAPSHOT = "dump snapshot"
DUMPED_KINDS = (DUMP_COMMIT, DUMP_SNAPSHOT)
"""Kinds of committed offsets read from offset dumps, not logged by the consumer."""
COMMITTED_KINDS = (COMMIT, *DUMPED_KINDS)
"""Kinds that state a committed offset."""

# ``inputs[].date_order``: which field of a file's ``dd/MM/yyyy`` dates is the day, as its dates
# show (``ingest.records.slashed_date_orders``); null for a file without such dates.
DAY_FIRST_ORDER = "day_first"
MONTH_FIRST_ORDER = "month_first"
UNKNOWN_DATE_ORDER = "unknown"
"""No date of the file passes 12 (or both fields do): its times stay unread."""
REPOSITIONING_KINDS = (RESET, OUT_OF_RANGE, NO_COMMITTED_OFFSET, SEEK)
"""Kinds that move the consumer's position away from its committed offset."""


def json_value(value):
    """A value as the JSON holds it: times in ISO 8601, UTC, to the millisecond; the rest as is."""
    if isinstance(value, datetime):
        return in_utc(value).isoformat(timespec="milliseconds") + "Z"
    return value.isoformat() if hasattr(value, "isoformat") else value


def in_utc(stamp: datetime) -> datetime:
    """A time read from Spark, as a naive UTC time. PySpark returns a timestamp as a naive time in
    the Python process's own zone (``datetime.fromtimestamp``), whatever the session's time zone:
    read as UTC, every time of an analyst's kernel in New York would be 4-5 hours off."""
    return stamp.astimezone(timezone.utc).replace(tzinfo=None)


def json_name(field: str) -> str:
    """A model column's name in the JSON (``group_id`` is ``group``)."""
    return GROUP if field == "group_id" else field


class Rows:
    """A long list of the result (the rows of a model table) that is read when it is used, row by
    row, so that ``write_json`` never holds it whole. ``produce`` returns a new iterator of
    JSON-ready dicts at every use; or ``texts`` one of each row's JSON text (as Spark's
    ``to_json`` writes it), which ``write_json`` writes as it is and iteration parses."""

    def __init__(self, produce: Callable[[], Iterable[dict]] | None = None, texts: Callable[[], Iterable[str]] | None = None):
        if (produce is None) == (texts is None):
            raise TypeError("Rows takes either produce or texts")
        self._produce = produce
        self._texts = texts

    def __iter__(self) -> Iterator[dict]:
        return iter(self._produce()) if self._produce else (json.loads(text) for text in self._texts())

    def texts(self) -> Iterator[str]:
        """Each row as a line of JSON in ASCII, as ``row_text`` writes it."""
        if self._produce:
            return (row_text(row) for row in self._produce())
        return (text if text.isascii() else row_text(json.loads(text)) for text in self._texts())


def row_text(row) -> str:
    """A row of a list as one line of JSON, in ASCII (``json.dumps``' default), with no padding:
    ``json.dumps`` uses its C encoder only where nothing is indented."""
    return json.dumps(row, separators=(",", ":"), default=str)


def materialised(result: Mapping) -> dict:
    """``result`` with every ``Rows`` read into a list."""
    return {key: list(value) if isinstance(value, Rows) else value for key, value in result.items()}


def write_json(fields: Iterable[tuple[str, object]], handle: TextIO, indent: int = 2) -> None:
    """The JSON object of ``fields`` (key, value pairs, read in order) written to ``handle``,
    indented by ``indent``, followed by a newline; each item of a ``Rows`` or list value on a
    line of its own (``row_text``: ``grep`` finds a whole row), written as it is read (the text
    of a long list is never held whole)."""
    pad = " " * indent
    handle.write("{")
    empty = True
    for key, value in fields:
        handle.write(("\n" if empty else ",\n") + pad + json.dumps(key) + ": ")
        empty = False
        if isinstance(value, (Rows, list)):
            _write_rows(value.texts() if isinstance(value, Rows) else map(row_text, value), handle, pad)
        else:
            handle.write(_indented(value, pad, indent))
    handle.write("}\n" if empty else "\n}\n")


def _write_rows(texts: Iterable[str], handle: TextIO, pad: str) -> None:
    opened = False
    for text in texts:
        handle.write(("[\n" if not opened else ",\n") + pad * 2 + text)
        opened = True
    handle.write("\n" + pad + "]" if opened else "[]")


def _indented(value, pad: str, indent: int) -> str:
    """``value`` as indented JSON whose lines after the first start at ``pad``."""
    return json.dumps(value, indent=indent, default=str).replace("\n", "\n" + pad)


@lru_cache(maxsize=1)
def result_schema() -> dict:
    """The JSON Schema (draft 2020-12) of the ``--json`` result, shipped in the package: what each
    field holds, the names every result carries, the detectors' and verdicts' names."""
    return json.loads(resources.files(__package__).joinpath("result.schema.json").read_text(encoding="utf-8"))


def contract_checked() -> bool:
    """Whether ``CHECK_ENV`` asks analyses to check their results."""
    return os.environ.get(CHECK_ENV, "") not in ("", "0")


class ContractViolation(AssertionError):
    """A result that does not hold to ``result_schema``: a bug of the toolkit, never of the input."""


def checked(result: dict) -> dict:
    """``result`` checked against ``result_schema``: its fields at once, the rows of each ``Rows``
    list as they are read (the rows stay streamed). Needs ``jsonschema`` (a test dependency)."""
    import jsonschema

    schema = result_schema()
    validator = jsonschema.Draft202012Validator(schema)
    now = {key: [] if isinstance(value, Rows) else value for key, value in result.items()}
    _raise_first(validator.iter_errors(now), "the result")
    items = {
        key: jsonschema.Draft202012Validator(schema["properties"][key]["items"]) for key, value in result.items() if isinstance(value, Rows)
    }
    return {key: _checked_rows(value, key, items[key]) if key in items else value for key, value in result.items()}


def _checked_rows(rows: Rows, key: str, validator) -> Rows:
    def produce() -> Iterator[dict]:
        for index, row in enumerate(rows):
            _raise_first(validator.iter_errors(row), f"{key}[{index}]")
            yield row

    return Rows(produce=produce)


def _raise_first(errors, where: str) -> None:
    error = next(iter(errors), None)
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path)
        raise ContractViolation(f"{where}{'/' + path if path else ''}: {error.message[:300]}")
