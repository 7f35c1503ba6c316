"""``FINDINGS_SCHEMA``: the detectors' one output schema (``forensics.detect``), with its
vocabularies (verdicts, severities, how a member is named) and the evidence type."""

from __future__ import annotations

from pyspark.sql.types import ArrayType, BooleanType, IntegerType, LongType, StringType, StructField, StructType, TimestampType

from .events import GROUP_ID, PARTITION, TASK, TOPIC
from .records import HOST, RECORDS

_S, _I, _L, _T, _B = StringType(), IntegerType(), LongType(), TimestampType(), BooleanType()

# Findings: the detectors' one output schema (forensics.detect). Stable JSON field names.
DETECTOR = "detector"
SEVERITY = "severity"
VERDICT = "verdict"
OFFSET_FROM = "offset_from"
OFFSET_TO = "offset_to"
EVIDENCE = "evidence"

VERDICTS = ("loss", "duplication", "delay", "expected")
"""``loss``: records never processed; ``duplication``: records processed twice; ``delay``: the
group stood still or redid work; ``expected``: allowed by the configured delivery guarantee
(or a setting that makes an incident possible), still quantified where it has a range."""
SEVERITIES = ("critical", "warning", "info")

EVIDENCE_LINE = StructType([StructField("file", _S, True), StructField("line", _L, True)])
"""One line of evidence: its file and 1-based line number."""
EVIDENCE_TYPE = ArrayType(EVIDENCE_LINE)

MISSING = "missing"
MISSING_TYPE = StructType([StructField("what", _S), StructField("commands", ArrayType(_S))])
"""What an unmeasured finding lacks (``what``: the offsets or the log end that would measure its
range) and the commands that show it (``kafka-consumer-groups --describe``, ``kafka-dump-log
--offsets-decoder``, ``kafka-get-offsets``), brokers named ``"$BOOTSTRAP_SERVERS"``."""
MEMBER_BASIS = "member_basis"
MEMBER_BASES = ("client id", "host", "file and thread")
"""How a consumer line's member is named: its client id (logged, or inside its member id, its
thread's, its file's), else, where its file names none (kafka-python before 2.x at INFO), its
host, or its file and thread where the host has several such files."""

FINDINGS_SCHEMA = StructType(
    [
        StructField(DETECTOR, _S, False),
        StructField(SEVERITY, _S, False),
        StructField(VERDICT, _S, False),
        StructField(GROUP_ID, _S, True),
        StructField(TOPIC, _S, True),
        StructField(PARTITION, _I, True),
        StructField(TASK, _S, True),
        StructField(OFFSET_FROM, _L, True),
        StructField(OFFSET_TO, _L, True),
        StructField(RECORDS, _L, True),
        StructField("exact", _B, True),
        StructField("classification", _S, True),
        StructField(HOST, _S, True),
        StructField("member", _S, True),
        StructField("start", _T, True),
        StructField("end", _T, True),
        StructField(EVIDENCE, EVIDENCE_TYPE, False),
        StructField("explanation", _S, False),
        StructField("kafka_reference", _S, False),
        StructField("remedy", _S, False),
        StructField(MISSING, MISSING_TYPE, True),
        StructField(MEMBER_BASIS, _S, True),
    ]
)
"""One row per finding. ``offset_from``/``offset_to`` is the half-open range affected and
``records`` its size; ``exact`` true when the range is measured, false when it is only a bound
or, with the range null, unmeasured (the logs prove the event, not its range): ``missing`` then
says what would measure it; ``evidence`` the file and line of every log or dump line that
proves it; ``member_basis`` how ``member`` was named (``MEMBER_BASES``). In the JSON
``group_id`` is ``group``."""
