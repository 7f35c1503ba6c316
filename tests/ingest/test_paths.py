"""Inputs: directories, globs, host inference and overrides, skipped documentation files and
the toolkit's own output."""

from __future__ import annotations

import os

import pytest

from forensics.errors import ForensicsError
from forensics.ingest.paths import host_from_name, infer_host, resolve_inputs


@pytest.mark.parametrize(
    "name, host",
    [
        ("broker-1.log", "broker-1"),
        ("host-a.log.2.gz", "host-a"),
        ("orders-app.2024-03-11.log.gz", "orders-app"),
        ("streams-7.json", "streams-7"),
        ("consumer.out", "consumer"),
    ],
)
def test_host_from_file_name(name, host):
    assert host_from_name(name) == host


def test_host_is_the_nearest_meaningful_directory(tmp_path):
    root = str(tmp_path)
    assert infer_host(os.path.join(root, "host-a", "app.log"), root) == "host-a"
    assert infer_host(os.path.join(root, "host-b", "logs", "2024-03-11", "app.log"), root) == "host-b"
    assert infer_host(os.path.join(root, "app-3.log"), root) == "app-3"


def test_a_container_log_where_the_kubelet_keeps_it_is_its_pods(tmp_path):
    """Two replicas' containers share the container's name; their pods tell them apart (read
    from ``/var/log/pods``, its rotations, or ``/var/log/containers``' links)."""
    pods = tmp_path / "var" / "log" / "pods"
    files = [
        pods / "shop_orders-app-7d9f8b6c5-x2k4q_5f8b2c1e-9a3d-4e7f-b6c2-1d0e9f8a7b6c" / "orders" / "0.log",
        pods / "shop_orders-app-7d9f8b6c5-p8m3z_0c4e6a2b-7d1f-4a9e-8b3c-5e2d1f0a9b8c" / "orders" / "0.log.20240311-140217.gz",
        tmp_path / "var" / "log" / "containers" / f"orders-app-7d9f8b6c5-x2k4q_shop_orders-{'ab12' * 16}.log",
    ]
    hosts = [infer_host(str(f), str(pods)) for f in files]
    assert hosts == ["orders-app-7d9f8b6c5-x2k4q", "orders-app-7d9f8b6c5-p8m3z", "orders-app-7d9f8b6c5-x2k4q"]
    assert infer_host(str(tmp_path / "shop_orders_notauid" / "orders" / "0.log"), str(tmp_path)) == "orders"


