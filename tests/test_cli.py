"""The ``forensics`` command: the JSON contract, the summary, and one-line errors.

The JSON contract and the errors come from the real command in a subprocess (its own JVM), as
a user runs it (``cli_sample_run``, shared with ``test_quiet``); the summary, ``--debug`` and
offsets-only runs use the same command in this process, on the suite's warm session.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from forensics.cli import main
from tests.conftest import CLI_SAMPLE

ROOT = Path(__file__).parent.parent
SAMPLE = CLI_SAMPLE


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "forensics.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def sample_json(cli_sample_run):
    assert cli_sample_run.returncode == 0, cli_sample_run.stderr
    return json.loads(cli_sample_run.stdout)


def test_debug_prints_the_spark_jobs_the_json_counts(tmp_path, spark):
    out = tmp_path / "result.json"
    done = run_in_process("analyze", str(SAMPLE), "--json", str(out), "--quiet", "--debug")
    assert done.exit_code == 0, done.output
    jobs = json.loads(out.read_text(encoding="utf-8"))["spark"]["jobs"]
    assert isinstance(jobs, int) and jobs > 0
    assert done.stderr.splitlines() == [f"forensics: the analysis ran {jobs} Spark jobs"]


def test_json_has_the_contract_fields(sample_json):
    assert {"tool_version", "inputs", "accounting", "rebalances", "findings"} <= set(sample_json)
    assert {"lines", "records", "continuations", "irrelevant", "unparsed", "unparsed_by_reason"} <= set(sample_json["accounting"])
    for entry in sample_json["inputs"]:
        assert {"path", "host", "layout", "lines"} <= set(entry)


def test_json_accounting_of_the_sample_incident(sample_json):
    acc = sample_json["accounting"]
    assert (acc["lines"], acc["records"], acc["continuations"], acc["irrelevant"], acc["unparsed"]) == (78, 48, 24, 6, 0)
    logs = {Path(e["path"]).name: e for e in sample_json["inputs"] if e["kind"] == "log" and not e["problem"]}
    assert {name: (e["host"], e["layout"], e["lines"]) for name, e in logs.items()} == {
        "app.log": ("host-a", "logback", 59),
        "app.log.gz": ("host-b", "log4j", 19),
    }


def run_in_process(*args: str):
    """The command in this process, on the suite's warm session (one subprocess run above
    covers the real entry point; these cover what the command prints and accepts)."""
    return CliRunner().invoke(main, list(args))


def test_summary_is_printed_when_json_goes_to_a_file(tmp_path, spark):
    out = tmp_path / "result.json"
    done = run_in_process("analyze", str(SAMPLE / "host-a"), "--json", str(out))
    assert done.exit_code == 0, done.output
    assert "Analysed 1 file(s), 59 lines:" in done.output
    assert "Findings: 2 (1 expected, 1 loss)" in done.output
    assert "  LOSS         skipped_restore      AuditTrailBatch AuditTrailBatch-store1-changelog-1 task 1_1\n" in done.output
    assert json.loads(out.read_text())["accounting"]["records"] == 30


def test_the_json_written_row_by_row_is_the_analysis(tmp_path, spark, monkeypatch, gap_as_larger_incident):
    """``--json FILE`` streams the model tables' rows (``analyze(json_to=...)``); what it writes is
    the result ``analyze`` returns whole, and only the finished file takes the name.

    The checkpoints of each analysis are released (``spark.releasing_checkpoints``): a streamed
    result's when the next analysis starts, a whole one's as it ends; the session's own cached
    RDDs stay. (The incident runs as a larger one: a small incident's tables are kept in the
    driver, not checkpointed.)"""
    import importlib

    from forensics.analyze import ROW_LISTS, analyze
    from forensics.contract import Rows

    monkeypatch.setattr(importlib.import_module("forensics.analyze"), "SMALL_INCIDENT_BYTES", 0)

    persisted = lambda: set(spark.sparkContext._jsc.getPersistentRDDs().keySet())  # noqa: E731
    own = spark.sparkContext.parallelize(range(3)).cache()
    own.count()
    before = persisted()
    incident = ROOT / "sample_logs" / "reset_to_latest_gap"  # logs and an offset dump: commits, a loss with its recovery
    out = tmp_path / "deep" / "result.json"
    done = run_in_process("analyze", str(incident), "--json", str(out), "--quiet")
    assert done.exit_code == 0, done.output
    assert [p.name for p in out.parent.iterdir()] == ["result.json"]
    streamed_rdds = persisted() - before
    assert len(streamed_rdds) >= 5  # kept while the CLI prints the summary from them
    streamed = json.loads(out.read_text(encoding="utf-8"))
    whole = json.loads(json.dumps(gap_as_larger_incident.result, default=str))
    assert all(isinstance(whole[name], list) for name in ROW_LISTS) and whole["rebalances"] and whole["commits"]
    assert any(f["recovery"] and f["recovery"]["reset_rows"] for f in whole["findings"])
    for result in (streamed, whole):
        result["spark"].pop("jobs")
    assert streamed == whole
    with open(tmp_path / "again.json", "w", encoding="utf-8") as handle:
        returned = analyze(spark, [str(incident)], json_to=handle)
    assert not streamed_rdds & persisted()  # released as the next analysis started
    assert all(isinstance(returned[name], Rows) for name in ROW_LISTS)
    assert json.loads(json.dumps(list(returned["rebalances"]), default=str)) == whole["rebalances"]
    monkeypatch.undo()
    analyze(spark, [str(incident / "demo-consumer-1" / "app.log")])  # a small incident, whole: it releases those kept for `returned`
    assert own.id() in persisted() <= before
    own.unpersist()


def test_a_failed_analysis_leaves_no_json_file(tmp_path, spark):
    out = tmp_path / "result.json"
    done = run_in_process("analyze", str(tmp_path / "no-such-dir"), "--json", str(out))
    assert done.exit_code != 0
    assert list(tmp_path.iterdir()) == []


def test_offsets_alone_is_valid(spark):
    dumps = ROOT / "tests" / "data" / "offsets"
    done = run_in_process(
        "analyze",
        "--offsets",
        str(dumps / "describe_2_3_all_groups.txt"),
        "--offsets",
        str(dumps / "describe_time_series.txt"),
        "--json",
        "-",
    )
    assert done.exit_code == 0, done.output
    result = json.loads(done.output)
    assert [e["kind"] for e in result["inputs"]] == ["offsets", "offsets"]
    assert result["accounting"]["lines"] == 0 and result["events_by_type"] == {}
    assert result["offsets"]["by_kind"]["describe_offsets"] >= 3
    assert len(result["offsets"]["snapshots"]) == 2


def test_json_reports_events_and_catalogue_gaps(sample_json):
    acc = sample_json["accounting"]
    assert acc["events"] + acc["unrecognised_kafka"] == acc["records"]
    assert sum(sample_json["events_by_type"].values()) == acc["events"]
    assert sample_json["events_by_type"]["streams:checkpoint:missing"] == 1
    assert {s["text"] for s in sample_json["unrecognised_kafka_samples"]} >= {"Kafka commitId : 3402a8361b734732"}
    (streams_config,) = sample_json["config"]
    assert streams_config["settings"]["processing.guarantee"] == "exactly_once"


@pytest.mark.parametrize(
    "args, message",
    [
        (["analyze", "no/such/dir"], "forensics: error: No such file or directory: no/such/dir"),
        (["analyze", str(SAMPLE), "--tz", "Mars/Olympus"], "forensics: error: Unknown time zone 'Mars/Olympus'."),
        (["analyze", str(SAMPLE), "--master", "carrier-pigeon://x"], "forensics: error: Unknown Spark master 'carrier-pigeon://x'."),
        (["analyze"], "forensics: error: Nothing to analyse."),
        (
            ["analyze", str(SAMPLE), "--master", "spark://127.0.0.1:1"],
            "forensics: error: Cannot reach the Spark master spark://127.0.0.1:1",
        ),
        (["analyze", str(SAMPLE), "--master", "sc://127.0.0.1:1"], "forensics: error: Cannot reach the Spark master sc://127.0.0.1:1"),
    ],
)
def test_mistakes_give_one_line_on_stderr_and_a_nonzero_exit(args, message):
    done = run_cli(*args)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(message)
    assert "Traceback" not in done.stderr and "py4j" not in done.stderr.lower()


def test_a_connect_url_at_a_port_that_speaks_no_grpc_is_one_clear_error():
    """A listener that accepts and never answers (as a wrong port would): one sentence within
    seconds, not pyspark's Connect client retrying for minutes."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        master = f"sc://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        done = run_cli("analyze", str(SAMPLE), "--master", master, "--json", "-")
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"forensics: error: Something accepts connections at {master} but does not answer as a Spark Connect server")
    )
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 60


