"""Parse: Kafka log records -> typed events in ``schema.EVENTS_SCHEMA``, by the catalogue.

The catalogue is applied as data: literal tables in the query plan, which need no Spark job to
be shipped. Each record looks up the templates of the message's first word and the logger's
class name (``gate_candidates``; templates whose first word is not fixed are candidates for
every record of their loggers; a record whose layout names no logger, for every template of its
word but those that need their logger, ``Template.needs_logger``). Each candidate pair is
tested with its literal gate (a plain substring test), then one regex both tests it and
extracts all its fields; the first template that matches wins, multi-line templates before the
others and then in catalogue order (``catalogue.precedence``). Rows are sorted by template within each partition before the
regexes, so Spark compiles each pattern once per partition, not once per row. Records that
no template matches are Kafka lines the catalogue does not know: counted, never dropped.
"""

from __future__ import annotations

import json
import zlib
from functools import lru_cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .. import schema as s
from ..catalogue import Template, first_word, load_catalogue, precedence
from ..layouts._common import FRANZ_GO_MESSAGE, GO_RUBY_OPENINGS, SEP, contains_any
from ..spark import built_once, materialise
from . import fields as f
from .prefix import with_split_prefix

ANY_WORD = "\u0002any"
"""Join token of templates whose messages do not start with a fixed word."""

CAPTURED = "\u0003"
"""Marks a field the template captures, so that an empty capture (an empty partition list)
differs from a field the template does not have."""


def _replacement(template: Template) -> str:
    number = dict(template.groups)
    return SEP.join(f"{CAPTURED}${number[name]}" if name in number else "" for name in s.CATALOGUE_FIELDS)


GATE_BUCKETS = 4096
"""Buckets of the gates' literal hash table (``gate_candidates``): eight times the catalogue's
join keys or so, so that a bucket holds about one key."""


def catalogue_column(name: str, templates: tuple[Template, ...]) -> Column:
    """Template ``name`` (``key``, ``event_type``, ``versions``, ``extraction``, ``replacement``)
    of each row's template, looked up by ``t_order``
    (``catalogue.precedence``) in a literal array."""
    values, ddl = _catalogue_values(templates)[name]
    return _literal(values, f"array<{ddl}>")[F.col("t_order")]


@lru_cache(maxsize=4)
def _catalogue_values(templates: tuple[Template, ...]) -> dict[str, tuple[str, str]]:
    """Each template field ``catalogue_column`` reads: its values in precedence order as JSON,
    its type."""
    ordered = [t for _, t in precedence(templates)]
    return {
        "key": (json.dumps([t.key for t in ordered]), "string"),
        "event_type": (json.dumps([t.event_type for t in ordered]), "string"),
        "versions": (json.dumps([t.versions for t in ordered]), "string"),
        "extraction": (json.dumps([f"(?:{t.pattern})[\\s\\S]*" for t in ordered]), "string"),
        "replacement": (json.dumps([_replacement(t) for t in ordered]), "string"),
    }


@built_once
def _literal(text: str, ddl: str) -> Column:
    """The JSON ``text`` as a literal of type ``ddl``: one call into the JVM however large the
    value, which Spark's optimiser folds into a constant (``ConstantFolding``)."""
    return F.from_json(F.lit(text), ddl)


GATE_FIELDS = "t_word string, t_logger string, t_order int, t_gate string, t_gate_at_start boolean, t_multiline boolean"


def gate_candidates(token: Column, logger: Column, templates: tuple[Template, ...]) -> Column:
    """The gates (``GATE_FIELDS``) of the templates whose first word is ``token`` and that allow
    ``logger``: one row per template and logger class it allows (and one with logger "" for
    records whose layout names none), looked up in a literal hash table of ``GATE_BUCKETS``
    buckets by the CRC-32 of the key, which Python and Spark compute alike: a broadcast join
    against a table of the gates would cost a Spark job per analysis to build the broadcast."""
    bucket = F.crc32(_gate_key(token, logger)) % GATE_BUCKETS
    entries = _literal(_gate_buckets(templates), f"array<array<struct<{GATE_FIELDS}>>>")[bucket]
    return F.filter(entries, lambda gate: (gate["t_word"] == token) & (gate["t_logger"] == logger))


def _gate_key(word, logger):
    """The key of a template's gate: its first word and a logger class (Columns or strings)."""
    if isinstance(word, str):
        return f"{word}\u0001{logger}"
    return F.concat(word, F.lit("\u0001"), logger)


@lru_cache(maxsize=4)
def _gate_buckets(templates: tuple[Template, ...]) -> str:
    """The gates in ``GATE_BUCKETS`` buckets by ``_gate_key``, as JSON. (Derived from the patterns
    once per catalogue: ``first_word`` parses each pattern.)"""
    buckets: list[list[dict]] = [[] for _ in range(GATE_BUCKETS)]
    for order, t in precedence(templates):
        word = first_word(t) or ANY_WORD
        for logger in t.loggers if t.needs_logger else ("", *t.loggers):  # "": a record that names no logger
            gate = {
                "t_word": word,
                "t_logger": logger,
                "t_order": order,
                "t_gate": t.gate,
                "t_gate_at_start": t.gate_at_start,
                "t_multiline": t.multiline,
            }
            buckets[zlib.crc32(_gate_key(word, logger).encode()) % GATE_BUCKETS].append(gate)
    return json.dumps(buckets)


