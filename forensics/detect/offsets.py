"""Offsets that skipped or repeated records: resets, backward commits, replays."""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import contract as c
from .. import schema as s
from ..model import Model
from ..model.members import MEMBER
from ..offsets.burrow import REWIND
from ..registry import earliest, latest
from ..sources import rows_from
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

PARTITION_KEY = (s.GROUP_ID, s.TOPIC, s.PARTITION)
EXACTLY_ONCE = r"^exactly_once"
"""``processing.guarantee`` values under which a record processed twice is a violation."""
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


def _tp() -> Column:
    return F.concat_ws("-", F.col(s.TOPIC), F.col(s.PARTITION).cast("string"))


def _member_history(commits: DataFrame) -> Window:
    return Window.partitionBy(*PARTITION_KEY, MEMBER).orderBy("sequence")


def _settings_by_group(model: Model, key: str) -> DataFrame:
    """Per group, the values of one setting in its clients' config blocks."""
    group = F.coalesce(F.col(s.GROUP_ID), F.col("application_id"))
    return model.settings.where(F.col("key") == key).groupBy(group.alias("_group")).agg(F.collect_set("value").alias("_values"))


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
    before = _member_history(commits)
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
    latest_configured = _settings_by_group(model, "auto.offset.reset")
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


def _unstated_resets() -> Column:
    """A reset to a known offset that names no strategy, of a partition the group had never
    committed, as the member's first word on it (kafka-python 2.2+: ``Resetting offset for
    partition P to offset N.``, whatever auto_offset_reset said; its out-of-range line comes
    first when that was the cause). With no committed offset it went to the log end (latest),
    unless N was the log start then (earliest): a dump's log start below N rules that out."""
    first_word = F.col("_previous_kind").isNull() | (F.col("_previous_kind") == c.NO_COMMITTED_OFFSET)
    return (
        (F.col("kind") == c.RESET) & F.col(s.OFFSET).isNotNull() & F.col("strategy").isNull() & first_word & ~F.col("_committed_before")
    )


