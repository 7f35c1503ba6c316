"""The analysis behind ``forensics analyze``: one function from paths to the JSON contract.

The JSON's field names are a stable contract (``inputs``, ``accounting``, ``events_by_type``,
``config``, ``rebalances``, ``findings``, ...): later stages add fields, never rename or drop.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable, Iterator, Mapping, TextIO

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from . import contract as c
from . import schema as s
from .contract import Rows, materialised, write_json
from .detect import detect, ordered_findings
from .events import parse_events
from .events.config import RELEVANT_SETTINGS, config_table
from .ingest import InputFile, Inputs, ingest_files, route_inputs, text_bytes
from .model import Model, build_model
from .offsets import OffsetDumps, read_offsets_accounted, sniff_file
from .package import __version__
from .recovery import facts_of, recovery_for
from .recovery.facts import FACT_FIELDS, FACT_KINDS, FACT_SETTINGS
from .recovery.planning import DAMAGE_VERDICTS
from .spark import (
    IN_THE_DRIVER,
    INTERPRETED,
    ONE_PARTITION,
    TableReads,
    built_once,
    concurrently,
    counting_jobs,
    in_step_with_cores,
    known_empty,
    materialise,
    materialise_observed,
    releasing_checkpoints,
    room_to_run_at_once,
    scratch_checkpoints,
    sql_settings,
)

UNRECOGNISED_SAMPLES = 20
SMALL_INCIDENT_BYTES = 8 * 1024 * 1024
"""Up to this many bytes of input an analysis runs as a small incident (``SMALL_INCIDENT``)."""
SMALL_INCIDENT = {**INTERPRETED, **ONE_PARTITION, **IN_THE_DRIVER}
"""How a small incident runs: interpreted (no code to compile per stage), in one partition
(few exchanges, so few stages and jobs), its tables kept in the driver; see ``spark``."""
FEW_EVENTS = 1_000_000
"""Up to this many events and offset dump rows, the model and the detectors of an incident
too large to run as a small one still run in one partition (``ONE_PARTITION``, with generated
code): a few jobs instead of one per adaptive query stage. The model is a chain of windows and
joins over the whole event table, which gains nothing from more partitions."""


def analyze(
    spark: SparkSession,
    paths: Iterable[str] = (),
    offsets: Iterable[str] = (),
    tz: str = "UTC",
    hosts: Mapping[str, str] | None = None,
    tz_by_source: Mapping[str, str] | None = None,
    layout: str | None = None,
    columns: Mapping[str, str] | None = None,
    json_to: TextIO | None = None,
    inputs: Inputs | None = None,
) -> dict:
    """Analyse log files ``paths`` and offset dumps ``offsets``; return the JSON-ready result.
    ``layout``: the user's layout pattern, tried before the built-in layouts; ``columns``: the
    roles of an export's columns (``--columns``). ``spark.jobs`` in the result counts the Spark
    jobs the analysis ran (``spark.counting_jobs``); a small incident runs as ``SMALL_INCIDENT``.

    ``json_to``: a text handle the JSON is written to as the analysis runs
    (``contract.write_json``). The rows of the model tables (``ROW_LISTS``) are then streamed,
    never held whole: the driver's memory does not grow with them (``spark.TableReads``: on a
    local master written to files by one Spark job; a small incident's few rows read together,
    in one job; elsewhere one partition at a time).
    The result returned holds those lists as ``contract.Rows``, read again at each use
    until the next analysis on the session starts (which releases this one's checkpoints;
    without ``json_to`` they are released as the analysis ends: ``spark.releasing_checkpoints``).

    ``inputs``: the log files and dumps already routed (``ingest.route_inputs``, as the CLI does
    before Spark starts), in place of ``paths`` and ``offsets`` and their options."""
    if inputs is None:
        inputs = route_inputs(paths, offsets, sniff_file, hosts, tz, tz_by_source)
    small = SMALL_INCIDENT if is_small_incident(inputs.files) else {}
    with releasing_checkpoints(spark, keep=json_to is not None), counting_jobs(spark) as jobs, sql_settings(spark, small):
        result = _analysis_of(spark, inputs.logs, inputs.dumps, layout, columns)
        if c.contract_checked():
            result = c.checked(result)
        if json_to is None:
            result = materialised(result)
        else:
            write_json(_counted(result, jobs), json_to)
    result["spark"]["jobs"] = jobs()
    return result


def _counted(result: dict, jobs) -> Iterator[tuple[str, object]]:
    """The fields of ``result`` in order; ``spark``, the last, with the jobs run up to it
    (reading the rows included)."""
    for key, value in result.items():
        if key == "spark":
            value["jobs"] = jobs()
        yield key, value


def is_small_incident(files: list[InputFile]) -> bool:
    """Whether ``files`` (local, sizes known) hold at most ``SMALL_INCIDENT_BYTES`` of text."""
    text = text_bytes(files)
    return text is not None and text <= SMALL_INCIDENT_BYTES


def _analysis_of(spark, logs, dumps, layout, columns) -> dict:
    """The analysis of resolved log files ``logs`` and offset dumps ``dumps``; the model and
    the detectors in one partition if the events are few (``FEW_EVENTS``). The logs and the
    dumps are read at once (``spark.concurrently``)."""
    dump_paths = [d.path for d in dumps if not d.problem]

    def logs_read():
        with scratch_checkpoints(spark) as keep:  # ingested.records is released with the block: read it inside
            ingested = ingest_files(spark, logs, layout, columns)
            events, by_type = _events_counted(ingested.records)
            events = keep(events)
            unmatched = ingested.accounting[s.RECORDS] > sum(by_type.values())
            unrecognised = _unrecognised(ingested.records, events) if unmatched else []
        return ingested, events, by_type, unrecognised

    def dumps_read():
        read = read_offsets_accounted(spark, dump_paths) if dump_paths else None
        return (read.table if read else None), _offsets_summary(read)

    # parse under ingest's shuffle settings (the same logs decide them); the model and the detectors as before
    with sql_settings(spark, in_step_with_cores(spark, text_bytes(logs))):
        (ingested, events, by_type, unrecognised), (offsets_table, offsets) = concurrently(spark, logs_read, dumps_read)
    rows = sum(by_type.values()) + offsets["rows"]
    model_settings, at_once = ONE_PARTITION if rows <= FEW_EVENTS else {}, room_to_run_at_once(spark, rows)
    reads = TableReads(spark, model_settings, at_once)  # the model's tables are read as they were built
    with sql_settings(spark, model_settings):
        model = build_model(events, offsets_table, frozenset(by_type), at_once=at_once)
        # each loss or duplication with the facts its recovery plan reads, joined in this mode
        findings = _with_recovery_facts(materialise(detect(model)), model)
        findings = findings if reads.reads_once else materialise(findings)
    accounting = dict(ingested.accounting)
    accounting[s.EVENTS] = sum(by_type.values())
    accounting[s.UNRECOGNISED_KAFKA] = accounting[s.RECORDS] - accounting[s.EVENTS]
    inputs = [{"kind": "log", **entry} for entry in ingested.inputs] + [
        {"kind": "offsets", "path": d.path, "host": d.host, "problem": d.problem} for d in dumps
    ]
    return {
        "tool_version": __version__,
        "contract_version": c.CONTRACT_VERSION,
        "inputs": inputs,
        "accounting": accounting,
        "events_by_type": dict(sorted(by_type.items())),
        "config": _config(reads, model.settings),
        "offsets": offsets,
        "unparsed_samples": ingested.unparsed_samples,
        "host_overlaps": ingested.host_overlaps,
        "unrecognised_kafka_samples": unrecognised,
        "clock_skew": _json_rows(reads, model.clock_skew.orderBy(s.HOST)),
        "rebalances": _rebalances(reads, model),
        "ownership": _ownership(reads, model),
        "restores": _rows(reads, model.restores.orderBy("opened_ts", "host", "thread", s.TASK, "changelog"), _structs_as_arrays),
        "commits": _json_rows(reads, _commits(model.commits)),
        "findings": _rows(reads, ordered_findings(findings), _planned(inputs)),
        "spark": {"master": _master(spark), "version": spark.version},
    }


def _events_counted(records: DataFrame) -> tuple[DataFrame, dict[str, int]]:
    """The events parsed from ``records``, materialised, and their number per event type:
    counted by the job that keeps them in a small incident (``spark.materialise_observed``),
    each type of the catalogue (``schema.EVENT_TYPES``) by a test of its own, else by a job of
    their own."""
    events, observed = materialise_observed(parse_events(records), _counts_by_type())
    if observed is not None and sum(observed[t] for t in s.EVENT_TYPES) == observed[_ALL_EVENTS]:
        return events, {event_type: observed[event_type] for event_type in s.EVENT_TYPES if observed[event_type]}
    return events, {row[s.EVENT_TYPE]: row["count"] for row in events.groupBy(s.EVENT_TYPE).count().collect()}


@built_once
def _counts_by_type() -> tuple[Column, ...]:
    """The aggregates ``_events_counted`` observes, named: a count per event type of the
    catalogue and the count of all events, built once (``spark.built_once``: each is a few
    calls into the JVM)."""
    counts = {**{event_type: F.count_if(F.col(s.EVENT_TYPE) == event_type) for event_type in s.EVENT_TYPES}, _ALL_EVENTS: F.count(F.lit(1))}
    return tuple(count.alias(name) for name, count in counts.items())


_ALL_EVENTS = "all"
"""The name of the events' count in ``_events_counted``'s observation (each event type's name
holds a colon)."""


ROW_LISTS = ("config", "clock_skew", "rebalances", "ownership", "restores", "commits", "findings")
"""The result's lists of model table rows: written row by row with ``json_to``."""


