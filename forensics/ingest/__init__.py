"""Ingest: files -> Kafka log records with provenance, and the accounting of every line.

``ingest(spark, paths)`` resolves the inputs, reads them in place with Spark, recognises the
layout of each line, stitches continuation lines to their record, and returns the records
(``schema.RECORDS_SCHEMA``) with a per-file and total accounting in which
``records + continuations + irrelevant + unparsed == lines``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import reduce
from types import ModuleType
from typing import Iterable, Mapping

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from .. import contract as c
from .. import layouts
from .. import schema as s
from ..layouts._common import any_to_utc
from ..layouts.pattern import compile_layout
from ..registry import literal_map
from ..spark import SORTED_AGGREGATION, in_step_with_cores, materialise, rows_together, sql_settings
from . import wrappers
from .exports import SNIFF_CHARS, ExportShape, export_line_counts, read_exports, sniff_export
from .gzip_check import gzip_problem
from .paths import InputFile, Inputs, check_time_zone, infer_host, resolve_inputs, route_inputs, text_bytes
from .read import open_local, place, read_lines, read_splits, readable_paths, spark_key, split_offsets
from .records import (
    BLOCK_LINES,
    FOLDS,
    SAMPLE_CHARS,
    SAMPLES_PER_REASON,
    assemble_records,
    classify_others,
    continue_partials,
    entry_continues,
    fold_lines,
    in_time_order,
    may_be_kafka_entry,
    may_be_kafka_line,
    recognise,
    slashed_date_orders,
    split_facts,
    stitch,
    with_continuing_entries,
    wrap_widths,
)
from .records import kafka_lines as _kafka_lines
from .sampling import needed_recognisers


@dataclass
class Ingested:
    """What ingest produced: inputs, the line accounting, the records and unparsed samples."""

    inputs: list[dict]
    accounting: dict
    records: DataFrame
    unparsed_samples: list[dict] = field(default_factory=list)
    host_overlaps: list[dict] = field(default_factory=list)


def _file_for(key: str, read_paths: Mapping[str, InputFile]) -> InputFile:
    """The input a Spark file belongs to (a file inside a directory URI gets its own entry)."""
    if key in read_paths:
        return read_paths[key]
    for path, parent in read_paths.items():
        if key.startswith(path.rstrip("/") + "/"):
            return InputFile(key, infer_host(key, path), parent.tz, parent.tz_given)
    return InputFile(key, infer_host(key, None))


def _gzip_problems(files: Iterable[InputFile]) -> dict[str, str]:
    local_gz = [f.path for f in files if f.compressed and not f.is_uri and not f.problem]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return {p: problem for p, problem in zip(local_gz, pool.map(gzip_problem, local_gz), strict=True) if problem}


def ingest(
    spark: SparkSession,
    paths: Iterable[str],
    hosts: Mapping[str, str] | None = None,
    tz: str = "UTC",
    tz_by_source: Mapping[str, str] | None = None,
    layout: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> Ingested:
    """Read ``paths`` (files, directories, globs; plain or .gz) into Kafka records.

    ``hosts`` / ``tz_by_source`` map a host name or path glob to a host name / time zone;
    ``tz`` is the zone of zone-less timestamps everywhere else (reported as assumed when UTC);
    ``layout`` is a user's layout pattern (``--layout``: logback / log4j2 PatternLayout or Python
    ``logging`` format), tried before the built-in layouts; ``columns`` maps the roles of an
    export's columns (``time``, ``host``, ``message``, ...) where the usual names do not tell.
    """
    return ingest_files(spark, resolve_inputs(paths, hosts, tz, tz_by_source), layout, columns)


def user_layout(pattern: str | None) -> ModuleType | None:
    """A user's layout pattern compiled into a layout (one clear error for a wrong one)."""
    return None if not pattern else compile_layout(pattern)


def ingest_files(
    spark: SparkSession, files: list[InputFile], layout: str | None = None, columns: Mapping[str, str] | None = None
) -> Ingested:
    """Read resolved input ``files`` (see ``resolve_inputs``) into Kafka records, recognising
    record heads in the user's ``layout`` pattern first when given. Log-platform exports
    (``exports.sniff_export``; ``columns`` names their time / host / message ... columns) are
    read by their columns, the rest as lines of text. Shuffles as ``spark.in_step_with_cores``."""
    with sql_settings(spark, in_step_with_cores(spark, text_bytes(files))):
        return _ingested(spark, files, layout, columns)


