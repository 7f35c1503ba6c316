"""The contenders of ``performance.py``: the native-Spark references (the issue's table, written as
a careful Spark user would) and the project's own stages, each a function ``(spark, files) ->
count`` that reads every column it produces (``consume``), so that Spark cannot prune the parse
away; ``performance.py`` runs them and checks each count against the corpus's.
"""

from __future__ import annotations

import gzip
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import corpus  # noqa: E402  (benchmarks/corpus.py)

from forensics.ingest.read import ROW_INDEX_MASK  # noqa: E402  (a row index in its partition, low 33 bits)

MARKER = corpus.KAFKA_MARKER
STAMP = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})"
LOG4J = re.compile(r"^\[" + STAMP + r"\] (\w+) (.*) \(([\w.$]+)\)$")
LOGBACK = re.compile(r"^" + STAMP + r" (\w+) +(\S+) +- (.*)$")
LOG4J_SQL = LOG4J.pattern
LOGBACK_SQL = LOGBACK.pattern
TS_FORMAT = "yyyy-MM-dd HH:mm:ss,SSS"


# ---------------------------------------------------------------------------------------------
# Sinks: read every column a contender produces, return its row count.


def consume(frame) -> int:
    """Rows of ``frame``, computed with every column hashed (nothing can be pruned)."""
    from pyspark.sql import functions as F

    row = frame.agg(F.count(F.lit(1)).alias("n"), F.bit_xor(F.xxhash64(*frame.columns)).alias("h")).first()
    return row["n"]


# ---------------------------------------------------------------------------------------------
# Reference approaches (the table), written as a careful Spark user would.


def read_count(spark, files) -> int:
    return spark.read.text(files).count()


def contains_count(spark, files) -> int:
    from pyspark.sql import functions as F

    return spark.read.text(files).where(F.col("value").contains(MARKER)).count()


def python_loop(spark, files) -> int:
    """One Python process: ``in`` prefilter, then the layout regex, fields and timestamp."""
    found = 0
    for path in files:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if MARKER in line:
                    m = LOG4J.match(line.rstrip("\n")) or LOGBACK.match(line.rstrip("\n"))
                    if m and time.strptime(m.group(1)[:19], "%Y-%m-%d %H:%M:%S"):
                        found += 1
    return found


def _native_fields(frame):
    """Kafka lines of either layout as (ts, level, logger, message); non-matching lines dropped."""
    from pyspark.sql import functions as F

    v = F.col("value")
    is_log4j = F.substring(v, 1, 1) == "["
    field = lambda i4, ib: F.when(is_log4j, F.regexp_extract(v, LOG4J_SQL, i4)).otherwise(F.regexp_extract(v, LOGBACK_SQL, ib))  # noqa: E731
    parsed = frame.where(v.contains(MARKER)).select(
        *[c for c in frame.columns if c != "value"],
        F.try_to_timestamp(field(1, 1), F.lit(TS_FORMAT)).alias("ts"),
        field(2, 2).alias("level"),
        field(4, 3).alias("logger"),
        field(3, 4).alias("message"),
    )
    return parsed.where(F.col("ts").isNotNull())


def native_parse(spark, files) -> int:
    return consume(_native_fields(spark.read.text(files)))


def native_parse_lines(spark, files) -> int:
    """The native parse with file and line number, in one pass: one unsplit partition per file,
    so a row's index in its partition is its line number."""
    from pyspark.sql import functions as F

    with _unsplit(spark):
        lines = spark.read.text(files).select(
            F.col("_metadata.file_path").alias("file"),
            (F.monotonically_increasing_id().bitwiseAND(F.lit(ROW_INDEX_MASK)) + 1).alias("line"),
            "value",
        )
        return consume(_native_fields(lines))


class _unsplit:
    def __init__(self, spark):
        self.conf = spark.conf

    def __enter__(self):
        self.saved = {k: self.conf.get(k) for k in ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")}
        for key in self.saved:
            self.conf.set(key, str(1 << 40))

    def __exit__(self, *exc):
        for key, value in self.saved.items():
            self.conf.set(key, value)


def _py_fields(line):
    m = LOG4J.match(line) or LOGBACK.match(line)
    if not m:
        return None
    g = m.groups()
    ts, level, logger, message = (g[0], g[1], g[3], g[2]) if line.startswith("[") else g
    from datetime import datetime

    return (datetime.strptime(ts, "%Y-%m-%d %H:%M:%S,%f"), level, logger, message)


def _udf():
    from pyspark.sql import functions as F

    return F.udf(_py_fields, "struct<ts:timestamp,level:string,logger:string,message:string>", useArrow=False)


def udf_after_prefilter(spark, files) -> int:
    from pyspark.sql import functions as F

    parsed = spark.read.text(files).where(F.col("value").contains(MARKER)).select(_udf()("value").alias("r"))
    return consume(parsed.where(F.col("r").isNotNull()).select("r.*"))


def udf_every_line(spark, files) -> int:
    from pyspark.sql import functions as F

    parsed = spark.read.text(files).select(_udf()("value").alias("r"))
    parsed = parsed.where(F.col("r").isNotNull() & F.col("r.logger").startswith("org.apache.kafka"))
    return consume(parsed.select("r.*"))


# ---------------------------------------------------------------------------------------------
# The project's own stages.


def project_lines(spark, files) -> int:
    """T1: line-level Kafka events with file and line (``ingest.kafka_lines``)."""
    from forensics.ingest import kafka_lines, resolve_inputs

    return consume(kafka_lines(spark, resolve_inputs(files)))


def project_ingest(spark, files) -> int:
    """T2: the full ingest (records stitched, every line accounted for, provenance)."""
    from forensics.ingest import ingest

    result = ingest(spark, files)
    assert sum(result.accounting[b] for b in ("records", "continuations", "irrelevant", "unparsed")) == result.accounting["lines"]
    return consume(result.records)


def project_analysis(spark, files) -> int:
    """T3: ingest, model and every detector, the JSON result written to a file (as
    ``forensics analyze --json`` writes it: the model tables' rows streamed)."""
    from forensics.analyze import analyze

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=True) as out:
        result = analyze(spark, files, json_to=out)
    SPARK_JOBS["T3 analysis"] = result["spark"]["jobs"]
    return result["accounting"]["records"]


SPARK_JOBS: dict[str, int] = {}
"""The Spark jobs of the last run of each contender that counts them (the analysis)."""


REFERENCES = {
    "read.text().count()": read_count,
    "read + contains + count": contains_count,
    "python loop (in + re)": python_loop,
    "native parse": native_parse,
    "native parse + file + line": native_parse_lines,
    "UDF after prefilter": udf_after_prefilter,
    "UDF on every line": udf_every_line,
}
PROJECT = {"T1 kafka_lines": project_lines, "T2 ingest": project_ingest, "T3 analysis": project_analysis}
IN_MAIN = {k: v for k, v in PROJECT.items() if k != "T3 analysis"}
