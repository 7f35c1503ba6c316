"""Burrow's consumer status over HTTP: ``/v3/kafka/<cluster>/consumer/<group>/lag`` and ``/status``.

Burrow (linkedin/Burrow) reads ``__consumer_offsets`` and keeps, per partition, a window of the
group's last commits. Its status response (1.0-1.9 ``/v3``, and 0.x ``/v2``, whose message is
``consumer group status returned``) is ``{"error", "message": "consumer status returned",
"status": {"cluster", "group", "status", "complete", "partitions": [...], "partition_count",
"maxlag", "totallag"}, "request": {"url", "host"}}``; each partition entry holds ``topic``,
``partition``, ``owner`` and ``client_id`` (1.2.1+), ``status`` (``OK``, ``WARN``, ``ERR``,
``STOP``, ``STALL``, ``REWIND``), ``current_lag``, and ``start`` / ``end``: the first and last
commit of the window, ``{"offset", "timestamp" (commit time, ms), "observedAt" (1.3.3+), "lag"
(the lag when it was committed)}``. ``/lag`` lists every partition, ``/status`` only those not
``OK``; ``maxlag`` repeats one of them and gives no rows.

Each partition gives two ``consumer_offsets_commit`` rows, its start and its end commit, at
their commit times: the same fact the ``__consumer_offsets`` formatter prints, so the commit
lineage and ``backward_commit`` read them like any dumped commit (a REWIND whose end is below
its start is a backward step from start to end). ``log_end_offset`` is ``offset + lag`` (the log
end at the commit), ``state`` the partition's Burrow status, ``host`` its owner, and
``snapshot_ts`` the ``observedAt`` time (else the stamp above the document).

A document is compact (``curl``) or pretty-printed (``jq .``, ``python -m json.tool``): it runs
from a line opening with ``{`` at column 0 to the line closing it (``}`` at column 0, or the
same line). A pretty-printed entry's rows sit at its ``"start"`` / ``"end"`` lines, a compact
document's rows at its line. The document's other lines are ``structure_lines``.

Pastes damage documents (issue 86): a partition entry pasted alone (no response around it), the
JavaScript literal a Node client prints (keys unquoted, strings in single quotes), a response cut
before its end, or one a REST client rendered without its commas (``}-`` and ``##`` marks of its
folding, ``0:`` before each element). Where a document does not parse as a response, its
complete partition entries are read on their own (``_salvaged``): the repaired text's objects
holding a ``start`` or ``end`` commit, the group named anywhere in it (or in the request's URL),
each entry's rows at the ``start`` / ``end`` key lines in document order. A document with no
complete entry gives nothing and its lines stay unparsed.
"""

from __future__ import annotations

import re
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from . import _common as c

KIND = "burrow"
ROW_KINDS = (c.CONSUMER_OFFSETS_COMMIT,)

REWIND = "REWIND"
"""A partition's status when a commit of its window went below an earlier one and the group has
not come back to that offset since (Burrow's evaluator rule 2)."""
MESSAGE = r"consumer (?:group )?status returned"
"""The response's ``message`` (``/v3``; ``/v2`` in 0.x adds ``group``)."""
SNIFF = r'"message"\s*:\s*"' + MESSAGE + '"'
_KEY = r"""(?:^|[{{,])\s*["']?{}["']?\s*:"""
_COMMIT_KEY = r"""(?:^|[{{,])\s*["']?{}["']?\s*:\s*\{{[^{{}}]*["']?offset["']?\s*:"""
ENTRY_SNIFF = [_KEY.format("topic"), _KEY.format("partition"), _COMMIT_KEY.format("start"), _COMMIT_KEY.format("end")]
"""Keys every partition entry holds, quoted or not (a bare entry, a JavaScript literal), where a
key stands (after ``{``, ``,`` or at a line's start), ``start`` and ``end`` each an object with
its ``offset``."""
MARKER = re.compile(rb"status returned|[\"']?current_lag[\"']?\s*:|[\"']?start[\"']?\s*:\s*\{")
"""In every response or partition entry read (its ``message``, ``MESSAGE``; an entry's
``current_lag`` or ``start``), which Burrow's JSON encoder writes with no escapes (``kinds_present``)."""
DOC_START = r"^\{"
DOC_END = r"^\}\s*$"
COMPACT_END = r"\}\s*$"
STRING_LITERAL = r'"(?:[^"\\]|\\.)*"'
ENTRY_KEY = r'^\s*"(start|end)"\s*:'
ENTRY_DEPTH = 4
"""Nesting of a partition entry's keys: response ``{``, ``status`` ``{``, ``partitions`` ``[``,
entry ``{`` (``maxlag``'s keys are at 3)."""
GLUED = r"(?<=\})\s*(?=\{\"error\")"
"""Between compact responses written with no newline between them (``curl`` in a loop)."""