def _ingested(spark: SparkSession, files: list[InputFile], layout: str | None, columns: Mapping[str, str] | None) -> Ingested:
    table = layouts.with_user_layout(user_layout(layout))
    read_paths = readable_paths(files)
    if not read_paths:
        return _summarise(files, {}, {}, spark.createDataFrame([], s.RECORDS_SCHEMA), [])
    shapes = export_shapes(read_paths, columns)
    text_paths = {p: f for p, f in read_paths.items() if p not in shapes}

    with ThreadPoolExecutor(max_workers=1) as background:
        gz_future = background.submit(_gzip_problems, files)
        text = _read_text(spark, text_paths, table) if text_paths else None
        exported = _read_exports(spark, shapes, read_paths, table) if shapes else None
        gz_problems = gz_future.result()

    parts = [part for part in (text, exported) if part]
    by_uri = {uri: file for part in parts for uri, file in part.by_uri.items()}
    facts = [fact for part in parts for fact in part.facts]
    stitched = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), [part.stitched for part in parts])
    spans = text.spans if text else {}
    date_orders = text.date_orders if text else {}
    known_orders = {uri: order for uri, order in date_orders.items() if order}
    with sql_settings(spark, SORTED_AGGREGATION):  # a record's continuation lines are collected by sorting
        heads = materialise(
            _in_file_order(
                spans,
                assemble_records(
                    stitched,
                    host_of=literal_map({u: f.host for u, f in by_uri.items()})[F.col("uri")],
                    tz_of=literal_map({u: f.tz for u, f in by_uri.items()})[F.col("uri")],
                    source_of=literal_map({u: f.path for u, f in by_uri.items()})[F.col("uri")],
                    table=table if exported else layouts_in_use(table, facts),
                    wrap_of=literal_map(text.wraps, "int")[F.col("uri")] if text and text.wraps else None,
                    partial_lines=bool(text) and has_partial_lines(text.facts),
                    date_order_of=literal_map(known_orders)[F.col("uri")] if known_orders else None,
                ),
            )
        )
    pasted = (F.col(s.LAYOUT) == "message_only") & F.col("wrapper").isNull()  # promoted by stitch
    rows = heads.select(
        "uri", "line", "bucket", "reason", "sample", "undated", pasted.alias("pasted"), s.TS, s.LAYOUT, "not_read", "first_not_read"
    )
    if text:
        rows = rows.unionByName(_in_file_order(spans, _classify_others(text.stitched, text.facts)), allowMissingColumns=True)
    if exported:
        rows = rows.unionByName(exported.folded, allowMissingColumns=True)
    counts, first_records, unparsed = rows_together(
        [
            rows.groupBy("uri", "bucket", "reason", "undated", "pasted", s.LAYOUT).agg(
                F.count(F.lit(1)).alias("count"),
                F.min(s.TS).alias("first_ts"),
                F.max(s.TS).alias("last_ts"),
                F.sum("not_read").alias("not_read"),
                F.min("first_not_read").alias("first_not_read"),
            ),
            _first_records(heads),
            _first_unparsed(rows),
        ]
    )
    records = heads.where(F.col("bucket") == s.RECORDS).select(*s.RECORDS_SCHEMA.fieldNames())
    folded_rows = text.folded_rows if text else []
    per_file = _per_file_counts(facts, counts, folded_rows, by_uri)
    for head in first_records:
        per_file[by_uri[head["uri"]].path]["head"] = {k: (_iso(v) if k == s.TS else v) for k, v in head.asDict().items() if k != "uri"}
    for uri, description in (exported.descriptions if exported else {}).items():
        per_file[read_paths[uri].path]["export"] = description
    for uri, order in date_orders.items():
        per_file[by_uri[uri].path]["date_order"] = order or c.UNKNOWN_DATE_ORDER
    samples = _samples(unparsed, folded_rows, by_uri)
    return _summarise(files, per_file, gz_problems, records, samples)


def _in_file_order(spans: dict[str, tuple[int, int]], rows: DataFrame) -> DataFrame:
    """``rows`` of files read newest first (``spans``, numbered in time order) at their lines in
    the file again; a record of such a file is cited by its head line alone (``line_end``), its
    continuation lines being above it."""
    if not spans:
        return rows
    placed = rows.withColumn("line", in_time_order(spans))
    if "first_not_read" in rows.columns:
        placed = placed.withColumn("first_not_read", in_time_order(spans, F.col("first_not_read")))
    if s.LINE_END not in rows.columns:
        return placed
    reversed_file = F.col("uri").isin(*spans)
    return placed.withColumn(s.LINE_END, F.when(reversed_file, F.col("line")).otherwise(F.col(s.LINE_END)))


