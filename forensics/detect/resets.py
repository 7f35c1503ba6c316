"""Offset resets that skipped records: ``auto.offset.reset=latest`` on a partition with no
committed offset (``reset_to_latest_gap``), and a fetch position out of range reset forward or
backward (``out_of_range_reset``)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import contract as c
from .. import schema as s
from ..model import Model
from ..model.members import MEMBER
from ..registry import earliest
from ..sources import rows_from
from ._commits import PARTITION_KEY, member_history, partition_name, settings_by_group
from ._finding import (
    OFFSETS_DUMP_COMMAND,
    at,
    describe_command,
    end_offsets_command,
    findings,
    line,
    lines,
    missing,
    one,
    place,
    quoted,
    text,
)

TO_LATEST = r"(?i)^(?:offset )?(?:latest|end)$"
TO_EARLIEST = r"(?i)^(?:offset )?(?:earliest|beginning)$"
"""A reset's logical target: the Java client's strategy (``LATEST``, ``latest``), librdkafka's
``END``/``BEGINNING`` (``offset END`` from 2.1)."""
TO_OFFSET = r"(\d+)$"
"""librdkafka's numeric reset target (``cached BEGINNING offset 1234``)."""


def dump_partition_command() -> Column:
    """``kafka-dump-log`` of the finding's partition: its batches with their times (``CreateTime``),
    to read its offsets at a moment."""
    directory = quoted(F.concat_ws("-", F.col(s.TOPIC), F.col(s.PARTITION).cast("string")))
    return F.concat(F.lit("kafka-dump-log.sh --files <log.dirs>/"), directory, F.lit("/<segment>.log"))


def _log_start(offsets: DataFrame | None) -> DataFrame | None:
    """Per topic partition, the first offset ``kafka-dump-log`` shows (its log start)."""
    if offsets is None:
        return None
    batches = offsets.where((F.col(s.KIND) == s.DUMP_LOG_BATCH) & F.col(s.TOPIC).isNotNull())
    return batches.groupBy(F.col(s.TOPIC).alias("_topic"), F.col(s.PARTITION).alias("_partition")).agg(
        earliest(F.struct(F.col(s.BASE_OFFSET).alias("start"), line().alias("evidence")), s.BASE_OFFSET, line()).alias("_log_start")
    )


@rows_from("commits")
def reset_to_latest_gap(model: Model) -> DataFrame:
    """A partition with no committed offset was reset to its log end (``auto.offset.reset=latest``):
    every record before that offset was never consumed (seed 001: a partition added while the
    producers already wrote to it; also a first deployment, or commits expired after
    ``offsets.retention.minutes``).

    The range starts at the log start when a ``kafka-dump-log`` dump shows it (exact), else at
    offset 0 (``exact`` false: an upper bound, the start may have been deleted by retention).
    librdkafka names the offset on a later line (``Offset END request for T [p] returned offset
    N``) than its reset (``offset reset (at offset INVALID) to offset END``): that offset is the
    reset's. Where the logs prove the reset but not its offset, the finding is unmeasured
    (``_unresolved_latest_resets``). A reset that names neither its strategy nor follows a
    no-committed-offset line is read by ``_unstated_resets``.
    """
    commits = model.commits
    before = member_history(commits)
    marked = commits.select(
        "*",
        F.lag("kind").over(before).alias("_previous_kind"),
        F.lag(s.OFFSET).over(before).alias("_previous_at"),
        F.lag(line()).over(before).alias("_previous_line"),
        _committed_before(commits).alias("_committed_before"),
    )
    logical_before = (F.col("_previous_kind") == c.RESET) & F.col("_previous_at").isNull()
    after_no_commit = F.coalesce((F.col("_previous_kind") == c.NO_COMMITTED_OFFSET) | logical_before, F.lit(False))
    stated = (F.col("kind") == c.RESET) & F.col(s.OFFSET).isNotNull() & after_no_commit
    resets = marked.where(stated | _unstated_resets()).withColumn("_unstated", ~stated)
    latest_configured = settings_by_group(model, "auto.offset.reset")
    resets = resets.join(latest_configured, F.col(s.GROUP_ID) == F.col("_group"), "left")
    latest = F.coalesce(F.lower(F.col("strategy")) == "latest", F.lit(False))
    configured = F.coalesce(F.col("_values"), F.array())
    by_config = F.col("strategy").isNull() & F.array_contains(configured, "latest")
    unknown = F.col("_unstated") & (F.size(configured) == 0)
    resets = resets.where(latest | by_config | unknown).withColumn("_unstated", unknown & ~latest & ~by_config)
    starts = _log_start(model.offsets)
    resets = _with_log_start(resets, starts)
    start = F.coalesce(F.col("_log_start.start"), F.lit(0))
    gaps = resets.withColumn("_from", start).where(F.col(s.OFFSET) > F.col("_from"))
    exact = F.col("_log_start.start").isNotNull()
    return _measured_latest_gaps(gaps, exact).unionByName(_unresolved_latest_resets(model, starts))


