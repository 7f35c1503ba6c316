"""``RECORDS_SCHEMA``: one row per Kafka log record (a first line plus its continuation lines),
the output of ingest and the input of the event parser; the buckets every input line is counted
in, and the reasons a line was not understood."""

from __future__ import annotations

from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

# Record columns (provenance first).
SOURCE_FILE = "source_file"
HOST = "host"
LINE = "line"
LINE_END = "line_end"
LAYOUT = "layout"
TS = "ts"
LEVEL = "level"
LOGGER = "logger"
THREAD = "thread"
CLIENT = "client"
MESSAGE = "message"

RECORDS_SCHEMA = StructType(
    [
        StructField(SOURCE_FILE, StringType(), False),
        StructField(HOST, StringType(), True),
        StructField(LINE, LongType(), False),
        StructField(LINE_END, LongType(), False),
        StructField(LAYOUT, StringType(), False),
        StructField(TS, TimestampType(), True),
        StructField(LEVEL, StringType(), True),
        StructField(LOGGER, StringType(), True),
        StructField(THREAD, StringType(), True),
        StructField(CLIENT, StringType(), True),
        StructField(MESSAGE, StringType(), True),
    ]
)

# Accounting: every input line lands in exactly one bucket.
RECORDS = "records"
CONTINUATIONS = "continuations"
IRRELEVANT = "irrelevant"
UNPARSED = "unparsed"
BUCKETS = (RECORDS, CONTINUATIONS, IRRELEVANT, UNPARSED)

# Reasons a line was not understood.
UNKNOWN_LAYOUT = "unknown layout"
NO_RECORD_TO_CONTINUE = "continuation with no record before it"
BAD_TIMESTAMP = "bad timestamp"
BINARY = "binary data"
UNDECODABLE = "undecodable bytes (not UTF-8)"
MALFORMED_JSON = "malformed JSON record"
UNPARSED_REASONS = (UNKNOWN_LAYOUT, NO_RECORD_TO_CONTINUE, BAD_TIMESTAMP, BINARY, UNDECODABLE, MALFORMED_JSON)