def layouts_in_use(table: dict, facts: list[dict]) -> dict:
    """The layouts of ``table`` that head some line of the files (``_file_facts``), and
    ``message_only`` and ``anchor`` (stitch gives them to untimed pastes and Kafka lines in no layout): the records' projection is generated
    for these alone, so it stays small."""
    seen = {fact["layout"] for fact in facts} | {"message_only", layouts.anchor.NAME}
    return {name: layout for name, layout in table.items() if name in seen}


@dataclass
class _Part:
    """What one way of reading gives the assembly: kept rows stitched to their heads, the file
    facts of ``_file_facts``, the folded rows, the input of each URI; for exports, the entries
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


def _read_text(spark: SparkSession, read_paths: Mapping[str, InputFile], table: dict) -> _Part:
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
    return _Part(
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


def export_shapes(read_paths: Mapping[str, InputFile], columns: Mapping[str, str] | None) -> dict[str, ExportShape]:
    """Spark path -> export shape, for the local files that are log-platform exports (sniffed
    from their first ``exports.SNIFF_CHARS`` characters)."""
    shapes = {}
    for path, file in read_paths.items():
        if not file.is_uri:
            shape = sniff_export(_head_text(path), dict(columns) if columns else None)
            if shape is not None:
                shapes[path] = shape
    return shapes


def _head_text(path: str) -> str:
    try:
        with open_local(path, "rt", encoding="utf-8", errors="replace") as handle:
            return handle.read(SNIFF_CHARS)
    except (OSError, EOFError):
        return ""


def _read_exports(spark: SparkSession, shapes: Mapping[str, ExportShape], read_paths: Mapping[str, InputFile], table: dict) -> _Part:
    """The exports' entries as heads (the first line of the message, recognised in any layout,
    dated and hosted by the export's columns) with the rest of the message as one tail row.
    Entries that cannot be Kafka records (``records.may_be_kafka_entry``) go no further than
    their count, with their layout, as irrelevant heads (``_Part.folded``). All exports are read
    together, by the same few Spark jobs however many there are.

    Accounting: an entry's first line is its record; its other lines are continuations; the
    header, blank lines and a JSON array's brackets are irrelevant (not log lines)."""
    exported = read_exports(spark, shapes)
    rows = _entry_rows(exported, table)
    tz = literal_map({path: read_paths[path].tz for path in shapes})[F.col("uri")]
    dated = F.when(F.col("time").isNotNull(), F.col("line"))
    seen = (
        rows.groupBy("uri")
        .agg(
            F.max(F.col("continues").cast("int")).alias("continues"),
            F.min_by("time", dated).alias("first"),
            F.max_by("time", dated).alias("last"),
        )
        .select("uri", "continues", F.coalesce(any_to_utc(F.col("first"), tz) > any_to_utc(F.col("last"), tz), F.lit(False)).alias("later"))
    )
    seen_rows = seen.collect()
    continuing = [
        row["uri"] for row in seen_rows if row["continues"] and shapes[row["uri"]].kind != "json_array"
    ]  # an entry per physical line (elements of an array may share one)
    if continuing:  # read again, joined
        newest_first = F.col("uri").isin(*[row["uri"] for row in seen_rows if row["later"]])  # the export runs newest first
        exported = materialise(with_continuing_entries(exported, tz, newest_first, continuing))
        rows = _entry_rows(exported.where(~F.col("joined")), table)
    counts = export_line_counts(spark, shapes, exported if continuing else rows)
    message_only = F.coalesce(s.LAYOUT, F.lit("message_only"))
    folded = rows.where(~F.col("kept")).select(
        "uri",
        "line",
        F.lit(s.IRRELEVANT).alias("bucket"),
        F.lit(True).alias("undated"),
        F.lit(False).alias("pasted"),
        message_only.alias(s.LAYOUT),
    )
    kept_entries = rows.where(F.col("kept"))
    heads = kept_entries.select(
        "uri",
        "line",
        F.col("line").alias("head_line"),
        message_only.alias(s.LAYOUT),
        "value",
        F.coalesce("wrapper", F.lit("export")).alias("wrapper"),
        F.coalesce("w_ts", "time").alias("w_ts"),
        F.coalesce("host", "w_host").alias("w_host"),
        F.col("level").alias("w_level"),
        F.col("logger").alias("w_logger"),
        F.col("thread").alias("w_thread"),
    )
    rest = F.expr("substring(message, length(substring_index(message, '\n', 1)) + 2)")
    tails = kept_entries.where(F.col("message").contains("\n")).select(
        "uri",
        F.col("line_end").alias("line"),
        F.col("line").alias("head_line"),
        F.lit(None).cast("string").alias(s.LAYOUT),
        rest.alias("value"),
    )
    stitched = materialise(heads.unionByName(tails, allowMissingColumns=True))
    facts = [
        {
            "uri": path,
            "layout": None,
            "wrapper": "export",
            "lines": count.lines,
            "first_line": None,
            "export": True,
            "buckets": {s.CONTINUATIONS: count.entry_lines - count.entries + count.joined, s.IRRELEVANT: count.outside},
        }
        for path, count in counts.items()
    ]
    descriptions = {
        path: f"{shape.platform or 'unknown platform'} {shape.kind}, {counts[path].entries:,} entries, columns "
        + ", ".join(f"{r}={c}" for r, c in shape.columns.items())
        for path, shape in shapes.items()
    }
    return _Part(stitched, facts, {path: read_paths[path] for path in shapes}, descriptions=descriptions, folded=folded)