def _measured_latest_gaps(gaps: DataFrame, exact: Column) -> DataFrame:
    """``reset_to_latest_gap`` findings of the resets in ``gaps`` (``_from``, ``_unstated``)."""
    how = F.when(
        F.col("_unstated") & ~exact,
        F.format_string(" (at most: the reset does not name its strategy; had auto.offset.reset been earliest, %d was the log "
                        "start then and nothing was skipped; a kafka-get-offsets --time -2 or kafka-dump-log dump decides)", F.col(s.OFFSET)),
    ).when(exact, F.lit("")).otherwise(
        F.lit(" (at most: the log start is not in the offset dumps; add a kafka-dump-log or kafka-get-offsets --time -2 dump)")
    )
    strategy = F.when(F.col("_unstated"), F.lit("reset with no strategy named, so to the log end unless at the log start"))
    return findings(
        gaps, "reset_to_latest_gap",
        severity="critical", verdict="loss", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col("_from"), offset_to=F.col(s.OFFSET), records=F.col(s.OFFSET) - F.col("_from"), exact=exact,
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.col(s.TS),
        evidence=lines(one(F.col("_previous_line")), one(line(number="strategy_line")), one(line()), one(F.col("_log_start.evidence"))),
        explanation=F.format_string(
            "Group %s had no committed offset for %s, so %s started at the log end (%s), offset %d: "
            "records [%d, %d) were never consumed%s.",
            text(F.col(s.GROUP_ID), "(unknown)"), _tp(), text(F.col(MEMBER), "its consumer"),
            F.coalesce(strategy, F.lit("auto.offset.reset=latest")), F.col(s.OFFSET), F.col("_from"), F.col(s.OFFSET), how,
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
        F.col(s.EVENT_TYPE).isin("consumer:offset:seek_strategy", "streams:reset_policy") & F.col(MEMBER).isNotNull()
        & F.col(s.TOPIC).isNotNull()
    )
    return stated.select(
        F.col(MEMBER).alias("_s_member"), F.col(s.TOPIC).alias("_s_topic"), F.col(s.PARTITION).alias("_s_partition"),
        F.col(s.TS).alias("_s_ts"), F.col(s.SOURCE_FILE).alias("_s_file"), F.col(s.LINE).alias("_s_line"),
        F.col("strategy").alias("_s_strategy"),
    )


def _next_placed(commits: DataFrame) -> Column:
    """The member's next row of the partition that names an offset (``kind``, ``offset``): where a
    reset to a logical offset (librdkafka's ``to offset END``) went, when a reset row follows with
    the offset (``Offset END request .. returned offset N``), after any repeated resets of the
    same query."""
    following = _member_history(commits).rowsBetween(1, Window.unboundedFollowing)
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
    after = _member_history(commits)
    nxt = F.lead(F.struct("kind", s.OFFSET)).over(after)
    prev = F.lag(F.struct("kind", line().alias("evidence"))).over(after)
    marked = commits.select("*", nxt.alias("_next"), prev.alias("_prev"), _next_placed(commits).alias("_placed"))
    unresolved = (F.col("kind") == c.NO_COMMITTED_OFFSET) & ~F.coalesce(F.col("_next.kind") == c.RESET, F.lit(False))
    resolved = F.coalesce(F.col("_placed.kind") == c.RESET, F.lit(False))
    logical = (F.col("kind") == c.RESET) & F.col(s.OFFSET).isNull() & F.coalesce(F.col("strategy").rlike(TO_LATEST), F.lit(False)) & ~resolved
    candidates = marked.where(unresolved | logical)
    stated = _strategy_lines(model)
    later = F.coalesce(F.col("_s_ts") >= F.col(s.TS), (F.col("_s_file") == F.col(s.SOURCE_FILE)) & (F.col("_s_line") > F.col(s.LINE)))
    matching = (
        (F.col("_s_member") == F.col(MEMBER)) & (F.col("_s_topic") == F.col(s.TOPIC))
        & (F.col("_s_partition").isNull() | (F.col("_s_partition") == F.col(s.PARTITION))) & later
    )
    row = [s.SOURCE_FILE, s.LINE, "kind", s.TOPIC, s.PARTITION]
    first_after = Window.partitionBy(*row).orderBy(F.col("_s_ts").asc_nulls_last(), "_s_file", "_s_line")
    with_stated = (
        candidates.join(stated, (F.col("kind") == c.NO_COMMITTED_OFFSET) & matching, "left")
        .withColumn("_rank", F.row_number().over(first_after)).where(F.col("_rank") == 1)
    )
    # a no-committed line is kept when its member then said where it goes: to the latest offset
    to_latest = with_stated.where(
        (F.col("kind") == c.RESET) | F.coalesce(F.col("_s_strategy").rlike(TO_LATEST), F.lit(False))
    )
    gaps = _with_log_start(to_latest, starts)
    end_at_reset = F.format_string(
        "the log-end offset of %s when %s reset it to the end (%s): the first offset of the first batch written after "
        "that time, in a kafka-dump-log dump of the partition's segments, or the group's first commit of it after the "
        "reset (an upper bound)", _tp(), text(F.col(MEMBER), "the member"), at(F.col(s.TS), place(line())),
    )
    stated_line = F.when(F.col("_s_line").isNotNull(), F.struct(F.col("_s_file").alias("file"), F.col("_s_line").cast("long").alias("line")))
    previous_no_commit = F.when(F.col("_prev.kind") == c.NO_COMMITTED_OFFSET, F.col("_prev.evidence"))
    return findings(
        gaps, "reset_to_latest_gap",
        severity="critical", verdict="loss", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col("_log_start.start"), exact=F.lit(False),
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.col(s.TS),
        evidence=lines(one(line()), one(stated_line), one(previous_no_commit), one(F.col("_log_start.evidence"))),
        explanation=F.format_string(
            "Group %s had no committed offset for %s, so %s reset it to the log end (auto.offset.reset=latest) %s: the "
            "records written before were never consumed, but the logs do not say the offset it reset to, so the range "
            "[%s, log end at the reset) is unmeasured.",
            text(F.col(s.GROUP_ID), "(unknown)"), _tp(), text(F.col(MEMBER), "its consumer"), at(F.col(s.TS), place(line())),
            text(F.col("_log_start.start"), "log start"),
        ),
        kafka_reference="auto.offset.reset=latest; partitions added while producers write to them",
        remedy=LATEST_REMEDY,
        missing=missing(
            end_at_reset,
            dump_partition_command(),
            F.lit(OFFSETS_DUMP_COMMAND),
            describe_command(F.col(s.GROUP_ID)),
        ),
    )


@rows_from("commits")
def out_of_range_reset(model: Model) -> DataFrame:
    """A fetch position was out of range (retention deleted it, or the log was truncated after
    an unclean leader election) and was reset per ``auto.offset.reset``: a reset forward
    skipped [position, new offset), a reset backward replays [new offset, position)."""
    commits = model.commits
    after = _member_history(commits)
    marked = commits.select(
        "*",
        F.lead(F.struct("kind", s.OFFSET, s.TS, "strategy", line().alias("evidence"),
                        line(number="strategy_line").alias("strategy_evidence"))).over(after).alias("_next"),
    )
    resets = marked.where(
        (F.col("kind") == c.OUT_OF_RANGE) & (F.col("_next.kind") == c.RESET) & (F.col("_next.offset") != F.col(s.OFFSET))
    )
    return _out_of_range_findings(resets.withColumn("_target", F.col("_next.offset")).withColumn("_target_evidence", F.lit(None).cast(
        s.as_ddl(s.EVIDENCE_LINE)))).unionByName(_logical_out_of_range_resets(model))


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
        resets, "out_of_range_reset",
        severity=F.when(forward, F.lit("critical")).otherwise(F.lit("warning")),
        verdict=F.when(forward, F.lit("loss")).otherwise(F.lit("duplication")),
        group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=low, offset_to=high, records=high - low, exact=F.lit(True),
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.coalesce(F.col("_next.ts"), F.col(s.TS)),
        evidence=lines(one(line()), one(F.col("_next.strategy_evidence")), one(F.col("_next.evidence")), one(F.col("_target_evidence"))),
        explanation=F.format_string(
            "%s's fetch position %d on %s was out of range and was reset to %s offset %d: %s.",
            text(F.col(MEMBER), "A consumer"), F.col(s.OFFSET), _tp(), text(F.coalesce(F.col("_next.strategy"), F.col("strategy")), "the"),
            F.col("_target"),
            F.when(forward, F.format_string("records [%d, %d) were skipped, never consumed", low, high))
            .otherwise(F.format_string("records [%d, %d) are consumed a second time", low, high)),
        ),
        kafka_reference=OUT_OF_RANGE_REFERENCE, remedy=OUT_OF_RANGE_REMEDY,
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
    nxt = F.lead(F.struct("kind", s.OFFSET)).over(_member_history(commits))
    named = commits.select("*", nxt.alias("_n")).where(
        (F.col("kind") == c.OUT_OF_RANGE) & F.col("strategy").isNotNull() & F.col(s.OFFSET).isNotNull()
        & ~F.coalesce((F.col("_n.kind") == c.RESET) & F.col("_n.offset").isNotNull(), F.lit(False))
    ).drop("_n")
    numeric = F.nullif(F.regexp_extract(F.col("strategy"), TO_OFFSET, 1), F.lit("")).cast("long")
    earliest_target = F.regexp_replace(F.col("strategy"), r"(?i)^cached beginning offset ", "").rlike(TO_EARLIEST)
    with_start = _with_log_start(named, _log_start(model.offsets))
    target = F.coalesce(numeric, F.when(earliest_target, F.col("_log_start.start")))
    null_next = F.lit(None).cast("struct<ts:timestamp,strategy:string,strategy_evidence:struct<file:string,line:bigint>,evidence:struct<file:string,line:bigint>>")
    known = with_start.where(target.isNotNull() & (target != F.col(s.OFFSET))).select(
        "*", target.alias("_target"), F.when(numeric.isNull(), F.col("_log_start.evidence")).alias("_target_evidence"), null_next.alias("_next"),
    )
    measured = _out_of_range_findings(known.drop("_log_start"))
    unknown = with_start.where(target.isNull() & (F.col("strategy").rlike(TO_LATEST) | earliest_target))
    to_end = F.col("strategy").rlike(TO_LATEST)
    where_now = F.when(to_end, F.lit("log-end")).otherwise(F.lit("log-start"))
    unmeasured = findings(
        unknown, "out_of_range_reset",
        severity="critical", verdict="loss", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET), exact=F.lit(False), host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.col(s.TS),
        evidence=lines(one(line())),
        explanation=F.format_string(
            "%s's fetch position %d on %s was out of range and was reset to %s %s: records from %d up to the partition's "
            "%s offset at the reset were skipped, never consumed (if the log was truncated below %d instead, the reset "
            "replays records); the logs do not name that offset, so the range is unmeasured.",
            text(F.col(MEMBER), "A consumer"), F.col(s.OFFSET), _tp(), F.col("strategy"), at(F.col(s.TS), place(line())),
            F.col(s.OFFSET), where_now, F.col(s.OFFSET),
        ),
        kafka_reference=OUT_OF_RANGE_REFERENCE, remedy=OUT_OF_RANGE_REMEDY,
        missing=missing(
            F.format_string(
                "the %s offset of %s at the reset (%s), where the consumer resumed", where_now, _tp(), at(F.col(s.TS)),
            ),
            F.when(to_end, dump_partition_command())
            .otherwise(end_offsets_command(F.col(s.TOPIC), F.col(s.PARTITION), "-2")),
            F.lit(OFFSETS_DUMP_COMMAND),
            describe_command(F.col(s.GROUP_ID)),
        ),
    )
    return measured.unionByName(unmeasured)