FRANZ_GO_LOGGER = "kgo"
"""The logger franz-go's templates name: Go logs write none of their own, and the name of a zap or
slog logger that wrote a franz-go line is the application's."""


GO_RUBY_WORDS = ("roup", "client/coordinator ", "consumer/broker/", "}:] ")
"""A piece of every ``GO_RUBY_OPENINGS`` text: substring scans before its regex."""


def prepare_records(records: DataFrame) -> DataFrame:
    """Records with the prefix split off (``_prefix``, the message proper in ``_prefix.rest``)
    and the logger's class name (``_logger_name``: librdkafka's facility where an application's
    logger wrote its line, ``FRANZ_GO_LOGGER`` for a franz-go group line, none for a Go or Ruby
    client's group line, whatever name the application's logger gave it: ``_common.GO_RUBY_OPENINGS``)."""
    s.validate_columns(records, s.RECORDS_SCHEMA.fieldNames(), "parse")
    message = F.col(s.MESSAGE)
    franz_go = F.when(message.contains("; ") & message.rlike(f"^{FRANZ_GO_MESSAGE}"), F.lit(FRANZ_GO_LOGGER))
    go_ruby = F.when(contains_any(message, GO_RUBY_WORDS) & message.rlike(f"^(?:{GO_RUBY_OPENINGS})"), F.lit(""))
    return with_split_prefix(records, message, "_prefix").withColumn(
        "_logger_name", F.coalesce(F.col("_prefix.facility"), franz_go, go_ruby, f.class_name(F.col(s.LOGGER)), F.lit(""))
    )


def _target() -> Column:
    """What a template's regex reads: the message proper, or its first line."""
    return F.when(F.col("t_multiline"), F.col("_rest")).otherwise(F.col("_first_line"))


def match_records(records: DataFrame, templates: tuple[Template, ...] | None = None) -> DataFrame:
    """Each record that some template matches, with its first matching template's columns and
    its captures (``_cap``, in ``CATALOGUE_FIELDS`` order).

    The regexes run on narrow rows (record id, template order, target text): the record's other
    columns (its prefix without the message proper) and the template's long strings join back
    only to the winners.
    """
    templates = templates or load_catalogue()
    prepared = materialise(prepare_records(records).withColumn("_rid", F.monotonically_increasing_id()))
    first_line = F.substring_index(F.col("_prefix.rest"), "\n", 1)
    word = F.substring_index(first_line, " ", 1)
    tokens = prepared.select(
        "_rid",
        "_logger_name",
        F.col("_prefix.rest").alias("_rest"),
        first_line.alias("_first_line"),
        F.explode(F.array(word, F.lit(ANY_WORD))).alias("_token"),
    )
    gates = tokens.select("*", F.explode(gate_candidates(F.col("_token"), F.col("_logger_name"), templates)).alias("_gate"))
    target = _target()
    gate_ok = F.when(F.col("t_gate_at_start"), target.startswith(F.col("t_gate"))).otherwise(target.contains(F.col("t_gate")))
    candidates = gates.select("_rid", "_rest", "_first_line", "_gate.*").where(gate_ok)
    # In template order within each partition, so that Spark compiles each pattern once per
    # partition. Patterns are anchored and the extraction runs to the end of the text, so a
    # match turns the whole text into the replacement (separators and capture marks), and no
    # match leaves it as it was. The test of a match is left to the aggregation (``min_by``
    # passes over null orders): a filter on it would be pushed below the sort, the regex with it.
    in_template_order = candidates.select("_rid", "t_order", target.alias("_target")).sortWithinPartitions("t_order")
    extraction, replacement = (catalogue_column(name, templates) for name in ("extraction", "replacement"))
    extracted = in_template_order.select(
        "_rid", "t_order", "_target", F.regexp_replace("_target", extraction, replacement).alias("_cap_text")
    )
    matched = F.col("_cap_text") != F.col("_target")
    winners = (
        extracted.groupBy("_rid")
        .agg(
            F.min_by(F.when(matched, F.col("_cap_text")), F.when(matched, F.col("t_order"))).alias("_cap_text"),
            F.min(F.when(matched, F.col("t_order"))).alias("t_order"),
        )
        .where(F.col("t_order").isNotNull())
    )
    # the message proper (``_prefix.rest``) served the regexes: the wide side of this join,
    # shuffled, carries the message once
    record = prepared.withColumn("_prefix", F.col("_prefix").dropFields("rest")).drop("_logger_name")
    template = [catalogue_column(name, templates).alias(f"t_{name}") for name in ("key", "event_type", "versions")]
    return (
        record.join(winners, "_rid")
        .select("*", *template)
        .withColumn("_cap", F.split("_cap_text", SEP, len(s.CATALOGUE_FIELDS)))
        .drop("_rid", "_cap_text")
    )