def _entry_rows(exported: DataFrame, table: dict) -> DataFrame:
    """The exports' entries recognised, materialised: the first line of the message as ``value``,
    ``kept`` where the entry may be a Kafka record (``records.may_be_kafka_entry``; the others
    keep no text), ``continues`` where it may continue the entry before it (``records.entry_continues``)."""
    message = F.coalesce(F.col("message"), F.lit(""))
    entries = exported.select(
        "uri",
        "line",
        "line_end",
        F.substring_index(message, "\n", 1).alias("value"),
        message.alias("message"),
        "time",
        "host",
        "level",
        "logger",
        "thread",
        entry_continues().alias("continues"),
    )
    recognised = recognise(entries, table)
    kept = may_be_kafka_entry(F.col("layout"), F.col("message"), F.col("logger"))
    return materialise(
        recognised.select(
            "uri",
            "line",
            "line_end",
            "layout",
            kept.alias("kept"),
            "continues",
            *[F.when(kept, F.col(c)).alias(c) for c in recognised.columns if c not in ("uri", "line", "line_end", "layout", "continues")],
        )
    )


def kafka_lines(spark: SparkSession, files: list[InputFile], layout: str | None = None) -> DataFrame:
    """Line-level Kafka records of resolved input ``files`` (``records.kafka_lines``): the
    fast first look at an incident, with file and line but no stitching or accounting."""
    read_paths = readable_paths(files)
    if not read_paths:
        return spark.createDataFrame([], s.RECORDS_SCHEMA).drop(s.LINE_END)
    table = layouts.with_user_layout(user_layout(layout))
    tried = needed_recognisers(read_paths, table)
    sizes = {p: f.size for p, f in read_paths.items()}
    marked = read_lines(spark, list(read_paths), sizes, where=may_be_kafka_line(F.col("value"), tried.loggerless))
    path = spark_key(F.col("uri"))  # evaluated on the Kafka lines only
    return _kafka_lines(
        marked,
        host_of=literal_map({p: f.host for p, f in read_paths.items()})[path],
        tz_of=F.coalesce(literal_map({p: f.tz for p, f in read_paths.items()})[path], F.lit("UTC")),
        source_of=F.coalesce(literal_map({p: f.path for p, f in read_paths.items()})[path], path),
        table=tried.table(table),
        tried=tried,
    )


def _first_heads(facts) -> dict[str, int]:
    """File URI -> line of its first record head (files with none are absent)."""
    first_head: dict[str, int] = {}
    for row in facts:
        if row["layout"] is not None:
            first_head[row["uri"]] = min(row["first_line"], first_head.get(row["uri"], row["first_line"]))
    return first_head


def _classify_others(stitched: DataFrame, facts) -> DataFrame:
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


def _first_records(heads: DataFrame) -> DataFrame:
    """Each file's first record (``forensics layouts`` shows it): its ``uri`` and fields, the
    message cut to ``SAMPLE_CHARS``. Found by the least record line of each file, joined back:
    a minimum of the record's fields would sort every record."""
    records = heads.where(F.col("bucket") == s.RECORDS)
    first = records.groupBy("uri").agg(F.min("line").alias("line"))
    fields = ("line", s.LAYOUT, s.TS, s.LEVEL, s.LOGGER, s.THREAD)
    return records.join(first, ["uri", "line"]).select("uri", *fields, F.substring(s.MESSAGE, 1, SAMPLE_CHARS).alias(s.MESSAGE))