BACKWARD_REFERENCE = "alpakka-kafka #1121/#1123; Burrow REWIND; brokers accept commits for partitions a member does not own"
BACKWARD_REMEDY = (
    "Commit only partitions the consumer still owns: drop pending commits in onPartitionsRevoked/onPartitionsLost "
    "(alpakka-kafka 2.0.4+ does), and never commit an offset below the last one committed."
)


@rows_from("commits", "offsets")
def backward_commit(model: Model) -> DataFrame:
    """A committed offset lower than the partition's previous commit (seed 003, alpakka-kafka
    #1121/#1123, Burrow's REWIND): the group's position went back, and whoever owns the
    partition next reprocesses [new commit, previous commit).

    ``classification``: ``zombie`` (the committer no longer owned the partition: brokers accept
    commits from any member of the current generation), ``reset`` (the committer reset or
    seeked its position since the previous commit), ``replay`` (an owner resumed from an older
    commit and committed behind the last one), ``rewind`` (see ``_unseen_rewinds``), ``unseen``
    (positions fetched at assignment went back: ``_fetched_positions_back``). Dumped
    offsets (``__consumer_offsets`` and Burrow commits, ``--describe`` and lag-exporter
    snapshots) count only for partitions with no commit in the logs (the logs name the
    committer; the dump would repeat them), and a dumped step back only between two timed
    rows of different times, or two rows of one file (whose line order is their order).
    """
    commits = model.commits
    history = _member_history(commits).rowsBetween(Window.unboundedPreceding, -1)
    repositioned = F.last(F.when(F.col("kind").isin(c.RESET, c.SEEK), F.col("sequence")), ignorenulls=True).over(history)
    logged = F.sum((F.col("kind") == c.COMMIT).cast("int")).over(Window.partitionBy(*PARTITION_KEY))
    marked = commits.withColumn("_repositioned", repositioned).withColumn("_logged", logged)
    candidates = marked.where((F.col("kind") == c.COMMIT) | (F.col("kind").isin(*c.DUMPED_KINDS) & (F.col("_logged") == 0)))
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("sequence")
    previous = F.lag(F.struct(s.OFFSET, "sequence", MEMBER, s.TS, s.SOURCE_FILE, line().alias("evidence"))).over(ordered)
    in_order = (F.col(s.TS) > F.col("_previous.ts")) | (F.col(s.SOURCE_FILE) == F.col("_previous.source_file"))
    backward = candidates.withColumn("_previous", previous).where(
        (F.col(s.OFFSET) < F.col("_previous.offset")) & ((F.col("kind") == c.COMMIT) | in_order)
    )
    kind = (
        F.when(F.col("in_own_interval") == F.lit(False), F.lit("zombie"))
        .when(F.col("_repositioned") > F.col("_previous.sequence"), F.lit("reset"))
        .otherwise(F.lit("replay"))
    )
    why = (
        F.when(kind == "zombie", F.lit("after it had lost the partition in a rebalance"))
        .when(kind == "reset", F.lit("after its position was reset"))
        .otherwise(F.lit("resuming from an older commit"))
    )
    records = F.col("_previous.offset") - F.col(s.OFFSET)
    steps = findings(
        backward, "backward_commit",
        severity="warning", verdict="duplication", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET), offset_to=F.col("_previous.offset"), records=records, exact=F.lit(True), classification=kind,
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col("_previous.ts"), end=F.col(s.TS),
        evidence=lines(one(F.col("_previous.evidence")), one(line())),
        explanation=F.format_string(
            "%s committed offset %d for %s %s, after %s had committed %d: the committed offset went back %d records, which "
            "the partition's next owner will process again (external lag monitors show it stuck).",
            F.coalesce(F.col(MEMBER), F.lit("an unknown member")), F.col(s.OFFSET), _tp(), why,
            F.coalesce(F.col("_previous.member"), F.lit("the group")), F.col("_previous.offset"), records,
        ),
        kafka_reference=BACKWARD_REFERENCE, remedy=BACKWARD_REMEDY,
    )
    return steps.unionByName(_unseen_rewinds(model, steps)).unionByName(_fetched_positions_back(model, steps))