def _rows(reads: TableReads, frame: DataFrame, convert: Callable[[dict], dict]) -> Rows:
    """The rows of a model table (``frame``, ordered) as dicts that Python finishes (``convert``):
    each parsed from the JSON text Spark makes of it (``_json_rows``), at each use."""
    parsed = _json_rows(reads, frame)
    return Rows(lambda: (convert(row) for row in parsed))


def _structs_as_arrays(row: dict) -> dict:
    """A ``restores`` row as its JSON has always held it: each struct as the array of its values
    (its evidence lines as ``[file, line]``)."""

    def values(value):
        if isinstance(value, dict):
            return [values(inner) for inner in value.values()]
        return [values(inner) for inner in value] if isinstance(value, list) else value

    return {name: values(value) for name, value in row.items()}


JSON_TEXT = {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", "timeZone": "UTC", "ignoreNullFields": "false"}
"""Spark's ``to_json`` options for a row as the JSON holds it: times (nested ones too) in ISO
8601, UTC, to the millisecond, and null fields written, not left out."""


def _json_rows(reads: TableReads, frame: DataFrame) -> Rows:
    """The rows of a model table (``frame``, ordered, with the JSON's columns) as JSON text made
    by Spark, a struct as an object, read as ``_rows`` reads them: Python then never converts
    Spark's rows to dicts and those to JSON, row by row."""
    return Rows(texts=reads.texts_of(frame.select(_json_text(frame.columns))))


def _json_text(columns) -> F.Column:
    """A row's ``columns`` as the JSON text of an object (``JSON_TEXT``)."""
    return F.to_json(F.struct(*[F.col(name) for name in columns]), JSON_TEXT)


def _config(reads: TableReads, settings: DataFrame) -> Rows:
    """``config``: one entry per client config block with its ``RELEVANT_SETTINGS``, in key order."""
    return _json_rows(reads, config_table(settings, RELEVANT_SETTINGS))


COMMIT_ORDER = (s.GROUP_ID, s.TOPIC, s.PARTITION, "sequence")
"""The order of ``commits``: each partition's commit history in its order (see ``model.commits``)."""


def _commits(commits: DataFrame) -> DataFrame:
    """``commits``, in ``COMMIT_ORDER``."""
    return commits.orderBy(*COMMIT_ORDER)


RECOVERY_FACTS = "recovery_facts"
"""A column of the findings as read for the JSON, dropped from it: ``_with_recovery_facts``."""
FACT_TABLES = ("config", "ownership", "commits")
"""The lists of the result whose rows ``recovery.facts_of`` reads (with ``inputs``)."""


def _with_recovery_facts(findings: DataFrame, model: Model) -> DataFrame:
    """``findings`` with ``RECOVERY_FACTS``: on each loss or duplication, the rows of the result
    that ``recovery.facts_of`` reads about it, as JSON text in the result's order: ``config``, its
    group's config blocks (``FACT_SETTINGS``); ``ownership``, its group's topics and hosts;
    ``commits``, its partition's commits of ``FACT_KINDS`` (any group's: a reset to the earliest
    offset shows the log start). Each plan is then made as its finding is read, and the driver
    never holds the facts of every group at once, which on a large incident are many Python
    objects. Findings known to be none get the column with no join planned."""
    if known_empty(findings):
        return findings.withColumn(RECOVERY_FACTS, F.lit(None).cast(f"struct<{','.join(f'{n}:array<string>' for n in FACT_TABLES)}>"))
    damage = findings.where(F.col(s.VERDICT).isin(*DAMAGE_VERDICTS))
    groups = damage.select(F.col(s.GROUP_ID).alias("named")).distinct()
    partitions = damage.where(F.col(s.TOPIC).isNotNull() & F.col(s.PARTITION).isNotNull()).select(s.TOPIC, s.PARTITION).distinct()

    def texts_by(frame: DataFrame, fields, keys: list[str], order, name: str) -> DataFrame:
        """``frame``'s rows as JSON text of their ``fields``, listed per ``keys`` in ``order``."""
        row = F.struct(F.struct(*order).alias("at"), _json_text(fields).alias("text"))
        listed = frame.groupBy(*keys).agg(F.array_sort(F.collect_list(row)).alias("rows"))
        return listed.select(*keys, F.transform("rows", lambda r: r["text"]).alias(name))

    def of_groups(frame: DataFrame, owner: F.Column) -> DataFrame:
        owned = frame.withColumn("owner", owner)
        return owned.join(F.broadcast(groups), owned["owner"].eqNullSafe(groups["named"]), "left_semi")

    config = config_table(model.settings, FACT_SETTINGS)
    # recovery.facts_of's owner of a block: its group id, or else (none, or empty) its application id
    block_owner = F.when(F.col(s.GROUP_ID) != "", F.col(s.GROUP_ID)).otherwise(F.col("application_id"))
    config = texts_by(of_groups(config, block_owner), config.columns, ["owner"], [s.SOURCE_FILE, s.LINE], "config")
    owners = model.ownership.select(F.col(s.GROUP_ID).alias(c.GROUP), s.TOPIC, s.HOST).distinct()
    owners = texts_by(of_groups(owners, F.col(c.GROUP)), owners.columns, ["owner"], owners.columns, "ownership")
    commits = model.commits.where(F.col("kind").isin(*FACT_KINDS)).join(F.broadcast(partitions), [s.TOPIC, s.PARTITION], "left_semi")
    commits = texts_by(commits, FACT_FIELDS, [s.TOPIC, s.PARTITION], COMMIT_ORDER, "commits")
    joined = (
        findings.join(config, findings[s.GROUP_ID].eqNullSafe(config["owner"]), "left")
        .drop("owner")
        .join(owners, findings[s.GROUP_ID].eqNullSafe(owners["owner"]), "left")
        .drop("owner")
        .join(commits, [s.TOPIC, s.PARTITION], "left")
    )
    facts = F.when(F.col(s.VERDICT).isin(*DAMAGE_VERDICTS), F.struct(*FACT_TABLES))
    return joined.select(*findings.columns, facts.alias(RECOVERY_FACTS))


def _planned(inputs: list[dict]) -> Callable[[dict], dict]:
    """A finding read with ``RECOVERY_FACTS`` -> the finding as the JSON holds it (``group_id`` is
    ``group``) with its ``recovery`` plan instead."""

    def planned(row: dict) -> dict:
        finding = {c.json_name(name): value for name, value in row.items()}
        about = {name: [json.loads(text) for text in texts or []] for name, texts in (finding.pop(RECOVERY_FACTS) or {}).items()}
        return {**finding, "recovery": recovery_for(finding, facts_of({"inputs": inputs, **about}))}

    return planned


def _coordinator_json() -> F.Column:
    """A rebalance's ``coordinator``: what the group coordinator's log states (null without it)."""
    return F.when(
        F.col("coordinator_host").isNotNull(),
        F.struct(
            F.col("coordinator_host").alias("host"),
            F.col("coordinator_partition").alias("partition"),
            F.col("coordinator_start_ts").alias("start"),
            F.col("coordinator_stabilized_ts").alias("stabilized"),
            F.col("coordinator_assignment_ts").alias("assignment_received"),
            F.col("coordinator_reason").alias("reason"),
            F.col("coordinator_member_count").alias("member_count"),
            F.col("coordinator_leader").alias("leader"),
            F.col("coordinator_member_ids").alias("member_ids"),
            F.col("coordinator_joined").alias("joined"),
            F.col("coordinator_left").alias("left"),
            F.struct(F.col("coordinator_file").alias("file"), F.col("coordinator_line").alias("line")).alias("evidence"),
        ),
    )


def _rebalances(reads: TableReads, model: Model) -> Rows:
    """``rebalances``: one entry per group and generation (see ``model.rebalances``); with the
    group coordinator's log, ``trigger_source``, ``coordinator`` and the ``missing_members``
    (``member_id``, ``client_id``) it holds that have no log of their own."""
    table = model.rebalances.orderBy(s.GROUP_ID, s.GENERATION)
    renamed = table.select(
        F.col(s.GROUP_ID).alias(c.GROUP),
        s.GENERATION,
        F.col("start_ts").alias("start"),
        F.col("end_ts").alias("end"),
        "duration_ms",
        "trigger",
        "members",
        F.col("moved").alias("moved_partitions"),
        F.col("joined_ts").alias("joined"),
        "members_joined",
        "members_left",
        "leader",
        "protocol",
        "protocol_type",
        "member_ids",
        "instance_ids",
        F.transform("assignments", lambda a: F.struct(a["member"].alias("member"), a["assigned_ts"].alias("at"))).alias("assignments"),
        F.struct(F.col("start_file").alias("file"), F.col("start_line").alias("line")).alias("evidence"),
        "trigger_source",
        _coordinator_json().alias("coordinator"),
        "missing_members",
        "missing_member_count",
    )
    return _json_rows(reads, renamed)


def _ownership(reads: TableReads, model: Model) -> Rows:
    """``ownership``: one entry per partition and owner interval (see ``model.ownership``)."""
    table = model.ownership.orderBy(s.GROUP_ID, s.TOPIC, s.PARTITION, "from_ts")
    renamed = table.select(
        F.col(s.GROUP_ID).alias(c.GROUP),
        s.TOPIC,
        s.PARTITION,
        s.TASK,
        s.HOST,
        s.CLIENT_ID,
        s.THREAD,
        s.MEMBER_ID,
        s.INSTANCE_ID,
        s.GENERATION,
        F.col("from_ts").alias("from"),
        F.col("to_ts").alias("to"),
        "ended",
        F.struct(F.col(s.SOURCE_FILE).alias("file"), "from_line", "to_line").alias("evidence"),
    )
    return _json_rows(reads, renamed)


def _unrecognised(records: DataFrame, events: DataFrame) -> list[dict]:
    """The first Kafka records no catalogue template matched (to show gaps in the catalogue)."""
    missing = records.join(events.select(s.SOURCE_FILE, s.LINE), [s.SOURCE_FILE, s.LINE], "left_anti")
    rows = missing.orderBy(s.SOURCE_FILE, s.LINE).limit(UNRECOGNISED_SAMPLES).collect()
    return [{"file": r[s.SOURCE_FILE], "line": r[s.LINE], "logger": r[s.LOGGER], "text": r[s.MESSAGE][:500]} for r in rows]


def _offsets_summary(dumps: OffsetDumps | None) -> dict:
    """Rows per dump kind, snapshot times and the line accounting of the offset ``dumps``."""
    if dumps is None:
        return {"rows": 0, "by_kind": {}, "snapshots": [], "accounting": {}}
    return {
        "rows": sum(dumps.by_kind.values()),
        "by_kind": dict(sorted(dumps.by_kind.items())),
        "snapshots": sorted(str(c.in_utc(ts)) for ts in dumps.snapshots),
        "accounting": dumps.accounting,
    }


def _master(spark: SparkSession) -> str:
    try:
        return spark.conf.get("spark.master")
    except Exception:  # Spark Connect sessions may not expose it
        return "spark-connect"
