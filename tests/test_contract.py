"""The JSON result's serializer: ``write_json`` writes what ``json.dump`` writes, with the long
lists (``Rows``) streamed row by row instead of held whole."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone

from forensics.contract import Rows, materialised, write_json


def written(fields) -> str:
    out = io.StringIO()
    write_json(fields, out)
    return out.getvalue()


def test_the_text_is_what_json_dump_writes_with_the_rows_read_into_lists():
    result = {
        "tool_version": "1.0", "accounting": {"lines": 3, "by_reason": {}}, "events": [],
        "rows": Rows(lambda: [{"group": "g", "evidence": {"file": "a.log", "line": 7}, "members": ["m-1", "m-2"]}, {"text": "ünïcode \"quoted\"\n"}]),
        "none": Rows(lambda: []), "at": datetime(2021, 2, 10, 15, 0, tzinfo=timezone.utc), "nested": [[], [{}], {"k": [1, 2]}],
    }
    assert written(result.items()) == json.dumps(materialised(result), indent=2, default=str) + "\n"
    assert written({}.items()) == "{}\n"


def test_rows_are_written_as_they_are_read_and_read_again_at_each_use():
    out = io.StringIO()
    seen = []

    def produce():
        for n in range(3):
            if n:  # the row before was written before this one was asked for
                assert f'"n": {n - 1}' in out.getvalue()
            seen.append(n)
            yield {"n": n}

    rows = Rows(produce)
    write_json([("rows", rows)], out)
    assert json.loads(out.getvalue()) == {"rows": [{"n": 0}, {"n": 1}, {"n": 2}]}
    assert list(rows) == [{"n": 0}, {"n": 1}, {"n": 2}] and seen == [0, 1, 2, 0, 1, 2]


def test_fields_are_read_in_order_so_a_later_one_can_count_what_came_before():
    out = io.StringIO()
    read = []

    def fields():
        yield "rows", Rows(lambda: (read.append(n) or {"n": n} for n in range(2)))
        yield "count", len(read)

    write_json(fields(), out)
    assert json.loads(out.getvalue()) == {"rows": [{"n": 0}, {"n": 1}], "count": 2}


def test_a_long_table_is_read_in_partitions_of_a_few_mb_in_order(spark):
    from pyspark.sql import functions as F

    from forensics.analyze import _rows
    from forensics.spark import TableReads, counting_jobs

    def table():  # about 10 MB once compressed in the shuffle; a new plan at each call
        return spark.range(300_000).select((F.col("id") * 7 % 300_000).alias("n"), F.sha2(F.col("id").cast("string"), 256).alias("h")).orderBy("n")

    queries_with_jobs = spark.sparkContext._jsc.sc().dagScheduler().activeQueryToJobs()
    with counting_jobs(spark) as plain_jobs:
        plain = sum(1 for _ in table().toLocalIterator(True))
    held = queries_with_jobs.size()
    with counting_jobs(spark) as jobs:
        read = [row["n"] for row in _rows(TableReads(spark), table())]
    assert plain == len(read) == 300_000 and read == sorted(read)
    assert jobs() > plain_jobs() + 1  # a job per partition read: more, smaller partitions than the session's up to 64 MB
    assert queries_with_jobs.size() == held  # the scheduler holds none of the reading's jobs (spark.local_rows)
    assert spark.conf.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") != "4m"  # the settings were the reading's alone
