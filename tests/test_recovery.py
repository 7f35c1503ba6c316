"""Recovery plans (``forensics.recovery``, ``forensics.report.recovery_plans``, ``forensics plan``).

Pure tests on hand-written findings, and one ``forensics plan`` run on three sample bundles
(a lost range, a duplicated range and a skipped restore) on the suite's warm Spark session.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from forensics.cli import main
from forensics.recovery import FIELDS, attach_recovery, csv_text, plan_items, reset_rows_by_group
from forensics.report.recovery_plans import STEP_ORDER, plan_files, plan_markdown, what_to_do_now, write_plan

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
GROUP_STEPS = ["check_log_start", "describe", "stop", "check_inactive", "dry_run", "execute", "restart", "verify"]


def make_finding(**fields) -> dict:
    finding = {
        "detector": "reset_to_latest_gap",
        "severity": "critical",
        "verdict": "loss",
        "group": "billing",
        "topic": "invoices",
        "partition": 1,
        "task": None,
        "offset_from": 10,
        "offset_to": 15,
        "records": 5,
        "exact": True,
        "classification": None,
        "host": "host-a",
        "member": "host-a/consumer-1",
        "start": "2024-03-11T14:00:00.000Z",
        "end": "2024-03-11T14:00:01.000Z",
        "evidence": [{"file": "/incident/host-a/app.log", "line": 7}],
        "explanation": "x.",
        "kafka_reference": "y",
        "remedy": "z",
    }
    return {**finding, **fields}


def make_result(*findings, commits=(), config=(), ownership=(), inputs=()) -> dict:
    return {
        "inputs": list(inputs),
        "config": list(config),
        "ownership": list(ownership),
        "commits": list(commits),
        "findings": list(findings),
    }


def commit(kind: str, offset: int, ts: str, group="billing", topic="invoices", partition=1, strategy=None, line=40) -> dict:
    return {
        "group_id": group,
        "topic": topic,
        "partition": partition,
        "kind": kind,
        "offset": offset,
        "ts": ts,
        "strategy": strategy,
        "source_file": "/incident/host-a/app.log",
        "line": line,
    }


def recovery_of(*findings, **facts) -> dict:
    return attach_recovery(make_result(*findings, **facts))["findings"][0]["recovery"]


def kafka_from_file_rows(text: str) -> list[tuple[str, int, int]]:
    """A ``--from-file`` CSV read the way ConsumerGroupCommand reads it for one ``--group``: split
    on LF (a final LF adds no line), each line exactly ``topic,partition,offset``, no header."""
    assert "\r" not in text and text.endswith("\n")
    rows = []
    for line in text.split("\n")[:-1]:
        topic, partition, offset = line.split(",")
        rows.append((topic, int(partition), int(offset)))
    return rows


# --- lost ranges of consumer groups -------------------------------------------------------------


def test_a_lost_range_becomes_one_from_file_row_at_its_start():
    recovery = recovery_of(make_finding())
    assert recovery["kind"] == "reconsume"
    assert recovery["reset_rows"] == [{"group": "billing", "topic": "invoices", "partition": 1, "offset": 10}]
    assert recovery["csv_file"] == "reset-billing.csv"
    assert [s["step"] for s in recovery["steps"] if not s["optional"]] == GROUP_STEPS
    commands = {s["step"]: s["command"] for s in recovery["steps"]}
    assert commands["dry_run"] == (
        'kafka-consumer-groups.sh --bootstrap-server "$BOOTSTRAP_SERVERS" --group billing '
        "--reset-offsets --from-file reset-billing.csv --dry-run"
    )
    assert commands["execute"] == commands["dry_run"].replace("--dry-run", "--execute")
    assert commands["read_range"].endswith(
        "--topic invoices --partition 1 --offset 10 --max-messages 5 --property print.offset=true "
        "--property print.timestamp=true --property print.key=true"
    )
    assert "-t invoices -p 1 -o 10 -c 5 -e" in commands["read_range_kcat"]
    assert recovery["window"]["from"] == "2024-03-11T14:00:00.000Z"


def test_the_csv_of_a_group_is_kafkas_from_file_format_with_the_lowest_start_per_partition():
    result = attach_recovery(
        make_result(
            make_finding(offset_from=10, offset_to=15),
            make_finding(offset_from=3, offset_to=6, detector="out_of_range_reset"),
            make_finding(partition=0, offset_from=7, offset_to=9),
            make_finding(group="other", topic="payments", offset_from=1, offset_to=2),
            make_finding(verdict="duplication", detector="backward_commit", offset_from=0, offset_to=4),
        )
    )
    rows = reset_rows_by_group(result)
    assert kafka_from_file_rows(csv_text(rows["billing"])) == [("invoices", 0, 7), ("invoices", 1, 3)]
    assert kafka_from_file_rows(csv_text(rows["other"])) == [("payments", 1, 1)]
    files = plan_files(result)
    assert files["reset-billing.csv"] == "invoices,0,7\ninvoices,1,3\n"
    assert sorted(files) == ["plan.md", "recovery.json", "reset-billing.csv", "reset-other.csv"]


def test_a_reset_to_earliest_past_the_range_makes_it_unrecoverable():
    recovery = recovery_of(
        make_finding(detector="out_of_range_reset", offset_from=83539, offset_to=85403),
        commits=[
            commit("out of range", 83539, "2024-03-11T14:00:00.000Z"),
            commit("reset", 85403, "2024-03-11T14:00:01.000Z", strategy="EARLIEST", line=41),
        ],
    )
    assert recovery["kind"] == "unrecoverable" and recovery["reset_rows"] == [] and recovery["csv_file"] is None
    assert recovery["retention"]["status"] == "deleted" and recovery["retention"]["log_start"] == 85403
    assert recovery["retention"]["evidence"] == {"file": "/incident/host-a/app.log", "line": 41}
    assert [s["step"] for s in recovery["steps"]] == ["check_log_start", "recover_from_source"]


@pytest.mark.parametrize(("log_start", "status"), [(None, "unknown"), (4, "retained"), (10, "oldest_retained"), (12, "partly_deleted")])
def test_retention_status_follows_the_known_log_start(log_start, status):
    commits = [] if log_start is None else [commit("reset", log_start, "2024-03-11T13:00:00.000Z", strategy="earliest")]
    recovery = recovery_of(make_finding(), commits=commits)
    assert (recovery["retention"]["status"], recovery["retention"]["log_start"]) == (status, log_start)
    assert recovery["reset_rows"][0]["offset"] == 10  # Kafka itself raises an offset below the log start to it


def test_an_out_of_range_start_means_part_of_the_range_is_deleted():
    recovery = recovery_of(make_finding(detector="out_of_range_reset"), commits=[commit("out of range", 10, "2024-03-11T14:00:00.000Z")])
    assert recovery["retention"]["status"] == "partly_deleted" and recovery["retention"]["log_start"] is None


def test_the_dump_log_start_of_an_exact_latest_gap_is_the_oldest_record_kept():
    dump = "/incident/offsets/dump-log.txt"
    finding = make_finding(evidence=[{"file": "/incident/host-a/app.log", "line": 7}, {"file": dump, "line": 3}])
    recovery = recovery_of(finding, inputs=[{"kind": "offsets", "path": dump}])
    assert recovery["retention"]["status"] == "oldest_retained"
    assert recovery["retention"]["evidence"] == {"file": dump, "line": 3}


def test_the_reset_replays_records_after_the_range_up_to_the_last_commit_seen():
    recovery = recovery_of(make_finding(), commits=[commit("commit", 40, "2024-03-11T14:05:00.000Z")])
    assert recovery["replays_too"] == {"offset_from": 15, "offset_to": 40, "as_of": "2024-03-11T14:05:00.000Z"}


def test_the_config_table_keeps_every_setting_the_plans_read():
    """The plans read the ``config`` table of the analysis; a setting it does not keep reaches no
    plan (``bootstrap.servers`` and ``state.dir`` once did not)."""
    from forensics.events.config import RELEVANT_SETTINGS
    from forensics.recovery.facts import FACT_SETTINGS

    assert set(FACT_SETTINGS) <= set(RELEVANT_SETTINGS)


def test_bootstrap_servers_come_from_the_clients_config():
    config = [{"group_id": "billing", "host": "host-a", "settings": {"bootstrap.servers": "[kafka-1:9092, kafka-2:9092]"}}]
    result = make_result(make_finding(), config=config)
    assert attach_recovery(result)["findings"][0]["recovery"]["bootstrap_servers"] == "kafka-1:9092,kafka-2:9092"
    assert "export BOOTSTRAP_SERVERS=kafka-1:9092,kafka-2:9092" in plan_markdown(result)


# --- duplicates and skipped restores ------------------------------------------------------------


def test_a_duplicated_range_is_de_duplicated_until_the_group_committed_past_it():
    finding = make_finding(
        verdict="duplication",
        detector="backward_commit",
        offset_from=5,
        offset_to=7,
        start="2024-03-11T14:00:00.000Z",
        end="2024-03-11T14:00:02.000Z",
    )
    commits = [
        commit("commit", 7, "2024-03-11T14:00:00.000Z"),
        commit("commit", 5, "2024-03-11T14:00:02.000Z"),
        commit("commit", 6, "2024-03-11T14:00:03.000Z"),
        commit("commit", 9, "2024-03-11T14:00:04.000Z"),
    ]
    recovery = recovery_of(finding, commits=commits)
    assert recovery["kind"] == "deduplicate" and recovery["reset_rows"] == []
    assert (recovery["window"]["from"], recovery["window"]["to"]) == ("2024-03-11T14:00:00.000Z", "2024-03-11T14:00:04.000Z")
    assert [s["step"] for s in recovery["steps"]] == ["read_range", "read_range_kcat", "deduplicate"]
    assert recovery["keys"] == [] and "keys" in recovery["caveats"][0]
    assert recovery_of(finding, commits=commits[:2])["window"]["to"] is None


def test_a_skipped_restore_rebuilds_the_task_state_from_its_changelog():
    finding = make_finding(
        detector="skipped_restore",
        group="AuditTrailBatch",
        topic="AuditTrailBatch-store1-changelog",
        partition=1,
        task="1_1",
        offset_from=0,
        offset_to=55872,
        host="audit-batch-1",
        member="AuditTrailBatch-StreamThread-1",
    )
    config = [
        {
            "application_id": "AuditTrailBatch",
            "host": "audit-batch-1",
            "settings": {"state.dir": "/var/lib/kafka streams", "processing.guarantee": "exactly_once"},
        }
    ]
    ownership = [
        {"group": "AuditTrailBatch", "topic": t, "host": "audit-batch-1"} for t in ("audit-events", "AuditTrailBatch-store1-repartition")
    ]
    recovery = recovery_of(finding, config=config, ownership=ownership)
    assert recovery["kind"] == "restore_state" and recovery["reset_rows"] == []
    streams = recovery["streams"]
    assert streams["task_dir"] == "/var/lib/kafka streams/AuditTrailBatch/1_1" and streams["input_topics"] == ["audit-events"]
    commands = {s["step"]: s["command"] for s in recovery["steps"]}
    assert commands["remove_task_state"] == "rm -rf -- '/var/lib/kafka streams'/AuditTrailBatch/1_1"
    assert commands["app_reset_dry_run"] == (
        'kafka-streams-application-reset.sh --bootstrap-server "$BOOTSTRAP_SERVERS" '
        "--application-id AuditTrailBatch --input-topics audit-events --dry-run"
    )
    assert [s["host"] for s in recovery["steps"][:4]] == ["audit-batch-1"] * 4
    assert any("KAFKA-7672" in c for c in recovery["caveats"])


def test_names_read_from_logs_are_quoted_and_never_build_a_path():
    hostile = "g'; rm -rf / #"
    recovery = recovery_of(make_finding(group=hostile))
    assert "--group 'g'\"'\"'; rm -rf / #'" in recovery["steps"][1]["command"]
    assert re.fullmatch(r"reset-g___rm_-rf____-[0-9a-f]{8}\.csv", recovery["csv_file"])
    restore = recovery_of(make_finding(group="app", topic="app-s-changelog", task="../../etc", detector="skipped_restore"))
    assert next(s for s in restore["steps"] if s["step"] == "remove_task_state")["command"] is None
    illegal = recovery_of(make_finding(topic="in,voices\n"))
    assert illegal["kind"] == "manual" and illegal["reset_rows"] == [] and illegal["steps"] == []
    with pytest.raises(ValueError):
        csv_text([{"topic": "a,b", "partition": 0, "offset": 1}])


def test_only_loss_and_duplication_get_a_plan_and_every_plan_has_the_same_fields():
    result = make_result(
        make_finding(verdict="delay"),
        make_finding(verdict="expected"),
        make_finding(offset_from=None),
        make_finding(),
        make_finding(verdict="duplication"),
    )
    before = json.dumps(result, sort_keys=True)
    plans = [f["recovery"] for f in attach_recovery(result)["findings"]]
    assert json.dumps(result, sort_keys=True) == before  # the input is not modified
    assert plans[:2] == [None, None]
    assert [p["kind"] for p in plans[2:]] == ["manual", "reconsume", "deduplicate"]
    assert all(list(p) == list(FIELDS) for p in plans[2:])
    assert [n for n, _, _ in plan_items(result)] == [2, 3, 4]  # computed for a result saved before recovery existed


# --- rendering and files -----------------------------------------------------------------------


def test_plan_md_lists_each_groups_steps_once_in_order():
    result = make_result(make_finding(), make_finding(partition=0, offset_from=2, offset_to=3))
    text = plan_markdown(result, "incident/")
    titles = [line for line in text.splitlines() if line[:1].isdigit()]
    assert len([t for t in titles if "Dry-run" in t]) == 1 and len([t for t in titles if "Check the log start" in t]) == 2
    positions = [
        text.index(marker)
        for marker in (
            "--describe --group billing\n",
            "Stop every consumer",
            "--state",
            "--dry-run",
            "--execute",
            "Start the consumers",
            "Verify group",
        )
    ]
    assert positions == sorted(positions)
    assert "```sh\ninvoices,0,2\ninvoices,1,10\n```" in text
    assert set(STEP_ORDER) >= {s["step"] for _, _, r in plan_items(result) for s in r["steps"]}


def test_write_plan_refuses_a_directory_holding_another_plans_reset_file(tmp_path):
    (tmp_path / "reset-old-group.csv").write_text("t,0,1\n")
    with pytest.raises(Exception, match="another plan"):
        write_plan(make_result(make_finding()), tmp_path)


def test_what_to_do_now_escapes_log_text():
    canary = "<script>window.__pwned=1</script>"
    html = what_to_do_now(make_result(make_finding(group=canary), make_finding(verdict="duplication", member=canary)))._repr_html_()
    assert canary not in html and "&lt;script&gt;" in html and "reset-_script_window.__pwned_1__script_-" in html
    assert "nothing to recover" in what_to_do_now(make_result(make_finding(verdict="delay")))._repr_html_()
    assert "&lt;script&gt;" in plan_markdown(make_result(make_finding(group=canary)))


@pytest.mark.parametrize("name", ["incident_report", "rebalance_explorer"])
def test_the_notebooks_show_what_to_do_now(name):
    nb = nbformat.read(str(ROOT / "notebooks" / f"{name}.ipynb"), as_version=4)
    assert any(c.cell_type == "code" and "what_to_do_now(" in c.source for c in nb.cells)


# --- `forensics plan` --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def planned(spark, tmp_path_factory) -> Path:
    """``forensics plan`` on a lost range, a duplicated range and a skipped restore, in this process."""
    out = tmp_path_factory.mktemp("plan") / "plan"
    bundles = [str(SAMPLES / b) for b in ("reset_to_latest_gap", "backward_commit", "skipped_restore")]
    run = CliRunner().invoke(main, ["plan", *bundles, "-o", str(out)])
    assert run.exit_code == 0, run.output[-2000:]
    assert "Plan written to" in run.output and "nothing was executed" in run.output
    return out


@pytest.mark.parametrize("small", [True, False], ids=["small incident", "spread"])
def test_the_analysis_plans_each_finding_as_the_whole_result_would(spark, monkeypatch, request, small):
    """The analysis makes each plan from the facts read with its finding (its group's config
    blocks and owners, its partition's commits); ``facts_of`` over the whole JSON gives the same."""
    import importlib

    from forensics.analyze import analyze

    if small:
        analysed = request.getfixturevalue("samples_analysis")
    else:
        monkeypatch.setattr(importlib.import_module("forensics.analyze"), "SMALL_INCIDENT_BYTES", 0)
        analysed = analyze(spark, [str(SAMPLES)])
    result = json.loads(json.dumps(analysed, default=str))
    plans = [f["recovery"] for f in result["findings"]]
    assert {p["kind"] for p in plans if p} >= {"reconsume", "deduplicate", "restore_state"}
    assert all(p["bootstrap_servers"] for p in plans if p) and any(p and p["streams"] and p["streams"]["state_dir"] for p in plans)
    unplanned = {**result, "findings": [{k: v for k, v in f.items() if k != "recovery"} for f in result["findings"]]}
    assert [f["recovery"] for f in attach_recovery(unplanned)["findings"]] == plans


def test_forensics_plan_writes_from_file_csvs_matching_the_findings(planned):
    items = json.loads((planned / "recovery.json").read_text())["items"]
    assert sorted((i["detector"], i["recovery"]["kind"]) for i in items) == [
        ("backward_commit", "deduplicate"),
        ("reset_to_latest_gap", "reconsume"),
        ("skipped_restore", "restore_state"),
    ]
    lost = [i for i in items if i["recovery"]["kind"] == "reconsume"]
    csvs = sorted(p.name for p in planned.glob("reset-*.csv"))
    assert csvs == sorted({i["recovery"]["csv_file"] for i in lost}) == ["reset-demo-consumer.csv"]
    rows = kafka_from_file_rows((planned / "reset-demo-consumer.csv").read_text())
    assert rows == [(i["topic"], i["partition"], i["offset_from"]) for i in lost] == [("demo-topic", 1, 0)]
    assert lost[0]["recovery"]["retention"]["status"] == "oldest_retained"
    # the brokers and the state directory come from the clients' own config blocks
    brokers = {i["detector"]: i["recovery"]["bootstrap_servers"] for i in items}
    assert brokers["skipped_restore"] == "kafka-1.prod:9092,kafka-2.prod:9092,kafka-3.prod:9092"
    assert all(b and b.startswith("kafka-1.") and b.endswith(".internal:9092") for d, b in brokers.items() if d != "skipped_restore")
    (restore,) = [i["recovery"]["streams"] for i in items if i["detector"] == "skipped_restore"]
    assert restore["state_dir"] == "/var/lib/kafka-streams" and restore["processing_guarantee"] == "exactly_once"


def test_forensics_plan_md_covers_every_loss_and_duplication_in_order(planned):
    text = (planned / "plan.md").read_text()
    number = {i["detector"]: i["finding"] for i in json.loads((planned / "recovery.json").read_text())["items"]}
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == [
        "## Group demo-consumer: re-consume lost records",
        f"## Duplicates to de-duplicate downstream: finding #{number['backward_commit']}",
        f"## Kafka Streams state to rebuild: finding #{number['skipped_restore']}",
    ]
    assert "--topic orders-commands-a6b24e --partition 1 --offset 4 --max-messages 3" in text
    assert "rm -rf -- /var/lib/kafka-streams/AuditTrailBatch/1_1" in text


def test_forensics_plan_from_a_saved_analysis_needs_no_spark(tmp_path):
    saved = tmp_path / "result.json"
    saved.write_text(json.dumps(make_result(make_finding())))
    run = CliRunner().invoke(main, ["plan", "--analysis", str(saved), "-o", str(tmp_path / "plan")])
    assert run.exit_code == 0, run.output
    assert kafka_from_file_rows((tmp_path / "plan" / "reset-billing.csv").read_text()) == [("invoices", 1, 10)]


@pytest.mark.parametrize("args", [["-o", "x"], ["sample_logs", "--analysis", "r.json", "-o", "x"]])
def test_forensics_plan_takes_paths_or_a_saved_analysis(args):
    run = CliRunner().invoke(main, ["plan", *args])
    assert run.exit_code == 2 and "one of the two" in run.output