def _committed_before(commits: DataFrame) -> Column:
    """Whether the group committed the partition, or a member resumed it from a commit, before
    this row (logs or offset dumps)."""
    earlier = Window.partitionBy(*PARTITION_KEY).orderBy("sequence").rowsBetween(Window.unboundedPreceding, -1)
    committed = F.col("kind").isin(*c.COMMITTED_KINDS, c.POSITION_FROM_COMMIT)
    return F.coalesce(F.max(committed.cast("int")).over(earlier) == 1, F.lit(False))


AUTO_RESET_TEMPLATES = ("PY28",)
"""Reset lines that name no strategy and, in a group consumer, stand for its own
``auto_offset_reset`` (kafka-python 2.2+'s ``Resetting offset for partition P to offset N.``).
The Java client's same words (O21-O24) are not: they are as often an explicit ``seekToEnd`` or
``position`` probe of an offset-lookup consumer (Beam's, Spark's driver), whose reset loses nothing."""


def _unstated_resets() -> Column:
    """A reset to a known offset that names no strategy, of a partition the group had never
    committed, as the member's first word on it, in a line that implies the automatic reset
    (``AUTO_RESET_TEMPLATES``, whatever auto_offset_reset said; its out-of-range line comes
    first when that was the cause). With no committed offset it went to the log end (latest),
    unless N was the log start then (earliest): a dump's log start below N rules that out."""
    first_word = F.col("_previous_kind").isNull() | (F.col("_previous_kind") == c.NO_COMMITTED_OFFSET)
    automatic = F.coalesce(F.col(s.TEMPLATE_ID).isin(*AUTO_RESET_TEMPLATES), F.lit(False))
    reset = (F.col("kind") == c.RESET) & F.col(s.OFFSET).isNotNull() & F.col("strategy").isNull()
    return reset & automatic & first_word & ~F.col("_committed_before")


def _measured_latest_gaps(gaps: DataFrame, exact: Column) -> DataFrame:
    """``reset_to_latest_gap`` findings of the resets in ``gaps`` (``_from``, ``_unstated``)."""
    how = (
        F.when(
            F.col("_unstated") & ~exact,
            F.format_string(
                " (at most: the reset does not name its strategy; had auto.offset.reset been earliest, %d was the log "
                "start then and nothing was skipped; a kafka-get-offsets --time -2 or kafka-dump-log dump decides)",
                F.col(s.OFFSET),
            ),
        )
        .when(exact, F.lit(""))
        .otherwise(F.lit(" (at most: the log start is not in the offset dumps; add a kafka-dump-log or kafka-get-offsets --time -2 dump)"))
    )
    strategy = F.when(F.col("_unstated"), F.lit("reset with no strategy named, so to the log end unless at the log start"))
    return findings(
        gaps,
        "reset_to_latest_gap",
        severity="critical",
        verdict="loss",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.col("_from"),
        offset_to=F.col(s.OFFSET),
        records=F.col(s.OFFSET) - F.col("_from"),
        exact=exact,
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col(s.TS),
        end=F.col(s.TS),
        evidence=lines(one(F.col("_previous_line")), one(line(number="strategy_line")), one(line()), one(F.col("_log_start.evidence"))),
        explanation=F.format_string(
            "Group %s had no committed offset for %s, so %s started at the log end (%s), offset %d: "
            "records [%d, %d) were never consumed%s.",
            text(F.col(s.GROUP_ID), "(unknown)"),
            partition_name(),
            text(F.col(MEMBER), "its consumer"),
            F.coalesce(strategy, F.lit("auto.offset.reset=latest")),
            F.col(s.OFFSET),
            F.col("_from"),
            F.col(s.OFFSET),
            how,
        ),
        kafka_reference="auto.offset.reset=latest; partitions added while producers write to them",
        remedy=LATEST_REMEDY,
    )


LATEST_REMEDY = (
    "Use auto.offset.reset=earliest for groups that must see every record, or create new partitions before "
    "producers use them; re-consume the range by resetting the group's offset for this partition to its start."
)