_L, _I, _S = LongType(), IntegerType(), StringType()
_COMMIT = StructType([StructField(name, _L) for name in ("offset", "timestamp", "observedAt", "lag")])
_ENTRY = StructType(
    [
        StructField("topic", _S),
        StructField("partition", _I),
        StructField("owner", _S),
        StructField("client_id", _S),
        StructField("status", _S),
        StructField("start", _COMMIT),
        StructField("end", _COMMIT),
    ]
)
RESPONSE_SCHEMA = StructType(
    [
        StructField("message", _S),
        StructField(
            "status",
            StructType(
                [
                    StructField("cluster", _S),
                    StructField("group", _S),
                    StructField("status", _S),
                    StructField("partitions", ArrayType(_ENTRY)),
                ]
            ),
        ),
    ]
)
"""The fields read (``complete``, a bool in 0.x and a float since 1.0, is not)."""


def skip(value: Column) -> Column:
    """A line's text alone never tells a Burrow line: see ``structure_lines``."""
    return F.lit(False)


def sniff(lines: list[str]) -> bool:
    """True when the sample holds a Burrow consumer status response's ``message``, or a document
    (a line opening with ``{``) whose keys are a partition entry's (a bare or JavaScript-literal entry)."""
    text = "\n".join(lines)
    if re.search(SNIFF, text):
        return True
    return re.search(r"(?m)^\{", text) is not None and all(re.search(key, text, re.MULTILINE) for key in ENTRY_SNIFF)


def _document_lines(lines: DataFrame) -> DataFrame:
    """The lines inside JSON documents, with ``_doc`` (the document's first line) and, on a
    ``"start"`` / ``"end"`` key line, ``_key`` and ``_depth`` (the nesting before the key).

    Every window is over the file in line order, as in ``prepare_lines``: no further shuffle."""
    value = F.col(c.VALUE)
    opens = value.rlike(DOC_START)
    closes = value.rlike(DOC_END) | (opens & value.rlike(COMPACT_END))
    in_file = Window.partitionBy(c.SOURCE_FILE).orderBy(c.LINE)
    upto, before = in_file.rowsBetween(Window.unboundedPreceding, 0), in_file.rowsBetween(Window.unboundedPreceding, -1)
    marked = lines.select(
        c.SOURCE_FILE,
        c.LINE,
        c.VALUE,
        c.SNAPSHOT_TS,
        F.last(F.when(opens, F.col(c.LINE)), ignorenulls=True).over(upto).alias("_doc"),
        F.last(F.when(closes, F.col(c.LINE)), ignorenulls=True).over(before).alias("_closed"),
    )
    inside = marked.where(F.col("_doc").isNotNull() & (F.col("_closed").isNull() | (F.col("_closed") < F.col("_doc"))))
    plain = F.regexp_replace(value, STRING_LITERAL, '""')
    net = F.length(F.regexp_replace(plain, r"[^{\[]", "")) - F.length(F.regexp_replace(plain, r"[^}\]]", ""))
    nested = inside.withColumn("_nested", F.coalesce(F.sum(net).over(before), F.lit(0)))
    at_start = F.last(F.when(F.col(c.LINE) == F.col("_doc"), F.col("_nested")), ignorenulls=True).over(upto)
    key = F.regexp_extract(value, ENTRY_KEY, 1)
    return nested.select(
        c.SOURCE_FILE,
        c.LINE,
        c.VALUE,
        c.SNAPSHOT_TS,
        "_doc",
        F.when(key != "", key).alias("_key"),
        (F.col("_nested") - at_start).alias("_depth"),
    )