def test_missing_java_is_one_sentence_naming_the_package(tmp_path):
    done = run_cli("analyze", str(SAMPLE), "--master", "local[1]", env={"JAVA_HOME": str(tmp_path), "PATH": "/nonexistent"})
    assert done.returncode != 0
    assert "openjdk-17-jre-headless" in done.stderr
    assert "Traceback" not in done.stderr


def test_json_reconstructs_the_sample_rebalances(sample_json):
    assert {"clock_skew", "rebalances", "ownership"} <= set(sample_json)
    by_generation = {r["generation"]: r for r in sample_json["rebalances"]}
    assert sorted(by_generation) == [322, 323]
    last = by_generation[323]
    assert {"group", "generation", "start", "end", "duration_ms", "trigger", "members", "moved_partitions"} <= set(last)
    assert last["trigger"] == "member left (shutdown or crash)"
    assert last["members_left"] == ["host-b/AuditTrailBatch-StreamThread-1-consumer"]
    assert last["start"] == "2018-10-23T08:27:07.684Z" and last["duration_ms"] == 45469
    taken = [o for o in sample_json["ownership"] if o["topic"] == "AuditTrailBatch-store1-repartition"]
    assert [(o["host"], o["generation"], o["ended"]) for o in taken] == [("host-b", 322, "member left"), ("host-a", 323, "end of logs")]