def _with_log_start(rows: DataFrame, starts: DataFrame | None) -> DataFrame:
    """``rows`` with ``_log_start`` (``start``, ``evidence``): the partition's log start shown by a
    ``kafka-dump-log`` dump, else null."""
    if starts is None:
        return rows.withColumn("_log_start", F.lit(None).cast(f"struct<start:bigint,evidence:{s.as_ddl(s.EVIDENCE_LINE)}>"))
    on = (F.col(s.TOPIC) == F.col("_topic")) & (F.col(s.PARTITION) == F.col("_partition"))
    return rows.join(starts, on, "left").drop("_topic", "_partition")


def _strategy_lines(model: Model) -> DataFrame:
    """Lines of a member that name where it resets a partition with no committed offset:
    ``Seeking to LATEST offset of partition P`` (2.3+) and Kafka Streams' ``Setting topic 'T' to
    consume from latest offset`` / ``.. using original config 'latest' for offset reset`` (a
    Streams thread applies auto.offset.reset itself; no partition named)."""
    stated = model.members.where(
        F.col(s.EVENT_TYPE).isin("consumer:offset:seek_strategy", "streams:reset_policy")
        & F.col(MEMBER).isNotNull()
        & F.col(s.TOPIC).isNotNull()
    )
    return stated.select(
        F.col(MEMBER).alias("_s_member"),
        F.col(s.TOPIC).alias("_s_topic"),
        F.col(s.PARTITION).alias("_s_partition"),
        F.col(s.TS).alias("_s_ts"),
        F.col(s.SOURCE_FILE).alias("_s_file"),
        F.col(s.LINE).alias("_s_line"),
        F.col("strategy").alias("_s_strategy"),
    )


def _next_placed(commits: DataFrame) -> Column:
    """The member's next row of the partition that names an offset (``kind``, ``offset``): where a
    reset to a logical offset (librdkafka's ``to offset END``) went, when a reset row follows with
    the offset (``Offset END request .. returned offset N``), after any repeated resets of the
    same query."""
    following = member_history(commits).rowsBetween(1, Window.unboundedFollowing)
    return F.first(F.when(F.col(s.OFFSET).isNotNull(), F.struct("kind", s.OFFSET)), ignorenulls=True).over(following)


def _unresolved_latest_resets(model: Model, starts: DataFrame | None) -> DataFrame:
    """Partitions with no committed offset that were reset to their log end where the logs do not
    say to which offset: ``Found no committed offset`` then ``Seeking to LATEST offset`` (or a
    Streams thread's ``consume from latest offset``) with no ``Resetting offset .. to position``
    line, or librdkafka's ``offset reset (at offset INVALID) to END`` with no later line naming
    where it went (``_next_placed``). The records before that
    offset were never consumed, but their range is unknown: ``exact`` false, ``offset_to`` null
    (``offset_from``: the log start where a ``kafka-dump-log`` dump shows it), and ``missing``
    names the log end at the reset."""
    commits = model.commits
    after = member_history(commits)
    nxt = F.lead(F.struct("kind", s.OFFSET)).over(after)
    prev = F.lag(F.struct("kind", line().alias("evidence"))).over(after)
    marked = commits.select("*", nxt.alias("_next"), prev.alias("_prev"), _next_placed(commits).alias("_placed"))
    unresolved = (F.col("kind") == c.NO_COMMITTED_OFFSET) & ~F.coalesce(F.col("_next.kind") == c.RESET, F.lit(False))
    resolved = F.coalesce(F.col("_placed.kind") == c.RESET, F.lit(False))
    logical = (
        (F.col("kind") == c.RESET) & F.col(s.OFFSET).isNull() & F.coalesce(F.col("strategy").rlike(TO_LATEST), F.lit(False)) & ~resolved
    )
    candidates = marked.where(unresolved | logical)
    stated = _strategy_lines(model)
    later = F.coalesce(F.col("_s_ts") >= F.col(s.TS), (F.col("_s_file") == F.col(s.SOURCE_FILE)) & (F.col("_s_line") > F.col(s.LINE)))
    matching = (
        (F.col("_s_member") == F.col(MEMBER))
        & (F.col("_s_topic") == F.col(s.TOPIC))
        & (F.col("_s_partition").isNull() | (F.col("_s_partition") == F.col(s.PARTITION)))
        & later
    )
    row = [s.SOURCE_FILE, s.LINE, "kind", s.TOPIC, s.PARTITION]
    first_after = Window.partitionBy(*row).orderBy(F.col("_s_ts").asc_nulls_last(), "_s_file", "_s_line")
    with_stated = (
        candidates.join(stated, (F.col("kind") == c.NO_COMMITTED_OFFSET) & matching, "left")
        .withColumn("_rank", F.row_number().over(first_after))
        .where(F.col("_rank") == 1)
    )
    # a no-committed line is kept when its member then said where it goes: to the latest offset
    to_latest = with_stated.where((F.col("kind") == c.RESET) | F.coalesce(F.col("_s_strategy").rlike(TO_LATEST), F.lit(False)))
    gaps = _with_log_start(to_latest, starts)
    end_at_reset = F.format_string(
        "the log-end offset of %s when %s reset it to the end (%s): the first offset of the first batch written after "
        "that time, in a kafka-dump-log dump of the partition's segments, or the group's first commit of it after the "
        "reset (an upper bound)",
        partition_name(),
        text(F.col(MEMBER), "the member"),
        at(F.col(s.TS), place(line())),
    )
    stated_line = F.when(
        F.col("_s_line").isNotNull(), F.struct(F.col("_s_file").alias("file"), F.col("_s_line").cast("long").alias("line"))
    )
    previous_no_commit = F.when(F.col("_prev.kind") == c.NO_COMMITTED_OFFSET, F.col("_prev.evidence"))
    return findings(
        gaps,
        "reset_to_latest_gap",
        severity="critical",
        verdict="loss",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.col("_log_start.start"),
        exact=F.lit(False),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col(s.TS),
        end=F.col(s.TS),
        evidence=lines(one(line()), one(stated_line), one(previous_no_commit), one(F.col("_log_start.evidence"))),
        explanation=F.format_string(
            "Group %s had no committed offset for %s, so %s reset it to the log end (auto.offset.reset=latest) %s: the "
            "records written before were never consumed, but the logs do not say the offset it reset to, so the range "
            "[%s, log end at the reset) is unmeasured.",
            text(F.col(s.GROUP_ID), "(unknown)"),
            partition_name(),
            text(F.col(MEMBER), "its consumer"),
            at(F.col(s.TS), place(line())),
            text(F.col("_log_start.start"), "log start"),
        ),
        kafka_reference="auto.offset.reset=latest; partitions added while producers write to them",
        remedy=LATEST_REMEDY,
        missing=missing(end_at_reset, dump_partition_command(), F.lit(OFFSETS_DUMP_COMMAND), describe_command(F.col(s.GROUP_ID))),
    )


