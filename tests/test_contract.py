"""The JSON result's serializer: ``write_json`` writes JSON with each row of a list on a line of
its own, the long lists (``Rows``) streamed row by row instead of held whole, and Spark's JSON
text of a model table's rows (``analyze._json_rows``) the same as Python's conversion of them."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone

from forensics.contract import Rows, materialised, write_json


def written(fields) -> str:
    out = io.StringIO()
    write_json(fields, out)
    return out.getvalue()


def test_the_text_is_json_with_each_item_of_a_list_on_a_line_of_its_own():
    rows = [{"group": "g", "evidence": {"file": "a.log", "line": 7}, "members": ["m-1", "m-2"]}, {"text": 'ünïcode "quoted"\n'}]
    result = {
        "tool_version": "1.0",
        "accounting": {"lines": 3, "by_reason": {}},
        "events": [],
        "rows": Rows(lambda: rows),
        "none": Rows(lambda: []),
        "inputs": [{"path": "b.log"}],
        "at": datetime(2021, 2, 10, 15, 0, tzinfo=timezone.utc),
        "nested": {"k": [1, 2]},
    }
    text = written(result.items())
    assert json.loads(text) == json.loads(json.dumps(materialised(result), default=str))
    assert text.isascii() and text.endswith("}\n")
    lines = text.splitlines()
    assert "    " + json.dumps(rows[0], separators=(",", ":")) + "," in lines  # grep finds a whole row
    assert '  "accounting": {' in lines and '    "lines": 3,' in lines  # the rest indented as json.dump(indent=2) does
    assert '  "none": [],' in lines and '    {"path":"b.log"}' in lines
    assert written({}.items()) == "{}\n"


def test_rows_of_json_text_are_written_as_they_are_in_ascii_and_parsed_when_read():
    texts = ['{"n":1,"at":"2021-02-10T15:00:00.000Z","e":{"file":"a.log","line":7}}', '{"text":"ünïcode <b>","n":null}']
    rows = Rows(texts=lambda: iter(texts))
    assert list(rows) == [json.loads(t) for t in texts]
    written_text = written([("rows", rows)])
    assert written_text.isascii() and json.loads(written_text) == {"rows": [json.loads(t) for t in texts]}
    assert "    " + texts[0] + "," in written_text.splitlines()  # Spark's text as it is


def test_rows_are_written_as_they_are_read_and_read_again_at_each_use():
    out = io.StringIO()
    seen = []

    def produce():
        for n in range(3):
            if n:  # the row before was written before this one was asked for
                assert f'{{"n":{n - 1}}}' in out.getvalue()
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
    """``TableReads`` reads a long table a partition of a few MB at a time, in order, and the
    scheduler holds none of its jobs (``spark.local_rows``); its jobs, one per partition read, are
    counted by ``benchmarks/job_counts.py``."""
    from pyspark.sql import functions as F

    from forensics.spark import TableReads

    def table():  # about 10 MB once compressed in the shuffle; a new plan at each call
        return (
            spark.range(300_000)
            .select((F.col("id") * 7 % 300_000).alias("n"), F.sha2(F.col("id").cast("string"), 256).alias("h"))
            .orderBy("n")
        )

    queries_with_jobs = spark.sparkContext._jsc.sc().dagScheduler().activeQueryToJobs()
    plain = sum(1 for _ in table().toLocalIterator(True))
    held = queries_with_jobs.size()
    read = [row["n"] for row in TableReads(spark).of(table())()]
    assert plain == len(read) == 300_000 and read == sorted(read)
    assert queries_with_jobs.size() == held  # the scheduler holds none of the reading's jobs (spark.local_rows)
    assert spark.conf.get("spark.sql.adaptive.advisoryPartitionSizeInBytes") != "4m"  # the settings were the reading's alone


def test_a_long_table_kept_in_one_partition_is_read_in_pieces_in_order(spark, monkeypatch):
    """A table kept in one partition (``ONE_PARTITION``, as the model of an incident with few
    events) and read in an order needs no exchange, so it came as one task's result however
    long: ``in_pieces`` splits it into pieces of ``PIECE_ROWS`` rows, in order. A table of other
    partitions, or one piece long, is read as it is; ``one_partition_rows`` counts the rows of
    the tables of one partition (together: ``benchmarks/job_counts.py`` counts the job)."""
    from pyspark.sql import functions as F

    import forensics.spark.results as results_module
    from forensics.spark import ONE_PARTITION, TableReads, in_pieces, materialise, one_partition_rows, sql_settings

    monkeypatch.setattr(results_module, "PIECE_ROWS", 100)
    with sql_settings(spark, ONE_PARTITION):
        kept = materialise(spark.range(1_050).select((F.col("id") * 11 % 1_050).alias("n"), F.col("id").cast("string").alias("text")))
    ordered, short, spread = kept.orderBy(F.desc("n")), kept.where("n < 100").orderBy("n"), spark.range(0, 1_050, 1, 3)
    assert one_partition_rows([ordered, short, spread]) == [1_050, 100, None]
    pieces = in_pieces(ordered, 1_050)
    assert ordered.rdd.getNumPartitions() == 1 and pieces.rdd.getNumPartitions() == 11
    assert pieces.rdd.glom().map(len).collect() == [100] * 10 + [50]
    assert pieces.collect() == ordered.collect()
    assert in_pieces(short, 100) is short and in_pieces(spread, None) is spread
    reads = TableReads(spark)
    read = [[row["n"] for row in reads.of(frame)()] for frame in (ordered, short)]
    assert read == [list(range(1_049, -1, -1)), list(range(100))]


def test_the_json_texts_of_a_results_tables_are_written_together_and_streamed_from_files_in_order(spark):
    """Apart, on a local master, the first read of a table of JSON texts (``_json_rows``) has
    Spark write the texts of every table registered and not written yet, together however long
    they are, and every read streams the files in each table's order; a table registered later
    is written at its own first read, a table spread over partitions too; a text keeps a line
    separator other than a newline; the files go with the result. (The jobs are counted by
    ``benchmarks/job_counts.py``.)"""
    import gc
    import tempfile
    from pathlib import Path

    from pyspark.sql import functions as F

    from forensics.analyze import _json_rows
    from forensics.spark import ONE_PARTITION, TableReads, empty_of, materialise, sql_settings

    odd = "a\u2028b\u0085c\rd ü </script>"
    with sql_settings(spark, ONE_PARTITION):
        kept = materialise(
            spark.range(60_000).select((F.col("id") * 7 % 60_000).alias("n"), F.when(F.col("id") == 5, F.lit(odd)).alias("text"))
        )
    ordered, empty, short = kept.orderBy(F.desc("n")), kept.where("n < 0").orderBy("n"), kept.where("n < 10").orderBy("n")
    spread = spark.range(0, 3_000, 1, 3).select((2_999 - F.col("id")).alias("n")).orderBy("n")
    none = empty_of(spark, kept.schema).orderBy("n")  # known empty (as a producer's log's rebalances)
    scratch = set(Path(tempfile.gettempdir()).glob("forensics-result-*"))
    reads = TableReads(spark, ONE_PARTITION)
    tables = [_json_rows(reads, frame) for frame in (ordered, empty, none, short)]
    first = [json.loads(text) for text in tables[0].texts()]
    (written,) = set(Path(tempfile.gettempdir()).glob("forensics-result-*")) - scratch
    assert len(list(written.iterdir())) == 1  # every table registered, in one write
    again = [list(rows) for rows in tables]
    assert first == again[0] and [row["n"] for row in first] == list(range(59_999, -1, -1))
    assert [row["text"] for row in first if row["text"] is not None] == [odd]
    assert again[1] == again[2] == [] and [row["n"] for row in again[3]] == list(range(10))
    late = _json_rows(reads, spread)
    assert [row["n"] for row in late] == list(range(3_000))
    assert [list(rows) for rows in tables] == again and len(list(late)) == 3_000
    assert len(list(written.iterdir())) == 2  # the late table's own write
    del reads, tables, late
    gc.collect()
    assert not written.exists()


def test_the_written_tables_of_a_process_that_is_gone_are_removed(tmp_path):
    """A result's directory is named after its process (host and PID namespace, and id); one left by a
    process that is gone (a killed analysis) is removed before a new one is made; one of a
    running process is kept, and so are one of another host or namespace and one of another name."""
    import os
    import subprocess
    import sys

    from forensics.spark import RESULT_PREFIX, remove_orphaned_results
    from forensics.spark.results import _process_id

    space, pid = _process_id().split("-")
    assert pid == str(os.getpid()) and len(space) == 12 and _process_id() == f"{space}-{pid}"
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    gone = tmp_path / f"{RESULT_PREFIX}{space}-{ended.stdout.strip()}-x1"
    running = tmp_path / f"{RESULT_PREFIX}{space}-{pid}-x2"
    elsewhere = tmp_path / f"{RESULT_PREFIX}{'0' * 12 if space != '0' * 12 else '1' * 12}-{ended.stdout.strip()}-x3"
    other = tmp_path / f"{RESULT_PREFIX}x4"
    for directory in (gone, running, elsewhere, other):
        (directory / "tables-0").mkdir(parents=True)
        (directory / "tables-0" / "part-00000").write_text("0 {}\n")
    remove_orphaned_results(tmp_path)
    assert not gone.exists() and running.exists() and elsewhere.exists() and other.exists()


def test_lines_of_tables_written_side_by_side_are_read_apart(tmp_path):
    """A file of ``written_together`` may hold several tables' lines, in the order of their
    numbers (a union of tables of the same partitioning, read partition by partition): each
    table's lines come back in order, a last line longer than a block read backwards too."""
    from forensics.spark import tagged_lines
    from forensics.spark.results import _first_and_last_numbers

    long = "{" + "x" * 100_000 + "}"
    contents = ["0 {a}\n0 {b}\n2 {c}\n", "0 {d}\n1 {e}\n2 " + long + "\n", "3 {f}\n", ""]
    files = []
    for i, text in enumerate(contents):
        path = tmp_path / f"part-{i:05d}"
        path.write_text(text, encoding="utf-8")
        files.append((path, *_first_and_last_numbers(path)))
    assert [(first, last) for _, first, last in files] == [(0, 2), (0, 2), (3, 3), (0, -1)]
    assert [list(tagged_lines(files, n)) for n in range(5)] == [["{a}", "{b}", "{d}"], ["{e}"], ["{c}", long], ["{f}"], []]


