"""``kafka-consumer-groups.sh --describe`` tables: offsets, ``--members [--verbose]``, ``--state``.

Versions and column sets (reference CLI01-CLI10):

* offsets view: ``TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID``
  (1.0-2.2), ``GROUP`` first from 2.3, ``LEADER-EPOCH`` after ``PARTITION`` with ``--verbose`` (4.0+);
* members view: ``CONSUMER-ID HOST CLIENT-ID #PARTITIONS [ASSIGNMENT]`` (1.1-2.2), ``GROUP`` first from
  2.3, ``GROUP-INSTANCE-ID`` after ``CONSUMER-ID`` when a member is static (2.6+, empty for the
  dynamic members), 4.0 ``--verbose`` ``CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH
  TARGET-ASSIGNMENT [UPGRADED]``; assignments as printed: ``orders(0,1), payments(2)`` (Scala),
  ``(0,1), (2)`` (3.8-3.9 Java bug), ``orders:0,1;payments:2`` (4.0+);
* state view: ``[GROUP] COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS`` with the coordinator as
  ``host:port (id)`` (<=3.7) or ``host:port  (id)`` (3.8+), stored as ``host:port (id)``; an empty
  strategy (Empty groups before 4.0) is null; 4.0 ``--verbose`` epochs are ignored.

A row is read by the header of its block (the header line above it, no blank line between), by
column name, so every version's column set works the same way. ``-`` is null. Table headers and
the CLI's notes and warnings (``Consumer group 'x' has no active members.``) are skipped.
``--reset-offsets``, ``--delete-offsets`` and ``--list`` tables are recognised as sections but
their rows are not offsets rows (they stay unparsed).

Not kept (no column in OFFSETS_SCHEMA): ``#PARTITIONS``, ``CURRENT-EPOCH``, ``TARGET-EPOCH``,
``TARGET-ASSIGNMENT``, ``UPGRADED``, ``GROUP-EPOCH``, ``TARGET-ASSIGNMENT-EPOCH``.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from . import _common as c

KIND = "consumer_groups"
ROW_KINDS = (c.DESCRIBE_OFFSETS, c.DESCRIBE_MEMBERS, c.DESCRIBE_STATE)

OFFSETS_HEADER = r"^(?:GROUP\s+)?TOPIC\s+PARTITION\s+(?:LEADER-EPOCH\s+)?CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG\b"
MEMBERS_HEADER = r"^(?:GROUP\s+)?CONSUMER-ID\s+(?:GROUP-INSTANCE-ID\s+)?(?:HOST\s+)?(?:CLIENT-ID\s+)?#PARTITIONS\b"
STATE_HEADER = r"^(?:GROUP\s+)?COORDINATOR \(ID\)\s+ASSIGNMENT-STRATEGY\s+STATE\b"
OTHER_HEADER = r"^(?:(?:GROUP\s+)?TOPIC\s+PARTITION\s+(?:NEW-OFFSET|STATUS)\b|GROUP(?:\s+TYPE)?\s+STATE\s*$)"
"""Tables of the same tool that hold no offsets rows: reset/delete offsets, ``--list --state``."""
HEADER = "|".join(f"(?:{h})" for h in (OFFSETS_HEADER, MEMBERS_HEADER, STATE_HEADER, OTHER_HEADER))
MARKER = re.compile(rb"CURRENT-OFFSET|#PARTITIONS|ASSIGNMENT-STRATEGY")
"""In the header above every row (``OFFSETS_HEADER``, ``MEMBERS_HEADER``, ``STATE_HEADER``;
``kinds_present``)."""
NOTICE = (
    r"^(?:(?:Warning|WARN|Error|ERROR|Note|NOTE): .*"
    r"|Consumer group '.*' (?:has no active members|is rebalancing|does not exist)\.?)\s*$"
)
COORDINATOR_VALUE = r"(\S+:\d+)\s+\((?:id:\s*)?(-?\d+)[^)]*\)"
"""``host:port (2)``, ``host:port  (2)`` and the 4.0 Node form ``host:port (id: 2 rack: null ...)``."""
_COORDINATOR_TOKEN = "\u0001coordinator\u0001"


def section(value: Column) -> Column:
    """The header line itself where ``value`` is a table header of this tool, else null."""
    return F.when(value.rlike(HEADER), value)


def skip(value: Column) -> Column:
    """True for table headers and the tool's notes, warnings and errors."""
    return value.rlike(HEADER) | value.rlike(NOTICE)


def sniff(lines: list[str]) -> bool:
    """True when the sample holds a ``kafka-consumer-groups.sh --describe`` table header."""
    header = re.compile(HEADER)
    return any(header.search(line.rstrip("\r\n")) for line in lines)


def _header_kind(header: Column) -> Column:
    return (
        F.when(header.rlike(OFFSETS_HEADER), F.lit(c.DESCRIBE_OFFSETS))
        .when(header.rlike(MEMBERS_HEADER), F.lit(c.DESCRIBE_MEMBERS))
        .when(header.rlike(STATE_HEADER), F.lit(c.DESCRIBE_STATE))
    )


def _fill_blank_instance_id(value: Column, header: Column) -> Column:
    """Dynamic members print an empty GROUP-INSTANCE-ID: put ``-`` in its column (header position)."""
    pos = F.locate("GROUP-INSTANCE-ID", header)
    blank = (pos > 0) & (F.substring(value, pos, 1) == " ")
    return F.when(blank, F.overlay(value, F.lit("-"), pos, F.lit(1))).otherwise(value)


