"""``kafka-get-offsets.sh`` / ``kafka-run-class.sh kafka.tools.GetOffsetShell``: ``topic:partition:offset``.

Versions (reference CLI13-CLI14): 0.10.2-1.1 may print several comma-separated offsets
(``orders:1:1588,0``, newest first: the first one is kept); 2.0+ prints exactly one, or nothing
after the last colon when no offset matches ``--time`` (``orders:2:`` gives a null offset).
The offset lands in ``log_end_offset``: it is the log end for the default ``--time -1``/``latest``;
for ``--time -2``/``earliest`` (and the other ``--time`` values) it is that offset instead, which
the dump does not say.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from . import _common as c

KIND = "get_offsets"
ROW_KINDS = (c.LOG_OFFSETS,)

LINE = r"^\s*([A-Za-z0-9._-]+):(\d+):(-?\d+)?((?:,-?\d+)*)\s*$"
"""Groups: 1 topic (legal topic characters only, so no colon), 2 partition, 3 first offset."""
MARKER = re.compile(rb"[A-Za-z0-9._-]:[0-9]+:")
"""In every row's line (``LINE``): the end of a topic, a partition, a colon (``kinds_present``)."""


def skip(value: Column) -> Column:
    """GetOffsetShell prints nothing but offset lines: nothing to skip."""
    return F.lit(False)


def sniff(lines: list[str]) -> bool:
    """True when at least 30 % of the non-blank sample lines are ``topic:partition:offset``."""
    return c.share_match([LINE], lines)


def parse(lines: DataFrame) -> DataFrame:
    """``log_offsets`` rows (topic, partition, log_end_offset) from GetOffsetShell output, all versions.

    Parameters
    ----------
    lines : DataFrame
        Prepared lines (``source_file, line, value, snapshot_ts``).
    """
    value = F.col(c.VALUE)
    rows = lines.where(value.rlike(LINE))
    return c.to_offsets(
        rows,
        c.LOG_OFFSETS,
        topic=F.regexp_extract(value, LINE, 1),
        partition=c.as_int(F.regexp_extract(value, LINE, 2)),
        log_end_offset=c.as_long(F.regexp_extract(value, LINE, 3)),
    )