def test_spark_writes_a_tables_rows_as_python_converts_them(spark):
    """Spark's JSON text of a row (``_json_rows``, ``to_json``) and Python's conversion of it
    (``contract.json_value``, as ``detect.findings_json``) give the same values: times in ISO
    8601 UTC to the millisecond, nulls kept, structs as objects, maps in key order. ``restores``
    (``_rows`` with ``_structs_as_arrays``) keeps its structs as arrays, as Python's plain
    ``Row.asDict`` wrote them."""
    from forensics import contract as c
    from forensics.analyze import _json_rows, _rows, _structs_as_arrays
    from forensics.spark import TableReads

    frame = spark.sql(
        "SELECT 'g-1' AS group, 7L AS generation, TIMESTAMP'2021-02-10 15:40:02.403987Z' AS start, CAST(NULL AS TIMESTAMP) AS end,"
        " CAST(NULL AS STRING) AS trigger, true AS exact, array('m-1', 'ünï \"q\" </script>') AS members,"
        " named_struct('file', 'a.log', 'line', 7) AS evidence, CAST(NULL AS STRUCT<host: STRING>) AS coordinator,"
        " array(named_struct('file', 'a.log', 'line', 8), named_struct('file', CAST(NULL AS STRING), 'line', 9)) AS lines"
    )
    settings = spark.sql("SELECT map_from_entries(array_sort(array(struct('b', '2'), struct('a', '1')))) AS settings")
    reads = TableReads(spark)
    by_spark, mapped = list(_json_rows(reads, frame)), list(_json_rows(reads, settings))
    by_python = [{k: c.json_value(v) for k, v in row.asDict(recursive=True).items()} for row in frame.collect()]
    assert by_spark == by_python
    assert by_spark[0]["start"] == "2021-02-10T15:40:02.403Z" and by_spark[0]["end"] is None and by_spark[0]["coordinator"] is None
    assert mapped == [{"settings": {"a": "1", "b": "2"}}] and list(mapped[0]["settings"]) == ["a", "b"]
    as_arrays = list(_rows(reads, frame, _structs_as_arrays))
    plain = [json.loads(json.dumps({k: c.json_value(v) for k, v in row.asDict().items()})) for row in frame.collect()]
    assert as_arrays == plain
    assert as_arrays[0]["evidence"] == ["a.log", 7] and as_arrays[0]["lines"] == [["a.log", 8], [None, 9]]


STABLE_FINDING_FIELDS = (
    "detector",
    "severity",
    "verdict",
    "group",
    "topic",
    "partition",
    "task",
    "offset_from",
    "offset_to",
    "records",
    "exact",
    "classification",
    "host",
    "member",
    "start",
    "end",
    "evidence",
    "explanation",
    "kafka_reference",
    "remedy",
)
"""The fields of ``findings[]`` as the JSON has named them since it was first published."""


def test_the_findings_fields_keep_their_names_and_add_missing_and_member_basis():
    """Add, never rename or drop (issue 85): ``exact`` and the new ``missing`` (what would measure
    an unmeasured finding, and the commands) and ``member_basis`` come after the stable names."""
    from forensics import schema as s
    from forensics.contract import json_name

    names = [json_name(name) for name in s.FINDINGS_SCHEMA.fieldNames()]
    assert names[: len(STABLE_FINDING_FIELDS)] == list(STABLE_FINDING_FIELDS)
    assert names[len(STABLE_FINDING_FIELDS) :] == ["missing", "member_basis"]
    assert s.FINDINGS_SCHEMA["missing"].dataType.fieldNames() == ["what", "commands"]
    assert s.EVIDENCE_LINE.fieldNames() == ["file", "line"]