def make_tree(tmp_path):
    for rel in ("host-a/app.log", "host-a/app.log.1.gz", "host-b/logs/app.log", "NOTES.md", "EXPECTED.json"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    return tmp_path


def test_directory_is_read_recursively_with_hosts(tmp_path):
    files = resolve_inputs([str(make_tree(tmp_path))])
    readable = {os.path.relpath(f.path, tmp_path): f.host for f in files if not f.problem}
    assert readable == {"host-a/app.log": "host-a", "host-a/app.log.1.gz": "host-a", "host-b/logs/app.log": "host-b"}


def test_documentation_files_in_a_directory_are_reported_as_skipped(tmp_path):
    files = resolve_inputs([str(make_tree(tmp_path))])
    skipped = {os.path.basename(f.path) for f in files if f.problem and f.problem.startswith("skipped")}
    assert skipped == {"NOTES.md", "EXPECTED.json"}


def test_a_lab_runs_truth_and_journal_are_skipped_but_a_journal_elsewhere_is_read(tmp_path):
    """``forensics analyze lab/runs/<scenario>/<run>``: the run's truth.json and its journal of
    produced/processed records are not logs; a ``journal/`` directory without a truth.json beside
    it (a journald export, say) stays an input."""
    run = tmp_path / "run"
    for rel in ("c1/app.log", "journal/produced.jsonl", "journal/processed-c1.jsonl", "truth.json"):
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text("{}\n")
    (tmp_path / "other" / "journal").mkdir(parents=True)
    (tmp_path / "other" / "journal" / "node-1.jsonl").write_text('{"MESSAGE": "x"}\n')
    files = {os.path.relpath(f.path, tmp_path): f.problem for f in resolve_inputs([str(run), str(tmp_path / "other")])}
    assert files["run/c1/app.log"] is None and files["other/journal/node-1.jsonl"] is None
    assert files["run/truth.json"].startswith("skipped: a documentation file")
    for name in ("produced.jsonl", "processed-c1.jsonl"):
        assert files[f"run/journal/{name}"] == "skipped: a lab run's journal of produced and processed records (its truth), not a log"


def test_a_runs_own_output_beside_the_logs_is_skipped_and_refused_when_named(tmp_path):
    """``forensics analyze incident/ --json incident/analysis.json``: neither the analysis a
    former run saved there nor this run's temporary file is read as a log; named, the analysis
    gets one sentence that says what it is."""
    from forensics.ingest.paths import check_named_files

    root = make_tree(tmp_path)
    (root / "analysis.json").write_text('{\n  "tool_version": "0.1.0",\n  "inputs": []\n}\n')
    (root / ".analysis.json.4242.part").write_text('{\n  "tool_version": "0.1.0",\n  "in')
    (root / "kibana.json").write_text('[{"@timestamp": "2024-03-11T14:02:17.418Z", "message": "x"}]\n')  # an export stays an input
    files = {os.path.basename(f.path): f.problem for f in resolve_inputs([str(root)])}
    assert files["analysis.json"] == "skipped: an analysis this toolkit wrote (forensics analyze --json), not a log"
    assert files[".analysis.json.4242.part"].startswith("skipped: a hidden file")
    assert files["kibana.json"] is None
    with pytest.raises(ForensicsError, match="is an analysis this toolkit wrote"):
        check_named_files([str(root / "analysis.json")])
    check_named_files([str(root / "kibana.json")])


def test_glob_and_host_and_zone_overrides(tmp_path):
    make_tree(tmp_path)
    files = resolve_inputs(
        [str(tmp_path / "host-*" / "*.log")], hosts={"*/host-a/*": "broker-7"}, tz_by_source={"broker-7": "Europe/Paris"}
    )
    assert [(f.host, f.tz, f.tz_given) for f in files] == [("broker-7", "Europe/Paris", True)]


def test_same_file_named_twice_is_read_once(tmp_path):
    make_tree(tmp_path)
    files = resolve_inputs([str(tmp_path / "host-a" / "app.log"), str(tmp_path / "host-a")])
    assert sum(1 for f in files if f.path.endswith("host-a/app.log")) == 1


def test_symlink_loop_does_not_hang(tmp_path):
    make_tree(tmp_path)
    os.symlink(tmp_path, tmp_path / "host-a" / "loop")
    files = resolve_inputs([str(tmp_path)])
    assert sum(1 for f in files if f.path.endswith("app.log") and not f.problem) == 2


def test_glob_matching_nothing_is_a_clear_error(tmp_path):
    with pytest.raises(ForensicsError, match="No such file or directory"):
        resolve_inputs([str(tmp_path / "*.nothing")])


def test_same_content_under_two_names_is_marked_a_duplicate(tmp_path):
    (tmp_path / "host-a").mkdir()
    (tmp_path / "copy").mkdir()
    text = "[2024-03-11 14:02:33,221] INFO hello (org.example.App)\n"
    for path in (tmp_path / "host-a" / "app.log", tmp_path / "copy" / "app.log"):
        path.write_text(text)
    (tmp_path / "host-a" / "other.log").write_text(text.replace("hello", "howdy"))  # same size, other bytes
    files = {os.path.relpath(f.path, tmp_path): f.duplicate_of for f in resolve_inputs([str(tmp_path)])}
    assert files["host-a/other.log"] is None
    copies = {files["copy/app.log"], files["host-a/app.log"]}
    assert copies in ({None, str(tmp_path / "copy" / "app.log")}, {None, str(tmp_path / "host-a" / "app.log")})


def test_a_directory_named_on_the_command_line_is_the_host_of_its_generic_files(tmp_path):
    for rel in ("incident/host-a/app.log", "incident/host-a/app.log.1", "incident/host-b/logs/app.log.gz"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    named = resolve_inputs([str(tmp_path / "incident/host-a"), str(tmp_path / "incident/host-b/logs")])
    assert sorted({f.host for f in named}) == ["host-a", "host-b"]
    globbed = resolve_inputs([str(tmp_path / "incident/*")])
    assert sorted({f.host for f in globbed}) == ["host-a", "host-b"]
    single = resolve_inputs([str(tmp_path / "incident/host-a/app.log")])
    assert [f.host for f in single] == ["host-a"]


def test_same_file_name_in_two_directories_never_becomes_one_host(tmp_path):
    for rel in ("a/broker-1.log", "b/broker-1.log"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel + "\n")
    files = resolve_inputs([str(tmp_path / "a/broker-1.log"), str(tmp_path / "b/broker-1.log")])
    assert sorted(f.host for f in files) == ["a/broker-1", "b/broker-1"]
    given = resolve_inputs([str(tmp_path / "a/broker-1.log"), str(tmp_path / "b/broker-1.log")], hosts={"*/a/*": "broker-1"})
    assert sorted(f.host for f in given) == ["b/broker-1", "broker-1"]


def test_one_host_with_two_files_whose_times_overlap_is_reported():
    from forensics.ingest import host_overlaps

    def entry(path, host, first, last):
        return {"path": path, "host": host, "first_ts": first, "last_ts": last}

    inputs = [
        entry("a/app.log.1", "h", "2024-03-11 10:00:00", "2024-03-11 11:00:00"),
        entry("a/app.log", "h", "2024-03-11 11:00:01", "2024-03-11 12:00:00"),  # rotation: no overlap
        entry("b/app.log", "h", "2024-03-11 11:30:00", "2024-03-11 11:40:00"),
        entry("c/app.log", "other", "2024-03-11 10:00:00", "2024-03-11 12:00:00"),
    ]
    assert host_overlaps(inputs) == [
        {"host": "h", "files": ["a/app.log", "b/app.log"], "from": "2024-03-11 11:30:00", "to": "2024-03-11 11:40:00"}
    ]


def test_route_inputs_sends_a_dump_found_among_logs_to_the_dumps_after_the_named_ones(tmp_path):
    from forensics.ingest.paths import route_inputs
    from forensics.offsets import sniff_file

    data = os.path.join(os.path.dirname(__file__), "..", "data", "offsets")
    incident = tmp_path / "incident"
    (incident / "host-a").mkdir(parents=True)
    (incident / "host-a" / "app.log").write_text("2024-03-11 10:00:00,000 INFO [main] o.a.k.c.c.KafkaConsumer - started\n")
    (incident / "describe.txt").write_bytes(open(os.path.join(data, "describe_2_2.txt"), "rb").read())
    (incident / "empty.log").write_text("")
    named = tmp_path / "consumer_offsets.txt"
    named.write_bytes(open(os.path.join(data, "consumer_offsets_3_6.txt"), "rb").read())

    routed = route_inputs([str(incident)], [str(named)], sniff_file, hosts={"*/host-a/*": "alpha"}, tz="Europe/Berlin")

    assert sorted(os.path.basename(f.path) for f in routed.logs) == ["app.log", "empty.log"]
    assert [os.path.basename(f.path) for f in routed.dumps] == ["consumer_offsets.txt", "describe.txt"]
    app = next(f for f in routed.logs if f.path.endswith("app.log"))
    assert (app.host, app.tz, app.tz_given) == ("alpha", "Europe/Berlin", True)
    assert route_inputs([], [str(named)], sniff_file).logs == []
    with pytest.raises(ForensicsError, match="No such file"):
        route_inputs([], [str(tmp_path / "nowhere")], sniff_file)