def _fetched_positions_back(model: Model, steps: DataFrame) -> DataFrame:
    """A partition whose positions fetched at assignment (``Setting offset for partition P to
    the committed offset N``, each owner's resume) went back (2, then 6, then 2): its committed
    offset went from 6 back to 2, so the owner after reprocesses [2, 6). Only for partitions
    whose commits are not in the logs (at INFO the Java client logs none) and with no other
    backward step found; the commit that went back is not in the logs (``classification``
    ``unseen``), so ``missing`` names the offsets dump that shows who made it."""
    commits = model.commits
    logged = F.sum((F.col("kind") == c.COMMIT).cast("int")).over(Window.partitionBy(*PARTITION_KEY))
    positions = commits.withColumn("_logged", logged).where(
        (F.col("kind") == c.POSITION_FROM_COMMIT) & F.col(s.OFFSET).isNotNull() & (F.col("_logged") == 0)
    )
    ordered = Window.partitionBy(*PARTITION_KEY).orderBy("sequence")
    previous = F.lag(F.struct(s.OFFSET, MEMBER, s.TS, s.SOURCE_FILE, line().alias("evidence"))).over(ordered)
    in_order = (F.col(s.TS) > F.col("_previous.ts")) | (F.col(s.SOURCE_FILE) == F.col("_previous.source_file"))  # undated files: no order between them
    back = (
        positions.withColumn("_previous", previous).where((F.col(s.OFFSET) < F.col("_previous.offset")) & in_order)
        .join(steps.select(*PARTITION_KEY).distinct(), list(PARTITION_KEY), "left_anti")
    )
    records = F.col("_previous.offset") - F.col(s.OFFSET)
    return findings(
        back, "backward_commit",
        severity="warning", verdict="duplication", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET), offset_to=F.col("_previous.offset"), records=records, exact=F.lit(True), classification="unseen",
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col("_previous.ts"), end=F.col(s.TS),
        evidence=lines(one(F.col("_previous.evidence")), one(line())),
        explanation=F.format_string(
            "%s resumed %s from the committed offset %d, after %s had resumed it from %d: the group's committed offset "
            "went back %d records between the two assignments, and [%d, %d) is processed again. The commit that moved "
            "it back is not in the logs.",
            text(F.col(MEMBER), "A consumer"), _tp(), F.col(s.OFFSET), text(F.col("_previous.member"), "another consumer"),
            F.col("_previous.offset"), records, F.col(s.OFFSET), F.col("_previous.offset"),
        ),
        kafka_reference=BACKWARD_REFERENCE, remedy=BACKWARD_REMEDY,
        missing=missing(
            F.format_string("the commit of %s that went back from %d to %d, and its member", _tp(), F.col("_previous.offset"), F.col(s.OFFSET)),
            F.lit(OFFSETS_DUMP_COMMAND),
        ),
    )