@rows_from("commits")
def out_of_range_reset(model: Model) -> DataFrame:
    """A fetch position was out of range (retention deleted it, or the log was truncated after
    an unclean leader election) and was reset per ``auto.offset.reset``: a reset forward
    skipped [position, new offset), a reset backward replays [new offset, position)."""
    commits = model.commits
    after = member_history(commits)
    marked = commits.select(
        "*",
        F.lead(
            F.struct("kind", s.OFFSET, s.TS, "strategy", line().alias("evidence"), line(number="strategy_line").alias("strategy_evidence"))
        )
        .over(after)
        .alias("_next"),
    )
    resets = marked.where((F.col("kind") == c.OUT_OF_RANGE) & (F.col("_next.kind") == c.RESET) & (F.col("_next.offset") != F.col(s.OFFSET)))
    return _out_of_range_findings(
        resets.withColumn("_target", F.col("_next.offset")).withColumn("_target_evidence", F.lit(None).cast(s.as_ddl(s.EVIDENCE_LINE)))
    ).unionByName(_logical_out_of_range_resets(model))


OUT_OF_RANGE_REFERENCE = "OffsetOutOfRangeException; auto.offset.reset; retention.ms / retention.bytes; unclean.leader.election.enable"
OUT_OF_RANGE_REMEDY = (
    "Keep consumer lag well inside the topic's retention (or raise retention.ms); with auto.offset.reset=none the "
    "consumer fails instead of skipping, so the skip can be handled deliberately."
)


def _out_of_range_findings(resets: DataFrame) -> DataFrame:
    """Out-of-range positions reset to the known offset ``_target`` (``_next``: the reset row, if any)."""
    forward = F.col("_target") > F.col(s.OFFSET)
    low = F.least(F.col(s.OFFSET), F.col("_target"))
    high = F.greatest(F.col(s.OFFSET), F.col("_target"))
    return findings(
        resets,
        "out_of_range_reset",
        severity=F.when(forward, F.lit("critical")).otherwise(F.lit("warning")),
        verdict=F.when(forward, F.lit("loss")).otherwise(F.lit("duplication")),
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=low,
        offset_to=high,
        records=high - low,
        exact=F.lit(True),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col(s.TS),
        end=F.coalesce(F.col("_next.ts"), F.col(s.TS)),
        evidence=lines(one(line()), one(F.col("_next.strategy_evidence")), one(F.col("_next.evidence")), one(F.col("_target_evidence"))),
        explanation=F.format_string(
            "%s's fetch position %d on %s was out of range and was reset to %s offset %d: %s.",
            text(F.col(MEMBER), "A consumer"),
            F.col(s.OFFSET),
            partition_name(),
            text(F.coalesce(F.col("_next.strategy"), F.col("strategy")), "the"),
            F.col("_target"),
            F.when(forward, F.format_string("records [%d, %d) were skipped, never consumed", low, high)).otherwise(
                F.format_string("records [%d, %d) are consumed a second time", low, high)
            ),
        ),
        kafka_reference=OUT_OF_RANGE_REFERENCE,
        remedy=OUT_OF_RANGE_REMEDY,
    )


