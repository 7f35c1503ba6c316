"""What one way of reading inputs (as lines of text, or as exports' entries) gives the assembly."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from .paths import InputFile


@dataclass
class Part:
    """What one way of reading gives the assembly: kept rows stitched to their heads, the file
    facts of ``text_logs._file_facts``, the folded rows, the input of each URI; for exports, the entries
    only counted, as irrelevant heads (``folded``), and what each export is (``descriptions``)."""

    stitched: DataFrame
    facts: list[dict]
    by_uri: dict[str, InputFile]
    folded_rows: list[dict] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    wraps: dict[str, int] = field(default_factory=dict)
    folded: DataFrame | None = None
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    """The files read newest first, numbered in time order in ``stitched`` (``records.in_time_order``)."""
    date_orders: dict[str, str | None] = field(default_factory=dict)
    """The order of each file's ``dd/MM/yyyy`` dates (``records.slashed_date_orders``)."""