def _unseen_rewinds(model: Model, steps: DataFrame) -> DataFrame:
    """Partitions Burrow rated ``REWIND`` (a commit of its window went below an earlier one and
    the group has not come back to it) whose dumped start and end commits show no step back:
    the step lies inside the window, so the range is unknown (``offset_from``/``offset_to``
    null, ``exact`` false). Not for partitions with commits in the logs, like dumped steps."""
    if model.offsets is None:
        return steps.limit(0)
    rated = model.offsets.where((F.col(s.KIND) == s.CONSUMER_OFFSETS_COMMIT) & (F.col(s.STATE) == REWIND))
    logged = model.commits.where(F.col("kind") == c.COMMIT).select(*PARTITION_KEY).distinct()
    rewinds = (
        rated.join(steps.select(*PARTITION_KEY).distinct(), list(PARTITION_KEY), "left_anti")
        .join(logged, list(PARTITION_KEY), "left_anti")
        .groupBy(*PARTITION_KEY)
        .agg(
            earliest(F.struct(s.CURRENT_OFFSET, s.COMMIT_TS, s.HOST, s.CLIENT_ID), s.COMMIT_TS, line()).alias("_first"),
            latest(F.struct(s.CURRENT_OFFSET, s.COMMIT_TS, s.HOST, s.CLIENT_ID), s.COMMIT_TS, line()).alias("_last"),
            F.collect_list(line()).alias("_evidence"),
        )
    )
    return findings(
        rewinds, "backward_commit",
        severity="warning", verdict="duplication", group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        exact=F.lit(False), classification="rewind", host=F.col("_last.host"), member=F.col("_last.client_id"),
        start=F.col("_first.commit_ts"), end=F.col("_last.commit_ts"), evidence=lines(F.col("_evidence")),
        explanation=F.format_string(
            "Burrow rated %s of group %s REWIND: between %s and %s a commit went below an earlier one and the group has "
            "not come back to it, which the next owner will process again; the window's first and last commits (%d, "
            "then %d) do not show the step, so the range is unknown (Burrow's consumer detail, "
            "/v3/kafka/<cluster>/consumer/<group>, lists every commit of the window).",
            _tp(), F.col(s.GROUP_ID), F.col("_first.commit_ts").cast("string"), F.col("_last.commit_ts").cast("string"),
            F.col("_first.current_offset"), F.col("_last.current_offset"),
        ),
        kafka_reference=BACKWARD_REFERENCE, remedy=BACKWARD_REMEDY,
    )