def _entry_lines(which: str) -> Column:
    """Lines of the entries' ``which`` keys (``start``/``end``), in document order."""
    at_entry = (F.col("_key") == which) & (F.col("_depth") == ENTRY_DEPTH)
    return F.sort_array(F.collect_list(F.when(at_entry, F.col(c.LINE))))


def _responses(lines: DataFrame) -> DataFrame:
    """One row per Burrow status response: its file, first line, ``_lines`` (how many),
    ``_starts`` / ``_ends`` (entry key lines), ``_snapshot`` and the parsed ``_json``; a document
    that is no whole response, with the entries it holds (``_salvaged``)."""
    ordered = F.sort_array(F.collect_list(F.struct(F.col(c.LINE), F.col(c.VALUE))))
    any_key = F.regexp_extract(F.col(c.VALUE), ANY_ENTRY_KEY, 1)
    documents = (
        _document_lines(lines)
        .withColumn("_any_key", F.when(any_key != "", any_key))
        .groupBy(c.SOURCE_FILE, "_doc")
        .agg(
            F.concat_ws("\n", F.transform(ordered, lambda entry: entry[c.VALUE])).alias("_text"),
            F.count(F.lit(1)).alias("_lines"),
            _entry_lines("start").alias("_starts"),
            _entry_lines("end").alias("_ends"),
            F.sort_array(F.collect_list(F.when(F.col("_any_key") == "start", F.col(c.LINE)))).alias("_any_starts"),
            F.sort_array(F.collect_list(F.when(F.col("_any_key") == "end", F.col(c.LINE)))).alias("_any_ends"),
            F.min_by(F.col(c.SNAPSHOT_TS), F.col(c.LINE)).alias("_snapshot"),
        )
    )
    records = F.split(F.trim(F.col("_text")), GLUED)
    parsed = documents.select("*", F.size(records).alias("_records"), F.explode(records).alias("_record")).withColumn(
        "_json", F.from_json(F.col("_record"), RESPONSE_SCHEMA, {"mode": "PERMISSIVE"})
    )
    whole = F.coalesce(F.col("_json.message").rlike("^" + MESSAGE + "$") & F.col("_json.status").isNotNull(), F.lit(False))
    kept = parsed.where(whole).drop("_any_starts", "_any_ends")
    unread = (
        parsed.where(~whole)
        .groupBy(c.SOURCE_FILE, "_doc")
        .agg(
            F.count(F.lit(1)).alias("_n"),
            F.first("_text").alias("_text"),
            F.first("_lines").alias("_lines"),
            F.first("_any_starts").alias("_starts"),
            F.first("_any_ends").alias("_ends"),
            F.first("_snapshot").alias("_snapshot"),
            F.max(F.col("_records")).alias("_records"),
        )
    )
    damaged = unread.where((F.col("_n") == F.col("_records")) & (F.col("_records") == 1))  # no response of the document parsed
    return kept.unionByName(_salvaged(damaged.drop("_n")), allowMissingColumns=True).drop("_record")


ANY_ENTRY_KEY = r"""^\s*(?:#+\s*)?["']?(start|end)["']?\s*:"""
"""A line opening with a commit's key, at any depth (a damaged document's nesting is not known)."""
_REPAIRS = (
    (r"\}-", "}"),  # a REST client's folding marks: "}-" closes, "## " opens a folded line
    (r"(?m)^#+ *", ""),
    (r"(?m)^(\s*)\d+:\s*\{", "$1{"),  # an array element's index before it
    (r"(?m)([{,]\s*|^\s*)([A-Za-z_$][\w$]*)\s*:", '$1"$2":'),  # JavaScript's unquoted keys
    (r"'((?:[^'\\\n]|\\.)*)'", '"$1"'),  # and single-quoted strings
    (r"(\"|\d|true|false|null|\}|\])([ \t]*\r?\n\s*[\"{])", "$1,$2"),  # commas a rendering left out
)
ENTRY_OBJECT = r"\{(?:[^{}]|\{[^{}]*\})*\}"
"""An object whose values hold objects of scalars at most: a partition entry (its ``start`` and
``end``), never the response around it."""
GROUP = r'"group"\s*:\s*"([^"]+)"'
URL_GROUP = r"/consumer/([^/\s\"']+)/(?:lag|status)"