def _logical_out_of_range_resets(model: Model) -> DataFrame:
    """librdkafka's single line ``offset reset (at offset X) to END: .. Offset out of range``: the
    position X was out of range and the consumer went to a target it names, not a number, with
    no later line saying the offset. To a numeric target (``cached BEGINNING offset N``) the
    range is exact; to ``BEGINNING`` the log start a ``kafka-dump-log`` dump shows measures it
    (retention: a skip [X, log start); truncation: a replay [log start, X)); otherwise the
    finding is unmeasured: [X, ?) was skipped (``exact`` false, ``missing`` names the log end
    or log start at the reset)."""
    commits = model.commits
    nxt = F.lead(F.struct("kind", s.OFFSET)).over(member_history(commits))
    named = (
        commits.select("*", nxt.alias("_n"))
        .where(
            (F.col("kind") == c.OUT_OF_RANGE)
            & F.col("strategy").isNotNull()
            & F.col(s.OFFSET).isNotNull()
            & ~F.coalesce((F.col("_n.kind") == c.RESET) & F.col("_n.offset").isNotNull(), F.lit(False))
        )
        .drop("_n")
    )
    numeric = F.nullif(F.regexp_extract(F.col("strategy"), TO_OFFSET, 1), F.lit("")).cast("long")
    earliest_target = F.regexp_replace(F.col("strategy"), r"(?i)^cached beginning offset ", "").rlike(TO_EARLIEST)
    with_start = _with_log_start(named, _log_start(model.offsets))
    target = F.coalesce(numeric, F.when(earliest_target, F.col("_log_start.start")))
    null_next = F.lit(None).cast(
        "struct<ts:timestamp,strategy:string,strategy_evidence:struct<file:string,line:bigint>,evidence:struct<file:string,line:bigint>>"
    )
    known = with_start.where(target.isNotNull() & (target != F.col(s.OFFSET))).select(
        "*",
        target.alias("_target"),
        F.when(numeric.isNull(), F.col("_log_start.evidence")).alias("_target_evidence"),
        null_next.alias("_next"),
    )
    measured = _out_of_range_findings(known.drop("_log_start"))
    unknown = with_start.where(target.isNull() & (F.col("strategy").rlike(TO_LATEST) | earliest_target))
    to_end = F.col("strategy").rlike(TO_LATEST)
    where_now = F.when(to_end, F.lit("log-end")).otherwise(F.lit("log-start"))
    unmeasured = findings(
        unknown,
        "out_of_range_reset",
        severity="critical",
        verdict="loss",
        group=F.col(s.GROUP_ID),
        topic=F.col(s.TOPIC),
        partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET),
        exact=F.lit(False),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col(s.TS),
        end=F.col(s.TS),
        evidence=lines(one(line())),
        explanation=F.format_string(
            "%s's fetch position %d on %s was out of range and was reset to %s %s: records from %d up to the partition's "
            "%s offset at the reset were skipped, never consumed (if the log was truncated below %d instead, the reset "
            "replays records); the logs do not name that offset, so the range is unmeasured.",
            text(F.col(MEMBER), "A consumer"),
            F.col(s.OFFSET),
            partition_name(),
            F.col("strategy"),
            at(F.col(s.TS), place(line())),
            F.col(s.OFFSET),
            where_now,
            F.col(s.OFFSET),
        ),
        kafka_reference=OUT_OF_RANGE_REFERENCE,
        remedy=OUT_OF_RANGE_REMEDY,
        missing=missing(
            F.format_string(
                "the %s offset of %s at the reset (%s), where the consumer resumed", where_now, partition_name(), at(F.col(s.TS))
            ),
            F.when(to_end, dump_partition_command()).otherwise(end_offsets_command(F.col(s.TOPIC), F.col(s.PARTITION), "-2")),
            F.lit(OFFSETS_DUMP_COMMAND),
            describe_command(F.col(s.GROUP_ID)),
        ),
    )
    return measured.unionByName(unmeasured)