@rows_from("commits", "consumer:offset:commit_failed")
def reprocessing(model: Model) -> DataFrame:
    """Records processed twice after a failed commit (``CommitFailedException``: the member was
    no longer in the generation, e.g. after a poll or session timeout, or the group had
    rebalanced): the old owner had processed up to the offset P it failed to commit, and the
    partition resumed from the older committed offset C, so [C, P) was processed twice. (A
    crash before a commit leaves no P in the logs and is not counted.)

    The resume paired with a failed commit is the partition's first "Setting offset ... to the
    committed offset" after the failing member's last successful commit or own resume (where
    its processing started; commits may be logged at DEBUG only), by another member or by the
    same member in another generation; the failure may come before it or after it (a stalled
    member commits late). The verdict is ``expected`` under at-least-once and
    ``duplication`` when the group is configured for exactly-once (``processing.guarantee``).
    """
    commits = model.commits
    own = _member_history(commits).rowsBetween(Window.unboundedPreceding, -1)
    own_commit = F.when(
        F.col("kind").isin(c.COMMIT, c.POSITION_FROM_COMMIT), F.struct(F.col("sequence").alias("sequence"), F.col(s.GENERATION).alias("generation"))
    )
    failed = commits.withColumn("_epoch", F.last(own_commit, ignorenulls=True).over(own)).where(
        (F.col("kind") == c.COMMIT_FAILED) & F.col(s.OFFSET).isNotNull()
    ).select(
        *[F.col(key).alias(f"_f_{key}") for key in PARTITION_KEY],
        F.struct(
            F.col(s.OFFSET).alias("offset"), F.col(MEMBER).alias("member"), F.col("sequence").alias("sequence"),
            F.coalesce(F.col("_epoch.sequence"), F.lit(0)).alias("after"),
            F.coalesce(F.col("_epoch.generation"), F.col(s.GENERATION)).alias("generation"),
            line().alias("evidence"),
        ).alias("_failure"),
    )
    resumes = commits.where(F.col("kind") == c.POSITION_FROM_COMMIT)
    same = reduce(lambda a, b: a & b, [F.col(key) == F.col(f"_f_{key}") for key in PARTITION_KEY])
    itself = (F.col(MEMBER) == F.col("_failure.member")) & (F.col(s.GENERATION) == F.col("_failure.generation"))
    candidates = resumes.join(failed, same & (F.col("sequence") > F.col("_failure.after")) & ~F.coalesce(itself, F.lit(False)))
    first_resume = Window.partitionBy("_failure.sequence", *[f"_f_{key}" for key in PARTITION_KEY]).orderBy("sequence")
    paired = candidates.withColumn("_rank", F.row_number().over(first_resume)).where(F.col("_rank") == 1)
    per_resume = paired.groupBy(*resumes.columns).agg(F.max_by("_failure", "_failure.offset").alias("_failure"))
    twice = per_resume.where(F.col("_failure.offset") > F.col(s.OFFSET))
    guarantee = _settings_by_group(model, "processing.guarantee")
    twice = twice.join(guarantee, F.col(s.GROUP_ID) == F.col("_group"), "left")
    exactly_once = F.exists(F.coalesce(F.col("_values"), F.array()), lambda value: value.rlike(EXACTLY_ONCE))
    records = F.col("_failure.offset") - F.col(s.OFFSET)
    return _measured_reprocessing(twice, exactly_once, records).unionByName(_unmeasured_reprocessing(model, guarantee))


REPROCESSING_REFERENCE = "CommitFailedException; at-least-once delivery; max.poll.interval.ms / max.poll.records"
REPROCESSING_REMEDY = (
    "Commit synchronously in onPartitionsRevoked, keep each poll loop well inside max.poll.interval.ms "
    "(lower max.poll.records), and make processing idempotent or transactional (exactly-once)."
)


def _measured_reprocessing(twice: DataFrame, exactly_once: Column, records: Column) -> DataFrame:
    return findings(
        twice, "reprocessing",
        severity=F.when(exactly_once, F.lit("warning")).otherwise(F.lit("info")),
        verdict=F.when(exactly_once, F.lit("duplication")).otherwise(F.lit("expected")),
        group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION),
        offset_from=F.col(s.OFFSET), offset_to=F.col("_failure.offset"), records=records, exact=F.lit(True),
        host=F.col(s.HOST), member=F.col(MEMBER), start=F.col(s.TS), end=F.col(s.TS),
        evidence=lines(one(F.col("_failure.evidence")), one(line())),
        explanation=F.format_string(
            "%s failed to commit offset %d for %s, and %s resumed the partition from the committed offset %d: records "
            "[%d, %d) (%d) were processed twice%s.",
            F.col("_failure.member"), F.col("_failure.offset"), _tp(), F.col(MEMBER), F.col(s.OFFSET), F.col(s.OFFSET),
            F.col("_failure.offset"), records,
            F.when(exactly_once, F.lit(" although the group is configured for exactly-once")).otherwise(F.lit(" (allowed under at-least-once)")),
        ),
        kafka_reference=REPROCESSING_REFERENCE, remedy=REPROCESSING_REMEDY,
    )


SAME_COMMIT_S = 1.0
SAME_COMMIT_LINES = 3
"""How close (seconds, or lines of one undated file) a failure line without offsets stands to
its member's failure lines with offsets for both to be one commit's."""