def _first_unparsed(rows: DataFrame) -> DataFrame:
    """The first ``SAMPLES_PER_REASON`` unparsed lines of each file and reason (small)."""
    rank = F.row_number().over(Window.partitionBy("uri", "reason").orderBy("line"))
    return (
        rows.where(F.col("bucket") == s.UNPARSED)
        .withColumn("rank", rank)
        .where(F.col("rank") <= SAMPLES_PER_REASON)
        .select("uri", "line", "reason", F.substring("sample", 1, SAMPLE_CHARS).alias("text"))
    )


def _per_file_counts(facts, counts, folded_rows, by_uri) -> dict[str, dict]:
    """Input path -> {lines, buckets Counter, reasons Counter, layouts Counter, undated}."""
    out: dict[str, dict] = defaultdict(
        lambda: {
            "lines": 0,
            "buckets": Counter(),
            "reasons": Counter(),
            "layouts": Counter(),
            "wrappers": Counter(),
            "undated": 0,
            "not_read": 0,
        }
    )
    exports = {row["uri"] for row in facts if row.get("export")}
    for row in facts:
        entry = out[by_uri[row["uri"]].path]
        entry["lines"] += row["lines"]
        entry["buckets"].update(row.get("buckets", {}))
        if row["layout"] is not None:
            entry["layouts"][row["layout"]] += row["lines"]
        if row["wrapper"] is not None and not row.get("export"):
            entry["wrappers"][row["wrapper"]] += row["lines"]
    for row in counts:
        entry = out[by_uri[row["uri"]].path]
        entry["buckets"][row["bucket"]] += row["count"]
        if row["uri"] in exports and row[s.LAYOUT] is not None:  # an export's entries: each one head
            entry["layouts"][row[s.LAYOUT]] += row["count"]
            entry["wrappers"]["export"] += row["count"]
        if row["reason"]:
            entry["reasons"][row["reason"]] += row["count"]
        if row["undated"] and row["bucket"] == s.RECORDS:
            entry["undated"] += row["count"]
        if row["pasted"] and row["uri"] not in exports:
            entry["layouts"]["message_only"] += row["count"]
        if row["not_read"]:
            entry["not_read"] += row["not_read"]
            entry["first_not_read"] = min(filter(None, (entry.get("first_not_read"), row["first_not_read"])))
        if row["bucket"] == s.RECORDS and row["first_ts"] is not None:
            entry["first_ts"] = min(filter(None, (entry.get("first_ts"), row["first_ts"])))
            entry["last_ts"] = max(filter(None, (entry.get("last_ts"), row["last_ts"])))
    for row in folded_rows:
        bucket, reason = FOLDS[row["k"]]
        entry = out[by_uri[row["uri"]].path]
        if bucket == s.CONTINUATIONS and not entry["layouts"]:
            bucket, reason = s.UNPARSED, s.UNKNOWN_LAYOUT  # stack frames in a file with no records
        entry["buckets"][bucket] += row["n"]
        if reason:
            entry["reasons"][reason] += row["n"]
    return out


def _samples(samples, folded_rows, by_uri) -> list[dict]:
    found = [{"file": by_uri[r["uri"]].path, "line": r["line"], "reason": r["reason"], "text": r["text"]} for r in samples]
    for row in folded_rows:
        bucket, reason = FOLDS[row["k"]]
        if bucket == s.UNPARSED:
            found.append({"file": by_uri[row["uri"]].path, "line": row["line"], "reason": reason, "text": row["text"]})
    return sorted(found, key=lambda x: (x["file"], x["line"]))