def test_a_named_file_that_cannot_be_read_is_one_clear_error(tmp_path):
    fifo = tmp_path / "app.log"
    os.mkfifo(fifo)  # exists, but is no regular file: reading it would block
    done = run_cli("analyze", str(fifo), "--json", "-")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith(f"forensics: error: Cannot read {fifo}: not a regular file.")


def test_summary_names_a_rebalance_whose_start_and_duration_are_unknown():
    from forensics.cli import format_summary

    accounting = {"files": 1, "lines": 1, "records": 1, "continuations": 0, "irrelevant": 0, "unparsed": 0, "unparsed_by_reason": {}}
    rebalance = {
        "group": "g",
        "generation": 76,
        "start": None,
        "duration_ms": None,
        "members": [],
        "moved_partitions": [],
        "trigger": "unknown",
    }
    text = format_summary({"accounting": accounting, "rebalances": [rebalance], "findings": [], "inputs": []})
    assert "  g generation 76: start not logged, stopped ?, 0 member(s), 0 partition(s) moved; unknown" in text.splitlines()


def test_the_report_tools_are_imported_meanwhile_and_a_failed_import_is_left_to_the_command():
    """``imported_meanwhile``: modules imported on a thread of their own (``report`` and ``batch``
    import papermill and nbconvert while the JVM starts); a module that cannot be imported
    leaves no error behind, for the command's own import to report."""
    from forensics.cli import imported_meanwhile
    from forensics.report.publish import RENDERING_MODULES

    loading = imported_meanwhile(["forensics_no_such_module", *RENDERING_MODULES])
    loading.join(timeout=120)
    assert not loading.is_alive() and all(name in sys.modules for name in RENDERING_MODULES)
    assert "forensics_no_such_module" not in sys.modules
