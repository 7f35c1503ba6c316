"""Members dropping out of a group: timeouts, fencing, rebalance storms (seed 002)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import schema as s
from ..model import Model
from ..model.coordinator import COORDINATOR_LINES, coordinator_signals, member_names
from ..model.members import FENCED_OR_UNKNOWN, GENERATION_NOW, MEMBER, MEMBER_ID_OF_CLIENT, epoch_fenced, member_order, member_unknown
from ..registry import EVIDENCE_ORDER, first_stated, latest
from ..sources import empty_without, rows_from
from ._finding import at, findings, line, lines, place, text

STORM_REBALANCES = 8
STORM_WINDOW_S = 600
"""A rebalance storm: at least ``STORM_REBALANCES`` rebalances of one group within
``STORM_WINDOW_S`` seconds (a rolling restart of N members causes about 2N)."""

MEMBER_EPISODE = (s.GROUP_ID, MEMBER, GENERATION_NOW)


def _dated_first() -> Column:
    """A line's place for ``min_by``: dated lines by time, then undated ones by file and line, so
    an undated paste keeps what its first line says (issue 85: a fence's kind was lost)."""
    return F.struct(F.col(s.TS).isNull(), F.col(s.TS), *EVIDENCE_ORDER)


def _per_member(lines_of: DataFrame, kind: Column | None = None, stated: Column | None = None) -> DataFrame:
    """One row per member and generation: its first such line (and its ``kind``, and the
    ``stated`` value the lines give, as ``_stated``), all of their evidence; ``_first`` the
    first line (in log order: an undated paste reads by line)."""
    lines_of = lines_of.withColumn("_kind", kind if kind is not None else F.lit(None).cast("string"))
    lines_of = lines_of.withColumn("_stated", stated if stated is not None else F.lit(None).cast("string"))
    basis = [first_stated(s.MEMBER_BASIS).alias(s.MEMBER_BASIS)] if s.MEMBER_BASIS in lines_of.columns else []
    return lines_of.groupBy(*MEMBER_EPISODE).agg(
        F.min(s.TS).alias("_at"),
        first_stated(s.HOST).alias(s.HOST),
        first_stated(s.CLIENT_ID).alias(s.CLIENT_ID),
        first_stated(s.TASK).alias(s.TASK),
        F.min_by(F.col("_kind"), _dated_first()).alias("_kind"),
        first_stated(F.col("_stated")).alias("_stated"),
        F.min(line()).alias("_first"),
        F.collect_list(line()).alias("_evidence"),
        *basis,
    )


def _setting(model: Model, key: str) -> DataFrame:
    """One setting of each client, by host and client id (from its config block)."""
    return (
        model.settings.where(F.col("key") == key)
        .groupBy(F.col(s.HOST).alias("_host"), F.col(s.CLIENT_ID).alias("_client"))
        .agg(F.max("value").alias("_setting"))
    )


def _with_setting(rows: DataFrame, model: Model, key: str) -> DataFrame:
    client = F.regexp_replace(F.col(MEMBER), r"^[^/]*/", "")
    on = (F.col(s.HOST) == F.col("_host")) & (client == F.col("_client"))
    return rows.join(_setting(model, key), on, "left")


def _timeout_finding(rows: DataFrame, detector: str, setting: str, default: str, what: str | Column, remedy: str) -> DataFrame:
    """A timeout's finding; the setting's value from the client's config block, else as the
    client's own line states it (``_stated``: librdkafka's MAXPOLL line names the interval)."""
    stated = F.concat(F.col("_stated"), F.lit(" ms, as its own line states"))
    value = F.coalesce(F.concat(F.col("_setting"), F.lit(" ms")), stated, F.lit(f"not in the logs; the default is {default}"))
    return findings(
        rows,
        detector,
        severity="warning",
        verdict="delay",
        group=F.col(s.GROUP_ID),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col("_at"),
        end=F.col("_at"),
        evidence=lines(F.col("_evidence")),
        explanation=F.format_string(
            "%s %s (%s = %s), so group %s rebalanced without it %s.",
            F.col(MEMBER),
            what if isinstance(what, Column) else F.lit(what),
            F.lit(setting),
            value,
            text(F.col(s.GROUP_ID), "(unknown)"),
            F.when(
                F.col("_at").isNotNull(), F.concat(F.lit("from "), F.date_format(F.col("_at"), "yyyy-MM-dd HH:mm:ss.SSS 'UTC'"))
            ).otherwise(F.concat(F.lit("from untimed line "), place(F.col("_first")))),
        ),
        kafka_reference=setting,
        remedy=remedy,
    )


MAX_POLL_STATED = r"(?:maximum poll interval \((\d+) ?ms\)|max\.poll\.interval\.ms \((\d+)\))"
"""A client stating its own max.poll.interval.ms: librdkafka's MAXPOLL line, ``Application maximum
poll interval (300000ms) exceeded by 89ms``."""


def _first_line(lines_of: DataFrame, name: str) -> DataFrame:
    """Per member and generation: the time of its first line among ``lines_of`` (``name``, null
    where untimed) and ``name_seen``."""
    return lines_of.groupBy(MEMBER, GENERATION_NOW).agg(F.min(s.TS).alias(name), F.lit(True).alias(f"{name}_seen"))


def _first_cause(rows: DataFrame, other: DataFrame, name: str, wins_ties: bool) -> DataFrame:
    """``rows`` (``_per_member``) but the member episodes whose other cause of leaving (``other``:
    ``_first_line`` as ``name``) came first. ``wins_ties``: a tie or an untimed line keeps the row,
    else it goes to the other cause."""
    first = F.col("_at") <= F.col(name) if wins_ties else F.col("_at") < F.col(name)
    joined = rows.join(other, [MEMBER, GENERATION_NOW], "left")
    return joined.where(F.col(f"{name}_seen").isNull() | F.coalesce(first, F.lit(wins_ties))).drop(name, f"{name}_seen")


SILENT_LEAVE = (
    "it left the group with no reason stated and rejoined while still subscribed, as aiokafka does only when max_poll_interval_ms ran out"
)
"""How a poll timeout is known from ``silent_leaves``."""


def silent_leaves(members: DataFrame) -> DataFrame:
    """A member's leave that states no reason, followed by its own rejoin (``(Re-)joining group``)
    with no subscription line between: it left while still subscribed and not closing. aiokafka
    leaves so only when ``max_poll_interval_ms`` passed without a ``getone()``/``getmany()``
    (its heartbeat routine; close() and unsubscribe() leave too, but no rejoin follows without a
    new subscription) and logs no poll-timeout line of its own."""
    kinds = ("consumer:group:leave", "consumer:group:join_started", "consumer:subscribed")
    rows = members.where(F.col(MEMBER).isNotNull() & F.col(s.EVENT_TYPE).isin(*kinds))
    following = Window.partitionBy(MEMBER).orderBy(*member_order()).rowsBetween(1, Window.unboundedFollowing)
    after = F.first(F.when(F.col(s.EVENT_TYPE) != "consumer:group:leave", F.col(s.EVENT_TYPE)), ignorenulls=True).over(following)
    return (
        rows.withColumn("_after", after)
        .where(
            (F.col(s.EVENT_TYPE) == "consumer:group:leave") & F.col("reason").isNull() & (F.col("_after") == "consumer:group:join_started")
        )
        .drop("_after")
    )


def _poll_timeout_lines(members: DataFrame) -> DataFrame:
    """The members' poll-timeout lines (``_kind`` null) and, in a member's generation with none,
    its ``silent_leaves`` (``_kind`` ``SILENT_LEAVE``)."""
    stated = members.where(F.col(s.EVENT_TYPE) == "consumer:group:poll_timeout").withColumn("_kind", F.lit(None).cast("string"))
    inferred = silent_leaves(members).join(stated.select(MEMBER, GENERATION_NOW).distinct(), [MEMBER, GENERATION_NOW], "left_anti")
    return stated.unionByName(inferred.withColumn("_kind", F.lit(SILENT_LEAVE)))


def _session_expiries(model: Model) -> DataFrame:
    """A member's own session-expiry lines (``session_timeout_lines``) and the coordinator's
    statements that it expired the member (``coordinator_expiries``), in their columns."""
    members = model.members.where(F.col(MEMBER).isNotNull())
    own = members.where(session_timeout_lines(members))
    # without coordinator lines an empty relation, planned away: no work where the logs have none
    stated = empty_without(coordinator_expiries(model.members), COORDINATOR_LINES, model.event_types)
    return own.select(*stated.columns).unionByName(stated)


@rows_from("consumer:group:poll_timeout", "consumer:group:leave")
def poll_timeout(model: Model) -> DataFrame:
    """A member left its group because more than ``max.poll.interval.ms`` passed between two
    ``poll()`` calls (slow processing of a batch): the group rebalances, and what the member
    processed but had not committed is processed again by the next owner. A member whose session
    the coordinator had expired before (frozen process: both timers ran out) is reported as
    ``session_timeout``. Without a poll-timeout line, a ``silent_leaves`` line tells it."""
    timeouts = _poll_timeout_lines(model.members.where(F.col(MEMBER).isNotNull()))
    stated = F.coalesce(*[F.nullif(F.regexp_extract(s.MESSAGE, MAX_POLL_STATED, i), F.lit("")) for i in (1, 2)])
    expired = _first_line(_session_expiries(model), "_expired_at")
    episodes = _per_member(timeouts, kind=F.col("_kind"), stated=stated)
    rows = _with_setting(_first_cause(episodes, expired, "_expired_at", True), model, "max.poll.interval.ms")
    what = F.concat(
        F.lit("went longer than max.poll.interval.ms between two poll() calls and left the group"),
        F.when(F.col("_kind").isNotNull(), F.concat(F.lit(" (no line says so: "), F.col("_kind"), F.lit(")"))).otherwise(F.lit("")),
    )
    return _timeout_finding(
        rows,
        "poll_timeout",
        "max.poll.interval.ms",
        "300000 ms",
        what,
        "Process less per poll (lower max.poll.records), move slow work off the poll thread, or raise max.poll.interval.ms.",
    )


SESSION_EXPIRED = (
    "consumer:group:session_timeout",
    "consumer:group:generation_reset",
    "consumer:group:coordinator_unavailable",
    *FENCED_OR_UNKNOWN,
)
"""The event types of ``session_timeout_lines``."""


def session_timeout_lines(members: DataFrame) -> Column:
    """Lines showing the coordinator expired a member's session: no heartbeat reached it within
    ``session.timeout.ms`` (heartbeat answered UNKNOWN_MEMBER_ID, "member id is not valid",
    kafka-python's and aiokafka's "local member_id was not recognized", KIP-848 / KIP-1071
    "member M is unknown", or the client's own "session timed out without receiving a
    heartbeat response")."""
    message = F.coalesce(F.col(s.MESSAGE), F.lit(""))
    reason = F.coalesce(F.col("reason"), F.lit(""))
    return (
        (F.col(s.EVENT_TYPE) == "consumer:group:session_timeout")
        | (
            (F.col(s.EVENT_TYPE) == "consumer:group:heartbeat_failed")
            & (
                (F.col("error") == "UNKNOWN_MEMBER_ID")
                | message.rlike(r"member id \S+ is not valid|^Heartbeat(?: failed)?: local member_id was not recognized")
            )
        )
        | ((F.col(s.EVENT_TYPE) == "consumer:group:generation_reset") & reason.contains("UNKNOWN_MEMBER_ID") & reason.contains("HEARTBEAT"))
        | ((F.col(s.EVENT_TYPE) == "consumer:group:coordinator_unavailable") & F.lower(reason).contains("session timed out"))
        | member_unknown()
    )


def coordinator_expiries(members: DataFrame) -> DataFrame:
    """The group coordinator's own statements that it expired a member's session (``Member M in
    group G has failed``, ``Preparing to rebalance ... (reason: removing member M on heartbeat
    expiration)``, KIP-848 ``fenced ... because the member session expired``) as that member's
    lines: ``member`` is the member whose own lines carry M (else M itself: its log is missing),
    ``generation_now`` the generation it was removed from, the coordinator's line the evidence."""
    failed = coordinator_signals(members).where(F.col("_kind") == "failed")
    names = member_names(members).withColumnRenamed(s.MEMBER_ID, "_member_id")
    named = failed.drop(MEMBER, GENERATION_NOW).join(names, [s.GROUP_ID, "_member_id"], "left")
    client = F.nullif(F.regexp_extract("_member_id", MEMBER_ID_OF_CLIENT, 1), F.lit(""))
    return named.select(
        s.GROUP_ID,
        F.coalesce("_name", "_member_id").alias(MEMBER),
        (F.col("_g") - 1).alias(GENERATION_NOW),
        s.TS,
        F.regexp_extract("_name", r"^([^/]*)/", 1).alias(s.HOST),
        F.coalesce(F.regexp_replace("_name", r"^[^/]*/", ""), client).alias(s.CLIENT_ID),
        F.lit(None).cast("string").alias(s.TASK),
        s.SOURCE_FILE,
        s.LINE,
    ).withColumn(s.HOST, F.nullif(F.col(s.HOST), F.lit("")))


@rows_from(*SESSION_EXPIRED, *COORDINATOR_LINES)
def session_timeout(model: Model) -> DataFrame:
    """The coordinator removed a member whose heartbeats stopped for ``session.timeout.ms``
    (process paused by GC, network partition, heartbeat thread starved), told by the member's
    own lines or by the coordinator's (broker log: also for a member whose log is missing); a
    member that had already left on a poll timeout in the same generation is reported as
    ``poll_timeout``. One frozen past both timeouts (SIGSTOP) is expired first and logs its poll
    timeout only when it runs again: a session timeout."""
    polled = _first_line(_poll_timeout_lines(model.members.where(F.col(MEMBER).isNotNull())), "_polled_at")
    rows = _with_setting(_first_cause(_per_member(_session_expiries(model)), polled, "_polled_at", False), model, "session.timeout.ms")
    return _timeout_finding(
        rows,
        "session_timeout",
        "session.timeout.ms",
        "45000 ms since Kafka 3.0, 10000 ms before",
        "sent no heartbeat the coordinator accepted within session.timeout.ms and was removed",
        "Find what stalled the client (GC pauses, CPU starvation, network); raise session.timeout.ms or use static membership "
        "(group.instance.id) so short outages do not rebalance.",
    )


FENCE_KINDS = (("producer:fenced", "producer"), ("streams:task:migrated", "task migrated"))


def _fence_kind() -> Column:
    rule = F.when(
        (F.col(s.EVENT_TYPE) == "consumer:group:fenced") & F.lower(F.col(s.MESSAGE)).contains("instance"), F.lit("static member")
    ).when((F.col(s.EVENT_TYPE) == "consumer:group:fenced") | epoch_fenced(), F.lit("member epoch"))
    for event, kind in FENCE_KINDS:
        rule = rule.when(F.col(s.EVENT_TYPE) == event, F.lit(kind))
    return rule


@rows_from("consumer:group:fenced", *[event for event, _ in FENCE_KINDS], *FENCED_OR_UNKNOWN)
def fenced(model: Model) -> DataFrame:
    """A zombie was fenced: a producer with an older epoch (``ProducerFencedException``
    under exactly-once), a Streams thread whose tasks migrated while it was out of the group
    (``TaskMigratedException``), or a static member whose ``group.instance.id`` another
    instance took over, or a KIP-848 / KIP-1071 member whose epoch the coordinator fenced (one
    whose session it had expired first is reported as ``session_timeout``: the fencing of its
    epoch is the expiry). A zombie's producer or task fenced after its session expired (frozen
    past ``session.timeout.ms``, then working on for tasks it no longer owned) is reported as
    well: its aborted work is a fact of its own. One finding per member and generation."""
    members = model.members.where(F.col(MEMBER).isNotNull())
    expired = members.where(session_timeout_lines(members)).select(MEMBER, GENERATION_NOW).distinct().withColumn("_expired", F.lit(True))
    zombie = F.col(s.EVENT_TYPE).isin(*[event for event, _ in FENCE_KINDS])
    lines_of = (
        members.where((F.col(s.EVENT_TYPE) == "consumer:group:fenced") | epoch_fenced() | zombie)
        .join(expired, [MEMBER, GENERATION_NOW], "left")
        .where(zombie | F.col("_expired").isNull())
        .drop("_expired")
    )
    rows = _per_member(lines_of, _fence_kind())
    return findings(
        rows,
        "fenced",
        severity="warning",
        verdict="delay",
        group=F.col(s.GROUP_ID),
        task=F.col(s.TASK),
        classification=F.col("_kind"),
        host=F.col(s.HOST),
        member=F.col(MEMBER),
        start=F.col("_at"),
        end=F.col("_at"),
        evidence=lines(F.col("_evidence")),
        explanation=F.format_string(
            "%s was fenced (%s) %s: it had dropped out of group %s while others took over its work; its uncommitted "
            "work was aborted and is redone by the new owner.",
            F.col(MEMBER),
            text(F.col("_kind"), "kind not stated"),
            at(F.col("_at"), place(F.col("_first"))),
            F.coalesce(F.col(s.GROUP_ID), F.lit("(unknown)")),
        ),
        kafka_reference="Zombie fencing: ProducerFencedException (KIP-98, KIP-447), TaskMigratedException, static membership (KIP-345)",
        remedy="Find why the member stalled (poll or session timeout, GC pause); two instances must never share a group.instance.id.",
    )


@rows_from("rebalances")
def rebalance_storm(model: Model) -> DataFrame:
    """At least ``STORM_REBALANCES`` rebalances of a group within ``STORM_WINDOW_S`` seconds:
    the group barely processes. Reported once per storm with its trigger chain and the member
    that joined or left most often (a crash-looping instance, a join/leave loop)."""
    rebalances = model.rebalances.where(F.col("start_ts").isNotNull())
    by_time = Window.partitionBy(s.GROUP_ID).orderBy(F.unix_seconds("start_ts")).rangeBetween(0, STORM_WINDOW_S)
    dense = rebalances.withColumn("_dense", F.count(F.lit(1)).over(by_time) >= STORM_REBALANCES)
    covering = Window.partitionBy(s.GROUP_ID).orderBy(F.unix_seconds("start_ts")).rangeBetween(-STORM_WINDOW_S, 0)
    covered = dense.withColumn("_in", F.max(F.col("_dense").cast("int")).over(covering) == 1)
    ordered = Window.partitionBy(s.GROUP_ID).orderBy("start_ts", s.GENERATION)
    islands = covered.withColumn(
        "_island", F.sum((F.col("_in") != F.coalesce(F.lag("_in").over(ordered), F.lit(False))).cast("int")).over(ordered)
    ).where(F.col("_in"))
    movers = F.explode(F.array_union(F.coalesce(F.col("members_joined"), F.array()), F.coalesce(F.col("members_left"), F.array())))
    churn = islands.select(s.GROUP_ID, "_island", movers.alias("_mover")).groupBy(s.GROUP_ID, "_island", "_mover").count()
    top = churn.groupBy(s.GROUP_ID, "_island").agg(latest(F.struct("_mover", "count"), "count", "_mover").alias("_top"))
    storms = (
        islands.groupBy(s.GROUP_ID, "_island")
        .agg(
            F.count(F.lit(1)).alias("_count"),
            F.min("start_ts").alias("_start"),
            F.max("end_ts").alias("_end"),
            F.min(s.GENERATION).alias("_first"),
            F.max(s.GENERATION).alias("_last"),
            F.array_sort(F.collect_list(F.struct(s.GENERATION, "trigger"))).alias("_triggers"),
            F.collect_list(line("start_file", "start_line")).alias("_evidence"),
        )
        .join(top, [s.GROUP_ID, "_island"], "left")
    )
    chain = F.concat_ws(
        "; ", F.transform("_triggers", lambda t: F.concat(F.lit("gen "), t[s.GENERATION].cast("string"), F.lit(": "), t["trigger"]))
    )
    return findings(
        storms,
        "rebalance_storm",
        severity="warning",
        verdict="delay",
        group=F.col(s.GROUP_ID),
        member=F.col("_top._mover"),
        start=F.col("_start"),
        end=F.col("_end"),
        evidence=lines(F.col("_evidence")),
        explanation=F.format_string(
            "Group %s rebalanced %d times in %d s (generations %d to %d; threshold %d within %d s)%s. Triggers: %s.",
            F.col(s.GROUP_ID),
            F.col("_count"),
            (F.unix_seconds("_end") - F.unix_seconds("_start")).cast("int"),
            F.col("_first"),
            F.col("_last"),
            F.lit(STORM_REBALANCES),
            F.lit(STORM_WINDOW_S),
            F.when(
                F.col("_top._mover").isNotNull(),
                F.format_string("; %s joined or left %d of them", F.col("_top._mover"), F.col("_top.count")),
            ).otherwise(F.lit("")),
            chain,
        ),
        kafka_reference="Rebalance triggers: member join/leave, session.timeout.ms, max.poll.interval.ms; static membership (KIP-345)",
        remedy="Stop the member that keeps joining and leaving (crash loop, failing health check); use static membership "
        "(group.instance.id) and cooperative-sticky assignment so restarts do not stop the whole group.",
    )