def _summarise(files, per_file, gz_problems, records, samples) -> Ingested:
    inputs, totals, reasons = [], Counter(), Counter()
    for file in files:
        entry = per_file.get(file.path)
        layouts = entry["layouts"] if entry else Counter()
        buckets = entry["buckets"] if entry else Counter()
        problem = file.problem or gz_problems.get(file.path)
        inputs.append(
            {
                "path": file.path,
                "host": file.host,
                "layout": layouts.most_common(1)[0][0] if layouts else None,
                "layouts": dict(layouts),
                "wrappers": dict(entry["wrappers"]) if entry else {},
                "export": entry.get("export") if entry else None,
                "lines": entry["lines"] if entry else 0,
                **{bucket: buckets.get(bucket, 0) for bucket in s.BUCKETS},
                "tz": file.tz,
                "tz_assumed": not file.tz_given,
                "undated_records": entry["undated"] if entry else 0,
                "date_order": entry.get("date_order") if entry else None,
                "first_ts": _iso(entry.get("first_ts")) if entry else None,
                "first_record": entry.get("head") if entry else None,
                "last_ts": _iso(entry.get("last_ts")) if entry else None,
                "problem": problem,
                "duplicate_of": file.duplicate_of,
                KAFKA_NOT_READ: entry["not_read"] if entry else 0,
                "kafka_not_read_line": entry.get("first_not_read") if entry else None,
            }
        )
        if entry:
            totals["lines"] += entry["lines"]
            totals.update(buckets)
            reasons.update(entry["reasons"])
            totals[KAFKA_NOT_READ] += entry["not_read"]
    accounting = {
        "lines": totals["lines"],
        **{bucket: totals[bucket] for bucket in s.BUCKETS},
        "unparsed_by_reason": dict(sorted(reasons.items())),
        "files": len(files),
        "files_with_problems": sum(1 for i in inputs if i["problem"]),
        "duplicate_files": sum(1 for i in inputs if i["duplicate_of"]),
        KAFKA_NOT_READ: totals[KAFKA_NOT_READ],
    }
    if sum(accounting[b] for b in s.BUCKETS) != accounting["lines"]:
        raise AssertionError(f"line accounting does not add up: {accounting}")
    return Ingested(inputs, accounting, records, samples, host_overlaps(inputs))


KAFKA_NOT_READ = "kafka_not_read"
"""Per input and in the accounting: lines that carry a Kafka mark (``layouts.anchor.MARK``, no
stack-trace text) and are in no Kafka record (another logger's record, its continuation, or
unparsed): counted, never silent (issue 86). ``kafka_not_read_line``: the first of a file's."""


def not_read_text(entry: dict) -> str | None:
    """What ``forensics layouts`` and the report say of an input whose Kafka lines were not all
    read: how many, the first, and the best hint (a layout pattern, or an export's columns).
    Where a known layout read every line, those lines are in other loggers' records (a broker's
    ``KafkaConfig`` block naming Kafka classes): a layout pattern would not help, and none is hinted."""
    count = entry.get(KAFKA_NOT_READ) or 0
    if not count:
        return None
    said = f"{count:,} line{'s' if count != 1 else ''} look like Kafka but were not read (first: line {entry.get('kafka_not_read_line')})"
    if entry.get("export"):
        return f"{said}; try --columns time=..,message=.."
    if entry.get("layouts") and not entry.get(s.UNPARSED):
        return f"{said}; they are in other loggers' records (a config block naming Kafka classes, say), not in an unknown layout"
    return f"{said}; try --layout PATTERN"


def _iso(ts) -> str | None:
    return c.in_utc(ts).isoformat(sep=" ") if ts is not None else None


def host_overlaps(inputs: list[dict]) -> list[dict]:
    """Hosts whose files' record times overlap: two inputs named as one host (by directory,
    file name or ``--host``) that are two writers, not one log and its rotations."""
    by_host: dict[str, list[dict]] = defaultdict(list)
    for entry in inputs:
        if entry["first_ts"] is not None:
            by_host[entry["host"]].append(entry)
    overlaps = []
    for host, entries in sorted(by_host.items()):
        entries.sort(key=lambda e: e["first_ts"])
        latest = entries[0]  # of the files so far, the one that ends last
        for later in entries[1:]:
            if later["first_ts"] < latest["last_ts"]:
                overlaps.append(
                    {
                        "host": host,
                        "files": [latest["path"], later["path"]],
                        "from": later["first_ts"],
                        "to": min(latest["last_ts"], later["last_ts"]),
                    }
                )
            latest = max(latest, later, key=lambda e: e["last_ts"])
    return overlaps


__all__ = [
    "Ingested",
    "InputFile",
    "Inputs",
    "check_time_zone",
    "host_overlaps",
    "ingest",
    "ingest_files",
    "kafka_lines",
    "resolve_inputs",
    "route_inputs",
    "text_bytes",
    "user_layout",
    "KAFKA_NOT_READ",
    "not_read_text",
]
