"""Log files read as lines of text: folded, placed in their files and stitched, with the facts of
each file (its layouts, wrappers, first head) that the assembly and the accounting use."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from .. import schema as s
from ..registry import literal_map
from ..spark import materialise, rows_together
from . import wrappers
from .accounting import SAMPLE_CHARS
from .part import Part
from .paths import InputFile, infer_host
from .read import place, read_splits, spark_key, split_offsets
from .records import (
    BLOCK_LINES,
    FOLDS,
    classify_others,
    continue_partials,
    fold_lines,
    in_time_order,
    slashed_date_orders,
    split_facts,
    stitch,
    wrap_widths,
)
from .sampling import needed_recognisers


def _file_for(key: str, read_paths: Mapping[str, InputFile]) -> InputFile:
    """The input a Spark file belongs to (a file inside a directory URI gets its own entry)."""
    if key in read_paths:
        return read_paths[key]
    for path, parent in read_paths.items():
        if key.startswith(path.rstrip("/") + "/"):
            return InputFile(key, infer_host(key, path), parent.tz, parent.tz_given)
    return InputFile(key, infer_host(key, None))


def read_text_logs(spark: SparkSession, read_paths: Mapping[str, InputFile], table: dict) -> Part:
    """Log files read as lines: folded, placed in their files, stitched."""
    lines = read_splits(spark, list(read_paths))
    tried = needed_recognisers(read_paths, table)
    by_split = materialise(fold_lines(lines, table, tried))  # small; later plans start from it
    split_rows, folds = rows_together(
        [
            split_facts(by_split).select("*", spark_key(F.col("uri")).alias("key")),
            by_split.where(F.col("k") < 0).select("split", "k", "n", "line"),  # a few per split
        ]
    )
    offsets = split_offsets(split_rows)
    facts = _file_facts(split_rows, offsets)
    by_uri = {row["uri"]: _file_for(row["key"], read_paths) for row in split_rows if row["uri"] is not None}
    first_heads = _first_heads(facts)
    untimed = sorted({uri for uri, _ in offsets.values()} - {u for u, line in first_heads.items() if line == 1})
    first_head = literal_map(first_heads, "bigint")[F.col("uri")]
    lines_of: Counter = Counter()
    for fact in facts:
        lines_of[fact["uri"]] += fact["lines"]
    kept = place(by_split.where(F.col("k") >= 0), offsets)
    if has_partial_lines(facts):
        kept = continue_partials(kept)
    newest_first = {row["uri"] for row in split_rows if row["key"] in tried.newest_first} & set(first_heads)
    spans = {uri: (first_heads[uri], lines_of[uri]) for uri in newest_first}
    if spans:
        kept = kept.withColumn("line", in_time_order(spans))
    hosts = any(fact["wrapper"] in wrappers.NAMING_HOSTS for fact in facts)
    leading_lines = [first_heads.get(uri, lines_of[uri] + 1) - 1 for uri in untimed]
    stitched = materialise(stitch(kept, first_head, untimed, _block_lines(lines_of.values()), hosts, _block_lines(leading_lines)))
    return Part(
        stitched,
        facts,
        by_uri,
        _with_text(lines, _placed_folds(folds, offsets)),
        wraps=_wraps(split_rows, offsets, tried),
        spans=spans,
        date_orders=slashed_date_orders(split_rows, offsets),
    )


def _wraps(split_rows, offsets, tried) -> dict[str, int]:
    """File URI -> the width it was hard-wrapped at: a common width from the lines' facts
    (``records.wrap_widths``), else any width its samples show (``sampling.wrap_width``)."""
    sampled = dict(tried.wraps)
    by_sample = {row["uri"]: sampled[row["key"]] for row in split_rows if row["uri"] is not None and row["key"] in sampled}
    return {**by_sample, **wrap_widths(split_rows, offsets)}


def _block_lines(lengths: Iterable[int]) -> int | None:
    """``BLOCK_LINES`` where some run of lines to stitch is longer than that, else None (a file at a time)."""
    return BLOCK_LINES if max(lengths, default=0) > BLOCK_LINES else None


def has_partial_lines(facts: list[dict]) -> bool:
    """Whether some line of the files (``_file_facts``) is a piece of a line (``wrappers.PIECES``)."""
    return any(fact["wrapper"] in wrappers.PIECES for fact in facts)


def _first_heads(facts) -> dict[str, int]:
    """File URI -> line of its first record head (files with none are absent)."""
    first_head: dict[str, int] = {}
    for row in facts:
        if row["layout"] is not None:
            first_head[row["uri"]] = min(row["first_line"], first_head.get(row["uri"], row["first_line"]))
    return first_head


def classify_text_others(stitched: DataFrame, facts) -> DataFrame:
    """``classify_others`` with each file's first head line and main layout from ``facts``."""
    heads_by_layout: dict[str, Counter] = defaultdict(Counter)
    for row in facts:
        if row["layout"] is not None:
            heads_by_layout[row["uri"]][row["layout"]] += row["lines"]
    main_layout = {u: c.most_common(1)[0][0] for u, c in heads_by_layout.items()}
    uri = F.col("uri")
    return classify_others(stitched, literal_map(_first_heads(facts), "bigint")[uri], literal_map(main_layout)[uri])


def _file_facts(split_rows, offsets) -> list[dict]:
    """Per file URI, layout (None: not a record head) and wrapper (None: none): lines and the
    first such line."""
    facts: dict[tuple, dict] = {}
    for row in split_rows:
        uri, before = offsets[row["split"]]
        key = (uri, row["layout"], row["wrapper"])
        entry = facts.setdefault(key, {"uri": uri, "layout": row["layout"], "wrapper": row["wrapper"], "lines": 0, "first_line": None})
        entry["lines"] += row["lines"]
        line = row["first_line"] + before
        entry["first_line"] = line if entry["first_line"] is None else min(entry["first_line"], line)
    return list(facts.values())


def _placed_folds(folds, offsets) -> list[dict]:
    """Folded rows of all splits merged per file URI and key: ``n`` lines from ``line`` on, and
    the ``split`` and ``split_line`` of that first line."""
    merged: dict[tuple, dict] = {}
    for row in sorted(folds, key=lambda r: (offsets[r["split"]][0], offsets[r["split"]][1] + r["line"])):
        uri, before = offsets[row["split"]]
        entry = merged.setdefault(
            (uri, row["k"]),
            {"uri": uri, "k": row["k"], "n": 0, "line": before + row["line"], "split": row["split"], "split_line": row["line"]},
        )
        entry["n"] += row["n"]
    return list(merged.values())


def _with_text(lines: DataFrame, rows: list[dict]) -> list[dict]:
    """Folded rows with the text of the first line of each unparsed fold (binary or
    undecodable junk: rare, so its lines are read again only when there is some)."""
    wanted = [r for r in rows if FOLDS[r["k"]][0] == s.UNPARSED]
    if wanted:
        pairs = F.lit(False)
        for r in wanted:
            pairs = pairs | ((F.col("split") == r["split"]) & (F.col("line") == r["split_line"]))
        found = lines.where(pairs).select("split", "line", F.substring("value", 1, SAMPLE_CHARS).alias("text")).collect()
        text = {(r["split"], r["line"]): r["text"] for r in found}
        for r in wanted:
            r["text"] = text.get((r["split"], r["split_line"]))
    return rows