def _salvaged(documents: DataFrame) -> DataFrame:
    """Documents that are no whole response, as ``_responses`` rows of their complete partition
    entries (``_json.status.partitions``, told apart from the entry ``maxlag`` repeats), the
    group the text names (``status.group``, else the request's URL)."""
    text = reduce(lambda acc, fix: F.regexp_replace(acc, fix[0], fix[1]), _REPAIRS, F.col("_text"))
    parsed = F.transform(F.regexp_extract_all(text, F.lit(ENTRY_OBJECT), 0), lambda o: F.from_json(o, _ENTRY, {"mode": "PERMISSIVE"}))
    entries = F.array_distinct(
        F.filter(
            parsed,
            lambda e: (
                e.isNotNull()
                & e["topic"].isNotNull()
                & e["partition"].isNotNull()
                & (e["start"]["offset"].isNotNull() | e["end"]["offset"].isNotNull())
            ),
        )
    )
    group = F.coalesce(F.nullif(F.regexp_extract(text, GROUP, 1), F.lit("")), F.nullif(F.regexp_extract(text, URL_GROUP, 1), F.lit("")))
    status = F.struct(
        F.lit(None).cast("string").alias("cluster"),
        group.alias("group"),
        F.lit(None).cast("string").alias("status"),
        entries.alias("partitions"),
    )
    json_ = F.struct(F.lit(MESSAGE).alias("message"), status.alias("status"))
    return documents.withColumn("_json", json_).where(F.size(F.col("_json.status.partitions")) > 0)


def structure_lines(lines: DataFrame) -> DataFrame:
    """``source_file, line`` of every line of the Burrow responses in ``lines`` (prepared
    lines; a line of several glued responses once per response): the JSON around the rows,
    which ``offsets_accounting`` counts as skipped."""
    span = F.sequence(F.col("_doc"), F.col("_doc") + F.col("_lines") - 1)
    return _responses(lines).select(c.SOURCE_FILE, F.explode(span).alias(c.LINE))


def _commit_row(entry: Column, which: str, key_lines: Column) -> Column:
    """The ``which`` commit of a partition entry, at its key line (else the document's line)."""
    commit = entry[which]
    pretty = (F.col("_records") == 1) & (F.size(key_lines) == F.size(F.col("_json.status.partitions")))
    observed = F.when(commit["observedAt"] > 0, c.millis_ts(commit["observedAt"]))
    return F.when(
        commit["offset"].isNotNull(),
        F.struct(
            commit["offset"].alias("offset"),
            commit["lag"].alias("lag"),
            c.millis_ts(commit["timestamp"]).alias("ts"),
            F.coalesce(observed, F.col("_snapshot")).alias("seen"),
            F.when(pretty, F.get(key_lines, F.col("_pos"))).otherwise(F.col("_doc")).alias("line"),
        ),
    )


def parse(lines: DataFrame) -> DataFrame:
    """``consumer_offsets_commit`` rows, start and end commit of every partition entry of the
    Burrow status responses (``/lag``, ``/status``; 0.x-1.9).

    Parameters
    ----------
    lines : DataFrame
        Prepared lines (``source_file, line, value, snapshot_ts``).
    """
    entries = _responses(lines).select("*", F.posexplode(F.col("_json.status.partitions")).alias("_pos", "_entry"))
    entry = F.col("_entry")
    commits = entries.select(
        "*", F.explode(F.array(_commit_row(entry, "start", F.col("_starts")), _commit_row(entry, "end", F.col("_ends")))).alias("_commit")
    ).where(F.col("_commit").isNotNull())
    placed = commits.withColumn(c.LINE, F.col("_commit.line")).withColumn(c.SNAPSHOT_TS, F.col("_commit.seen"))
    offset, lag = F.col("_commit.offset"), F.col("_commit.lag")
    return c.to_offsets(
        placed,
        c.CONSUMER_OFFSETS_COMMIT,
        group_id=F.col("_json.status.group"),
        topic=entry["topic"],
        partition=entry["partition"],
        current_offset=offset,
        log_end_offset=F.when(lag >= 0, offset + lag),
        lag=lag,
        host=c.dash_null(entry["owner"]),
        client_id=c.dash_null(entry["client_id"]),
        state=entry["status"],
        commit_ts=F.col("_commit.ts"),
    )