def _tokens(df: DataFrame) -> DataFrame:
    """Add ``_names`` (header column names), ``_cells`` (the row split the same way), ``_coord``."""
    header = F.col(c.SECTION)
    names = F.split(F.trim(F.regexp_replace(header, r"COORDINATOR \(ID\)", "COORDINATOR")), r"\s+")
    body = _fill_blank_instance_id(F.rtrim(F.col(c.VALUE)), header)
    coord = F.regexp_extract(body, COORDINATOR_VALUE, 0)
    coordinator = F.concat(
        F.regexp_extract(coord, COORDINATOR_VALUE, 1), F.lit(" ("), F.regexp_extract(coord, COORDINATOR_VALUE, 2), F.lit(")")
    )
    body = F.when(coord != "", F.regexp_replace(body, COORDINATOR_VALUE, _COORDINATOR_TOKEN)).otherwise(body)

    step1 = c.computed_once(df, _names=names, _body=body, _coord=F.when(coord != "", coordinator))

    n = F.size(F.col("_names"))
    plain = F.split(F.trim(F.col("_body")), r"\s+")
    # ASSIGNMENT (last column, Scala renderings "orders(0,1), payments(2)") holds spaces: keep the rest.
    limited = F.split(F.trim(F.col("_body")), r"\s+", n)
    free_text_last = F.element_at(F.col("_names"), -1) == "ASSIGNMENT"
    # An Empty group's strategy is an empty column before 4.0: the row is one cell short.
    at = F.array_position(F.col("_names"), "ASSIGNMENT-STRATEGY").cast("int")
    short_by_strategy = (at > 0) & (F.size(plain) == n - 1)
    with_dash = F.concat(F.slice(plain, 1, F.greatest(at - 1, F.lit(0))), F.array(F.lit("-")), F.slice(plain, F.greatest(at, F.lit(1)), n))
    cells = F.when(free_text_last, limited).when(short_by_strategy, with_dash).otherwise(plain)
    return c.computed_once(step1, _cells=cells).drop("_body")


def _cell(name: str) -> Column:
    """The row's cell under header column ``name`` (null if the header has no such column)."""
    pos = F.array_position(F.col("_names"), name).cast("int")
    return F.when(pos > 0, F.get(F.col("_cells"), pos - 1))


def _text(name: str) -> Column:
    return c.dash_null(_cell(name))


def _valid(kind: Column) -> Column:
    """A row has exactly one cell per header column and numbers where the kind needs them."""
    number_or_dash = lambda name: _cell(name).rlike(r"^(-?\d+|-)$") | _cell(name).isNull()  # noqa: E731
    same_width = F.size(F.col("_cells")) == F.size(F.col("_names"))
    offsets_ok = (
        _cell("PARTITION").rlike(r"^\d+$")
        & number_or_dash("CURRENT-OFFSET")
        & number_or_dash("LOG-END-OFFSET")
        & number_or_dash("LAG")
        & number_or_dash("LEADER-EPOCH")
    )
    members_ok = _cell("#PARTITIONS").rlike(r"^\d+$")
    state_ok = (_cell("#MEMBERS").rlike(r"^\d+$")) & F.col("_coord").isNotNull()
    return same_width & (
        F.when(kind == c.DESCRIBE_OFFSETS, offsets_ok)
        .when(kind == c.DESCRIBE_MEMBERS, members_ok)
        .when(kind == c.DESCRIBE_STATE, state_ok)
        .otherwise(F.lit(False))
    )


def parse(lines: DataFrame) -> DataFrame:
    """Offsets rows of the three ``--describe`` views (see the module docstring), in OFFSETS_SCHEMA.

    Parameters
    ----------
    lines : DataFrame
        Prepared lines (``source_file, line, value, section, snapshot_ts``).

    Returns
    -------
    DataFrame
        One row per table row under a known header; kinds ``describe_offsets``,
        ``describe_members`` and ``describe_state``.
    """
    kind = _header_kind(F.col(c.SECTION))
    candidates = lines.where(kind.isNotNull() & (F.trim(F.col(c.VALUE)) != "") & ~skip(F.col(c.VALUE)))
    rows = _tokens(candidates.withColumn("_kind", kind)).where(_valid(F.col("_kind")))
    return c.to_offsets(
        rows,
        F.col("_kind"),
        group_id=_text("GROUP"),
        topic=_text("TOPIC"),
        partition=c.as_int(_cell("PARTITION")),
        current_offset=c.as_long(_cell("CURRENT-OFFSET")),
        log_end_offset=c.as_long(_cell("LOG-END-OFFSET")),
        lag=c.as_long(_cell("LAG")),
        leader_epoch=c.as_int(_cell("LEADER-EPOCH")),
        consumer_id=_text("CONSUMER-ID"),
        host=_text("HOST"),
        client_id=_text("CLIENT-ID"),
        instance_id=_text("GROUP-INSTANCE-ID"),
        member_assignment=F.coalesce(_text("ASSIGNMENT"), _text("CURRENT-ASSIGNMENT")),
        coordinator=F.col("_coord"),
        state=_text("STATE"),
        assignment_strategy=_text("ASSIGNMENT-STRATEGY"),
        members=c.as_int(_cell("#MEMBERS")),
    )