PARTITION_LISTS = (s.PARTITIONS, "added_partitions", "revoked_partitions", "owned_partitions")
"""The captures that are lists of partitions, parsed by one ``fields.partition_list`` over the
array of the four (``partition_lists``) instead of one each: its expression reads every client's
notation, and Spark analyses and optimises it once, not four times."""


def _captured(name: str) -> Column:
    """The text a template captured as ``name`` (``_cap``: CAPTURED and the text; else null)."""
    i = s.CATALOGUE_FIELDS.index(name)
    return F.when(F.col("_cap")[i].startswith(CAPTURED), F.expr(f"substring(_cap[{i}], 2)"))


@built_once
def partition_lists() -> Column:
    """``_partition_lists``: the ``PARTITION_LISTS`` captures parsed (``fields.partition_list``),
    in that order; ``typed_fields`` reads them. Built once (``spark.built_once``): the parser alone
    takes hundreds of calls into the JVM."""
    return F.transform(F.array(*map(_captured, PARTITION_LISTS)), f.partition_list).alias("_partition_lists")


@built_once
def typed_fields() -> tuple[Column, ...]:
    """EVENT_FIELDS columns from the captures (``_cap``), the parsed partition lists
    (``_partition_lists``) and the prefix (``_prefix``), built once (``spark.built_once``)."""
    cap = {name: F.nullif(_captured(name), F.lit("")) for name in s.CATALOGUE_FIELDS if name not in PARTITION_LISTS}
    parsed = {name: F.col("_partition_lists")[i] for i, name in enumerate(PARTITION_LISTS)}
    prefix = F.col("_prefix")
    single_changelog = F.when(cap["changelog"].rlike(f.TOPIC_PARTITION) & ~cap["changelog"].contains(","), cap["changelog"])
    tp = F.coalesce(cap["topic_partition"], single_changelog)
    values = {
        s.CLIENT_ID: F.coalesce(cap["client_id"], prefix["client_id"], F.col(s.CLIENT)),
        s.GROUP_ID: F.coalesce(cap["group_id"], f.null_group(prefix["group_id"])),
        s.INSTANCE_ID: F.coalesce(cap["instance_id"], prefix["instance_id"]),
        s.MEMBER_ID: cap["member_id"],
        s.GENERATION: cap["generation"].try_cast("int"),
        "protocol": cap["protocol"],
        "leader_id": cap["leader_id"],
        "transactional_id": F.coalesce(cap["transactional_id"], prefix["transactional_id"]),
        "state_updater": prefix["state_updater"],
        s.TASK: F.coalesce(cap["task"], prefix["task"]),
        "store": cap["store"],
        "changelog": cap["changelog"],
        s.TOPIC: F.coalesce(f.topic_of(tp), cap["topic"]),
        s.PARTITION: F.coalesce(f.partition_of(tp), cap["partition"].try_cast("int")),
        s.OFFSET: cap["offset"].try_cast("long"),
        "offset_epoch": cap["offset_epoch"].try_cast("int"),
        "end_offset": cap["end_offset"].try_cast("long"),
        "records": cap["records"].try_cast("long"),
        **parsed,
        "strategy": f.reset_strategy(cap["strategy"]),
        "reason": cap["reason"],
        "error": cap["error"],
        "state_from": cap["state_from"],
        "state_to": cap["state_to"],
        "coordinator": F.coalesce(cap["coordinator"], F.concat(prefix["coordinator_topic"], F.lit("-"), prefix["coordinator_partition"])),
        "producer_id": cap["producer_id"].try_cast("long"),
        "producer_epoch": cap["producer_epoch"].try_cast("int"),
        "epoch": cap["epoch"].try_cast("int"),
        "config_kind": cap["config_kind"],
        "member_count": cap["member_count"].try_cast("int"),
        "task_role": F.when(prefix["task"].isNotNull(), F.when(prefix["standby"].isNotNull(), F.lit("standby")).otherwise(F.lit("active"))),
    }
    return tuple(values[field.name].cast(s.as_ddl(field.dataType)).alias(field.name) for field in s.EVENT_FIELDS.fields)


def parse_events(records: DataFrame, templates: tuple[Template, ...] | None = None) -> DataFrame:
    """Typed events (``schema.EVENTS_SCHEMA``) of the records a catalogue template matches.

    ``thread`` is the Streams thread of the ``stream-thread [..]`` prefix when there is one,
    else the layout's thread.
    """
    matched = match_records(records, templates)
    thread = F.coalesce(F.col("_prefix.stream_thread"), F.col(s.THREAD))
    provenance = [thread.alias(name) if name == s.THREAD else F.col(name) for name in s.RECORDS_SCHEMA.fieldNames() if name != s.MESSAGE]
    return matched.select("*", partition_lists()).select(
        F.col("t_event_type").alias(s.EVENT_TYPE),
        F.col("t_key").alias(s.TEMPLATE_ID),
        F.col("t_versions").alias(s.KAFKA_VERSIONS),
        *provenance,
        *typed_fields(),
        F.col(s.MESSAGE),
    )


__all__ = ["catalogue_column", "gate_candidates", "match_records", "parse_events", "prepare_records"]
