"""Read input files in place with Spark, keeping each line's file and exact line number.

Spark gives no line numbers for text. The session puts every file split in a partition of its
own (``spark.SESSION_CONF``), so a row's index inside its partition is its index inside its
split, and ``monotonically_increasing_id`` carries that index in its low 33 bits. Plain files
larger than one split are counted split by split in a cheap pre-pass to know how many lines
come before each split (``read_lines``), or, where the lines are reduced first, each split's
count comes out of that same pass (``read_splits``). Which file and byte each split starts at
is read from Spark's plan (``spark.scan_splits``), not with every row. Line breaks are LF, CRLF
or a lone CR (Hadoop's line reader).
"""

from __future__ import annotations

import atexit
import gzip
import os
import shutil
import tempfile
from collections import Counter
from typing import Iterable, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..spark import scan_splits
from .paths import InputFile

ROW_INDEX_MASK = (1 << 33) - 1
FILE_URI = "_metadata.file_path"
BLOCK_START = "_metadata.file_block_start"


def spark_key(uri: Column) -> Column:
    """Spark's percent-encoded file URI as a plain path (``file:/a%20b`` -> ``/a b``)."""
    decoded = F.url_decode(F.replace(uri, F.lit("+"), F.lit("%2B")))
    return F.regexp_replace(decoded, r"^file:(//)?(?=/)", "")


def readable_paths(files: Sequence[InputFile]) -> dict[str, InputFile]:
    """Path Spark should read -> input file, for the files without a problem (and not
    duplicating another file's content).

    Spark skips file names that start with ``.`` or ``_`` even when named explicitly; such
    local files are read through a symbolic link with an ordinary name instead.
    """
    paths: dict[str, InputFile] = {}
    for file in files:
        if file.problem or file.duplicate_of:
            continue
        name = os.path.basename(file.path)
        if not file.is_uri and name[:1] in "._":
            link = os.path.join(_staging_dir(), f"{len(paths)}-{name.lstrip('._') or 'file'}")
            os.symlink(file.path, link)
            paths[link] = file
        else:
            paths[file.path] = file
    return paths


_STAGING: list[str] = []


def _staging_dir() -> str:
    if not _STAGING:
        _STAGING.append(tempfile.mkdtemp(prefix="forensics-inputs-"))
        atexit.register(shutil.rmtree, _STAGING[0], True)
    return _STAGING[0]


def _lines_before_splits(spark: SparkSession, paths: Sequence[str]) -> Column | None:
    """Map column (file URI, split start) -> lines in the file's earlier splits, for split files."""
    rows = (
        _text(spark, paths)
        .groupBy("split")
        .agg(F.count(F.lit(1)).alias("count"), F.first("uri").alias("uri"), F.first("start").alias("start"))
        .collect()  # one small row per split of the few files larger than a split
    )
    before: dict[str, int] = {}
    running: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: (r["uri"], r["start"])):
        before[f"{row['uri']}#{row['start']}"] = running.get(row["uri"], 0)
        running[row["uri"]] = running.get(row["uri"], 0) + row["count"]
    return F.create_map(*[F.lit(x) for item in before.items() for x in item]) if before else None


def split_bytes(spark: SparkSession) -> int:
    """The session's split size, with the open cost raised to match so that no partition holds
    two splits (the row-index trick above depends on it)."""
    split = _bytes(spark.conf.get("spark.sql.files.maxPartitionBytes"))
    if _bytes(spark.conf.get("spark.sql.files.openCostInBytes")) < split:
        spark.conf.set("spark.sql.files.openCostInBytes", str(split))
    return split


