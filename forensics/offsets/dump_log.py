"""``kafka-dump-log.sh`` / ``kafka-run-class.sh kafka.tools.DumpLogSegments``: record batch lines.

Versions (reference CLI21-CLI22): ``baseOffset: 0 lastOffset: 4 count: 5 baseSequence: 0
lastSequence: 4 producerId: 1000 producerEpoch: 0 partitionLeaderEpoch: 4 isTransactional: true
isControl: false [deleteHorizonMs: OptionalLong.empty (3.3+)] position: 0 CreateTime: <ms> size: 120
magic: 2 compresscodec: NONE (<=2.8) | none (3.0+) crc: <n> isvalid: true`` (2.0+); 1.x prints no
``count:`` (``record_count`` is null). Fields are read by name, so their order and the
``keysize``/``keySize`` spellings do not matter.

``partitionLeaderEpoch`` goes to ``leader_epoch``. Topic and partition come from the segment path
of the ``Dumping <dir>/<topic>-<partition>/<segment>.log`` line above the batches, when present.
Skipped: ``Dumping``, ``Starting offset:`` (<=3.2) / ``Log starting offset:`` (3.3+), ``Found N
invalid bytes``, and per-record lines (``| offset: ...`` from ``--print-data-log``/``--deep-iteration``
and ``--offsets-decoder``, and magic 0/1 ``offset: N position: ...`` lines), which are not batches.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from . import _common as c

KIND = "dump_log"
ROW_KINDS = (c.DUMP_LOG_BATCH,)

BATCH = r"^\s*baseOffset: -?\d+ lastOffset: -?\d+ "
MARKER = re.compile(rb"baseOffset: ")
"""In every batch line (``BATCH``; ``kinds_present``)."""
DUMPING = r"^Dumping (\S.*?)\s*$"
SEGMENT_PATH = r"([^/\\]+)-(\d+)[/\\][^/\\]+$"
"""Groups: 1 topic, 2 partition, from ``.../orders-0/00000000000000000000.log``."""
OTHER = (
    r"^(?:Dumping \S|(?:Log )?[Ss]tarting offset: -?\d+|Found \d+ invalid bytes"
    r"|\|\s*offset: -?\d+|offset: -?\d+ (?:position|CreateTime|LogAppendTime|NoTimestampType):)"
)


def _field(value: Column, name: str) -> Column:
    return F.regexp_extract(value, rf"(?:^|\s){name}: (\S+)", 1)


def section(value: Column) -> Column:
    """The ``Dumping <file>`` line itself, else null."""
    return F.when(value.rlike(DUMPING), value)


def skip(value: Column) -> Column:
    """True for the tool's header lines and per-record lines."""
    return value.rlike(OTHER)


def sniff(lines: list[str]) -> bool:
    """True when at least 30 % of the non-blank sample lines are batch, header or record lines."""
    return c.share_match([BATCH, OTHER], lines)


def parse(lines: DataFrame) -> DataFrame:
    """``dump_log_batch`` rows from kafka-dump-log.sh batch lines (1.x-4.x spellings).

    Parameters
    ----------
    lines : DataFrame
        Prepared lines (``source_file, line, value, section, snapshot_ts``).
    """
    value = F.col(c.VALUE)
    path = F.regexp_extract(F.col(c.SECTION), DUMPING, 1)
    rows = lines.where(value.rlike(BATCH))
    return c.to_offsets(
        rows,
        c.DUMP_LOG_BATCH,
        topic=c.dash_null(F.regexp_extract(path, SEGMENT_PATH, 1)),
        partition=c.as_int(F.regexp_extract(path, SEGMENT_PATH, 2)),
        leader_epoch=c.as_int(_field(value, "partitionLeaderEpoch")),
        base_offset=c.as_long(_field(value, "baseOffset")),
        last_offset=c.as_long(_field(value, "lastOffset")),
        producer_id=c.as_long(_field(value, "producerId")),
        producer_epoch=c.as_int(_field(value, "producerEpoch")),
        is_transactional=c.as_bool(_field(value, "isTransactional")),
        is_control=c.as_bool(_field(value, "isControl")),
        record_count=c.as_int(_field(value, "count")),
    )