def _unmeasured_reprocessing(model: Model, guarantee: DataFrame) -> DataFrame:
    """A commit that failed without naming its offsets (``Failing OffsetCommit request since the
    consumer is not part of an active group``, ``CommitFailedException``, librdkafka's
    ``OffsetCommit .. returned: Broker: Unknown member``), of a member whose partitions another
    owner (or itself, after rejoining) then resumed from the group's older committed offset:
    what it had processed since its last successful commit is processed again, but the logs do
    not say how much. One finding per partition the member held at the failure (or released
    just before it), ``offset_from`` the resumed offset where the new owner logged it,
    ``offset_to`` null, ``exact`` false, ``missing`` the offsets that measure it. None under
    exactly-once: the failing member's transaction is aborted."""
    commits = model.commits
    counted = commits.where(F.col("kind") == c.COMMIT_FAILED)
    failures = model.members.where(
        (F.col(s.EVENT_TYPE) == "consumer:offset:commit_failed") & F.col(s.TOPIC).isNull() & F.col(MEMBER).isNotNull()
    ).join(counted.select(s.SOURCE_FILE, s.LINE).distinct(), [s.SOURCE_FILE, s.LINE], "left_anti").select(
        F.col(MEMBER).alias("_f_member"), F.col(s.GROUP_ID).alias("_f_group"), F.col(s.TS).alias("_f_ts"),
        F.col(s.SOURCE_FILE).alias("_f_file"), F.col(s.LINE).alias("_f_line"), F.col(s.HOST).alias("_f_host"),
        F.col(s.MEMBER_BASIS).alias("_f_basis"),
    )
    # a failure line that sums up a commit whose partitions its member's other lines name with
    # their offsets (librdkafka: "OffsetCommit failed for orders [1] at offset 4200", then
    # "OffsetCommit for 1 partition(s) ..: returned: Broker: Unknown member") is that commit
    named = commits.where((F.col("kind") == c.COMMIT_FAILED) & F.col(s.OFFSET).isNotNull()).select(
        F.col(MEMBER).alias("_s_member"), F.col(s.TS).alias("_s_ts"), F.col(s.SOURCE_FILE).alias("_s_file"), F.col(s.LINE).alias("_s_line"),
    )
    same_commit = (F.col("_s_member") == F.col("_f_member")) & F.coalesce(
        F.abs(F.col("_s_ts").cast("double") - F.col("_f_ts").cast("double")) <= SAME_COMMIT_S,
        (F.col("_s_file") == F.col("_f_file")) & (F.abs(F.col("_s_line") - F.col("_f_line")) <= SAME_COMMIT_LINES),
    )
    failures = failures.join(named, same_commit, "left_anti")
    intervals = model.ownership.where(F.col(s.TOPIC).isNotNull())
    before_failure = F.coalesce(
        F.col("from_ts") <= F.col("_f_ts"), (F.col(s.SOURCE_FILE) == F.col("_f_file")) & (F.col("from_line") <= F.col("_f_line"))
    )
    held = intervals.join(
        failures, (F.col(MEMBER) == F.col("_f_member")) & F.col(s.GROUP_ID).eqNullSafe(F.col("_f_group")) & before_failure
    )
    failure_key = ["_f_file", "_f_line"]
    latest_per_partition = Window.partitionBy(*failure_key, s.TOPIC, s.PARTITION).orderBy(F.col("from_ts").desc_nulls_last(), F.col("from_line").desc())
    held = held.withColumn("_rank", F.row_number().over(latest_per_partition)).where(F.col("_rank") == 1)
    # what it held at the failure; if nothing, what it released last before it (it had left)
    active = F.coalesce(F.col("to_ts").isNull() | (F.col("to_ts") >= F.col("_f_ts")), F.lit(True))
    per_failure = Window.partitionBy(*failure_key)
    held = held.withColumn("_active", active).withColumn("_any_active", F.max(F.col("_active").cast("int")).over(per_failure) == 1)
    held = held.withColumn("_last_release", F.max(F.when(~F.col("_active"), F.col("to_ts"))).over(per_failure)).where(
        F.col("_active") | (~F.col("_any_active") & (F.col("to_ts") == F.col("_last_release")))
    )
    measured_failures = commits.where((F.col("kind") == c.COMMIT_FAILED) & F.col(s.OFFSET).isNotNull()).select(
        F.col(MEMBER).alias("_m_member"), F.col(s.TOPIC).alias("_m_topic"), F.col(s.PARTITION).alias("_m_partition"), F.col(s.TS).alias("_m_ts"),
    )
    held = held.join(
        measured_failures,
        (F.col("_m_member") == F.col(MEMBER)) & (F.col("_m_topic") == F.col(s.TOPIC)) & (F.col("_m_partition") == F.col(s.PARTITION))
        & (F.col("_m_ts") >= F.col("from_ts")),
        "left_anti",
    )
    later = intervals.select(
        F.col(s.GROUP_ID).alias("_n_group"), F.col(s.TOPIC).alias("_n_topic"), F.col(s.PARTITION).alias("_n_partition"),
        F.col(MEMBER).alias("_n_member"), F.col("from_ts").alias("_n_from"), F.col(s.SOURCE_FILE).alias("_n_file"),
        F.col("from_line").alias("_n_line"), F.col(s.GENERATION).alias("_n_generation"),
    )
    next_owner = (
        F.col("_n_group").eqNullSafe(F.col(s.GROUP_ID)) & (F.col("_n_topic") == F.col(s.TOPIC)) & (F.col("_n_partition") == F.col(s.PARTITION))
        & (F.col("_n_from") > F.col("from_ts"))
        & ((F.col("_n_member") != F.col(MEMBER)) | (F.col("_n_from") > F.col("_f_ts")))
    )
    first_next = Window.partitionBy(*failure_key, s.TOPIC, s.PARTITION).orderBy("_n_from", "_n_file", "_n_line")
    resumed = held.join(later, next_owner).withColumn("_rank", F.row_number().over(first_next)).where(F.col("_rank") == 1)
    positions = commits.where((F.col("kind") == c.POSITION_FROM_COMMIT) & F.col(s.OFFSET).isNotNull()).select(
        F.col(MEMBER).alias("_p_member"), F.col(s.TOPIC).alias("_p_topic"), F.col(s.PARTITION).alias("_p_partition"),
        F.col(s.TS).alias("_p_ts"), F.col(s.OFFSET).alias("_p_offset"), line().alias("_p_evidence"),
    )
    resume_of_next = (
        (F.col("_p_member") == F.col("_n_member")) & (F.col("_p_topic") == F.col(s.TOPIC)) & (F.col("_p_partition") == F.col(s.PARTITION))
        & (F.col("_p_ts") >= F.col("_n_from"))
    )
    first_position = Window.partitionBy(*failure_key, s.TOPIC, s.PARTITION).orderBy(F.col("_p_ts").asc_nulls_last())
    with_resume = (
        resumed.join(positions, resume_of_next, "left").withColumn("_rank", F.row_number().over(first_position)).where(F.col("_rank") == 1)
        .join(guarantee, F.col(s.GROUP_ID) == F.col("_group"), "left")
    )
    # under exactly-once the failing member's transaction is aborted: its uncommitted work is not
    # output twice (the fenced detector tells it)
    exactly_once = F.exists(F.coalesce(F.col("_values"), F.array()), lambda value: value.rlike(EXACTLY_ONCE))
    with_resume = with_resume.where(~exactly_once)
    failure_line = F.struct(F.col("_f_file").alias("file"), F.col("_f_line").cast("long").alias("line"))
    next_line = F.struct(F.col("_n_file").alias("file"), F.col("_n_line").cast("long").alias("line"))
    resumed_from = F.when(F.col("_p_offset").isNotNull(), F.format_string(" from the committed offset %d", F.col("_p_offset"))).otherwise(
        F.lit(" from the group's last committed offset")
    )
    return findings(
        with_resume, "reprocessing",
        severity="info", verdict="expected",
        group=F.col(s.GROUP_ID), topic=F.col(s.TOPIC), partition=F.col(s.PARTITION), offset_from=F.col("_p_offset"), exact=F.lit(False),
        host=F.col("_f_host"), member=F.col("_f_member"), member_basis=F.col("_f_basis"), start=F.col("_f_ts"), end=F.coalesce(F.col("_p_ts"), F.col("_n_from")),
        evidence=lines(one(failure_line), one(next_line), one(F.col("_p_evidence"))),
        explanation=F.format_string(
            "%s's commit failed %s while it held %s, and %s resumed the partition%s: what %s had processed since its last "
            "successful commit was processed twice%s, but the logs name neither that position nor the commit, so the range "
            "is unmeasured.",
            F.col("_f_member"), at(F.col("_f_ts"), place(failure_line)), _tp(),
            F.when(F.col("_n_member") == F.col("_f_member"), F.lit("it, after rejoining,")).otherwise(text(F.col("_n_member"), "the next owner")),
            resumed_from, F.col("_f_member"), F.lit(" (allowed under at-least-once)"),
        ),
        kafka_reference=REPROCESSING_REFERENCE, remedy=REPROCESSING_REMEDY,
        missing=missing(
            F.format_string(
                "the offset %s had processed %s up to when its commit failed (the offsets it tried to commit: the Java client "
                "logs them at DEBUG, 'Sending OffsetCommit request with {..}'), and the group's committed offset of it before "
                "and after the rebalance", F.col("_f_member"), _tp(),
            ),
            F.lit(OFFSETS_DUMP_COMMAND),
            describe_command(F.col(s.GROUP_ID)),
        ),
    )