def _bytes(text: str) -> int:
    units = {"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}
    number = text.strip().lower().rstrip("bgkm")
    return int(number) * units.get(text.strip().lower()[len(number) :] or "b", 1)


def _text(spark: SparkSession, paths: Sequence[str], where: Column | None = None) -> DataFrame:
    """Spark's text rows with the file URI, the split's start byte, the split (partition index),
    the 1-based row index within the split, and the line without a leading byte-order mark;
    only the lines that pass ``where`` (a test of the line as read) when it is given.

    The file and start of each split come from Spark's plan (``spark.scan_splits``), looked up
    by split for the rows that pass ``where``; only on Spark Connect are they read with every row."""
    read = spark.read.text(list(paths))
    splits = scan_splits(read)
    placed = [F.col(FILE_URI).alias("uri"), F.col(BLOCK_START).alias("start")] if splits is None else []
    lines = read.select(
        F.spark_partition_id().alias("split"),
        (F.monotonically_increasing_id().bitwiseAND(F.lit(ROW_INDEX_MASK)) + 1).alias("line"),
        "value",
        *placed,
    )
    if where is not None:
        lines = lines.where(where)  # before the mark is taken off: only the lines that pass pay for that
    if splits is not None:
        lines = lines.select(
            "*", _of_split([uri for uri, _ in splits]).alias("uri"), _of_split([start for _, start in splits], "long").alias("start")
        )
    value = F.col("value")
    no_bom = F.when(F.substring(value, 1, 1) == "\ufeff", F.expr("substring(value, 2)")).otherwise(value)
    return lines.select("uri", "start", "split", "line", no_bom.alias("value"))


def open_local(path: str, mode: str = "rb", **options):
    """A local file opened as ``open`` opens it, decompressed when its name ends in ``.gz``."""
    return (gzip.open if path.endswith(".gz") else open)(path, mode, **options)


def read_lines(spark: SparkSession, paths: Sequence[str], sizes: dict[str, int | None], where: Column | None = None) -> DataFrame:
    """One row per input line: ``uri`` (Spark's file URI), ``line`` (1-based), ``value``; only
    the lines that pass ``where`` when it is given (the offsets of split files are then looked
    up for those lines only).

    ``sizes`` gives the byte size of local files; plain files larger than a split get the
    pre-pass. URIs of unknown size are assumed to fit in one split only when small: they are
    always counted, which costs one extra read of those files.
    """
    split = split_bytes(spark)
    split_files = [p for p in paths if not p.endswith(".gz") and (sizes.get(p) is None or sizes[p] > split)]
    before = _lines_before_splits(spark, split_files) if split_files else None
    text = _text(spark, paths, where)
    line = F.col("line")
    if before is not None:
        later_split = F.col("start") > 0
        line = line + F.when(
            later_split, F.coalesce(before[F.concat_ws("#", F.col("uri"), F.col("start").cast("string"))], F.lit(0))
        ).otherwise(0)
    return text.select("uri", line.alias("line"), "value")


def read_splits(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """One row per input line, numbered within its split, with no pre-pass: ``split``, ``line``
    (1-based within the split), ``value``, and the split's file ``uri`` and ``start`` byte.

    For callers that reduce the lines first: ``split_offsets`` then gives, from the line count
    of each split, the lines before it in its file, and ``place`` numbers the rows that are left.
    """
    split_bytes(spark)
    return _text(spark, paths)


def split_offsets(rows: Iterable) -> dict[int, tuple[str, int]]:
    """Split -> (file URI, lines in the file's earlier splits), from rows with ``split``,
    ``lines`` and, on at least one row of each split, its ``uri`` and ``start``."""
    lines: Counter = Counter()
    where: dict[int, tuple[str, int]] = {}
    for row in rows:
        lines[row["split"]] += row["lines"]
        if row["uri"] is not None:
            where[row["split"]] = (row["uri"], row["start"])
    offsets: dict[int, tuple[str, int]] = {}
    running: Counter = Counter()
    for split, (uri, _) in sorted(where.items(), key=lambda item: item[1]):
        offsets[split] = (uri, running[uri])
        running[uri] += lines[split]
    return offsets


def place(frame: DataFrame, offsets: dict[int, tuple[str, int]]) -> DataFrame:
    """``frame`` (from ``read_splits``) with its file ``uri`` and true ``line`` number, by
    ``split_offsets`` (``_of_split``); ``split`` and ``start`` dropped."""
    if not offsets:
        return frame.withColumn("uri", F.lit(None).cast("string")).drop("split", "start")
    placed = [offsets.get(i, ("", 0)) for i in range(max(offsets) + 1)]
    uri, before = _of_split([u for u, _ in placed]), _of_split([b for _, b in placed], "long")
    return frame.withColumn("uri", uri).withColumn("line", F.col("line") + before).drop("split", "start")


def _of_split(values: Sequence, cast: str | None = None) -> Column:
    """Each row's entry of ``values`` (one per split, in split order) by its ``split``: a literal
    array indexed, no map lookup."""
    return F.element_at(F.array(*[F.lit(v) if cast is None else F.lit(v).cast(cast) for v in values]), F.col("split") + 1)
