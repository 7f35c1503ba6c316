"""What analysts save from a terminal, a console or a search when one consumer group runs in many
pods, tasks or dynos: ``kubectl logs --prefix``, stern (text and ``--output json``), ``docker
compose logs --timestamps``, ``aws logs tail``, ``heroku logs``, ``logcli query``, ``grep`` over
several files, a Jenkins pipeline's console; and the Java Service Wrapper's log of one JVM's
console. Most name on each line the pod, service, log stream, dyno or file, which becomes the
host; some date the line too (``wrappers``' ``kubectl_prefix``, ``stern``, ``compose``,
``aws_tail``, ``heroku``, ``logcli``, ``jenkins``, ``tanuki``)."""

from __future__ import annotations

import json

import pytest

from forensics import layouts
from forensics.ingest.read import read_splits
from forensics.ingest.records import recognise
from forensics.ingest.sampling import ALL

from ..helpers import ingest_paths, records_by_line

POD = "orders-consumer-7d9f8b6c5-x2k4p"
STREAM = "ecs/orders-consumer/5f1a9c0e2b7d4e31a8c6b2d09e7f4a15"
LOG4J = "[2024-03-11 14:02:17,418] INFO [Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions orders-2 (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
LOGBACK = "2024-03-11 14:02:17.418 INFO  [main] o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions orders-2"
LOGBACK_ISO = LOGBACK.replace("2024-03-11 14:02:17.418", "2024-03-11T14:02:17.418Z")
"""A layout that opens with an RFC 3339 time, as ``kubectl logs --timestamps`` does."""
TIME_ONLY = "14:02:17.418 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions orders-2"
"""log4j2's default layout, a time of day first."""
BARE = "[Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions orders-3"
"""A Kafka line in no layout (a ``message_only`` record, dated by its wrapper where it has a time)."""
EXCEPTION = "org.apache.kafka.clients.consumer.CommitFailedException: Offset commit cannot be completed"
FRAME = "\tat org.apache.kafka.clients.consumer.KafkaConsumer.commitSync(KafkaConsumer.java:1257)"
TRIMMED_FRAME = FRAME.strip()
"""A frame as logcli prints it (each line trimmed)."""

CASES = [
    # line, wrapper, host, time, inner line
    (f"{POD} app {LOG4J}", "stern", POD, None, LOG4J),
    (f"shop {POD} app 2024-03-11T14:02:17.418123456Z {LOG4J}", "stern", POD, "2024-03-11T14:02:17.418123456Z", LOG4J),
    (f"{POD} app {LOGBACK}", "stern", POD, None, LOGBACK),  # the inner line's date is no container
    (f"shop {POD} app {LOGBACK}", "stern", POD, None, LOGBACK),
    (f"{POD} app 03-11 14:02:17 {LOG4J}", "stern", POD, None, LOG4J),  # --timestamps=short: no year, not used
    (f"\x1b[36m{POD}\x1b[0m \x1b[33mapp\x1b[0m {LOG4J}", "stern", POD, None, LOG4J),  # --color always
    (f"{POD} app {FRAME}", "stern", POD, None, FRAME),
    (f"shop {POD} app {FRAME}", "stern", POD, None, FRAME),
    (f"{POD} app {EXCEPTION}", "stern", POD, None, EXCEPTION),
    (f"[pod/{POD}/app] {LOG4J}", "kubectl_prefix", POD, None, LOG4J),
    (f"[pod/{POD}/app] 2024-03-11T14:02:17.418123456Z {LOG4J}", "kubectl_prefix", POD, "2024-03-11T14:02:17.418123456Z", LOG4J),
    (f"[pod/{POD}/app] 2024-03-11T14:02:17.418123456Z {FRAME}", "kubectl_prefix", POD, "2024-03-11T14:02:17.418123456Z", FRAME),
    (f"2024-03-11T14:02:17.418000+00:00 {STREAM} {LOG4J}", "aws_tail", STREAM, "2024-03-11T14:02:17.418000+00:00", LOG4J),
    (f"2024-03-11T14:02:17+00:00 {STREAM} {LOG4J}", "aws_tail", STREAM, "2024-03-11T14:02:17+00:00", LOG4J),
    (f"2024-03-11T14:02:17.418000+00:00 {STREAM} {EXCEPTION}", "aws_tail", STREAM, "2024-03-11T14:02:17.418000+00:00", EXCEPTION),
    (f"2024-03-11T14:02:17.418000+00:00 {STREAM} {FRAME}", "aws_tail", STREAM, "2024-03-11T14:02:17.418000+00:00", FRAME),
    (f"2024-03-11T14:02:17.418123+00:00 app[worker.1]: {LOG4J}", "heroku", "worker.1", "2024-03-11T14:02:17.418123+00:00", LOG4J),
    (f"2024-03-11T14:02:17.418123+00:00 app[web-123-456]: {FRAME}", "heroku", "web-123-456", "2024-03-11T14:02:17.418123+00:00", FRAME),
    (f"2024-03-11T14:02:17 {LOG4J}", "aws_tail_short", None, "2024-03-11T14:02:17Z", LOG4J),
    (f'2024-03-11T14:02:17Z {{pod="{POD}", stream="stdout"}} {LOG4J}', "logcli", POD, "2024-03-11T14:02:17Z", LOG4J),
    (
        f'2024-03-11T15:02:17+01:00 {{app="orders", pod_name="{POD}"}}    {TRIMMED_FRAME}',
        "logcli",
        POD,
        "2024-03-11T15:02:17+01:00",
        TRIMMED_FRAME,
    ),
    (
        f'2024-03-11T14:02:17Z {{instance="shop/{POD}:app", job="shop/orders"}} {LOG4J}',
        "logcli",
        f"shop/{POD}:app",
        "2024-03-11T14:02:17Z",
        LOG4J,
    ),
    ("2024-03-11T14:02:17Z {} allow.auto.create.topics = true", "logcli", None, "2024-03-11T14:02:17Z", "allow.auto.create.topics = true"),
    (
        f"orders-1  | 2024-03-11T14:02:17.418123456Z {LOG4J}",
        "compose",
        "orders-1",
        "2024-03-11T14:02:17.418123456Z",
        LOG4J,
    ),  # docker compose logs --timestamps
    (f"orders-1  | 2024-03-11T14:02:17.418123456Z {FRAME}", "compose", "orders-1", "2024-03-11T14:02:17.418123456Z", FRAME),
    (
        json.dumps(
            {
                "message": f"2024-03-11T14:02:17.418123456Z {LOG4J}",
                "nodeName": "node-1",
                "namespace": "shop",
                "podName": POD,
                "containerName": "app",
            }
        ),
        "json_message",
        POD,
        "2024-03-11T14:02:17.418123456Z",
        LOG4J,
    ),  # stern --output json --timestamps
    (
        json.dumps({"message": f"2024-03-11T14:02:17.418123456Z {FRAME}", "podName": POD}),
        "json_message",
        POD,
        "2024-03-11T14:02:17.418123456Z",
        FRAME,
    ),
    (
        json.dumps({"message": LOG4J, "nodeName": "node-1", "namespace": "shop", "podName": POD, "containerName": "app"}),
        "json_message",
        POD,
        None,
        LOG4J,
    ),
    (f"broker-1/server.log.2023-12-09-08:{LOG4J}", "grep", "broker-1", None, LOG4J),  # grep -r over brokers' rotated logs
    (f"logs/server.log:1234:{LOG4J}", "grep", None, None, LOG4J),  # grep -rn; "logs" names no writer
    (f"incident/host-a.log:{LOG4J}", "grep", "host-a", None, LOG4J),  # the file names the host
    (f"./kafka/server.log-1235-{FRAME}", "grep", None, None, FRAME),  # a context line (-A/-B/-C)
    (f"app.log.1.gz:{LOGBACK}", "grep", None, None, LOGBACK),  # zgrep
    (f"app.log:{TIME_ONLY}", "grep", None, None, TIME_ONLY),  # a time of day is no line number
    (f"app.log:17:{LOGBACK}", "grep", None, None, LOGBACK),  # nor a date's year, after one
    (f"[2024-03-11T14:02:17.418Z] {LOGBACK}", "jenkins", None, "2024-03-11T14:02:17.418Z", LOGBACK),  # a pipeline's timestamps {}
    (f"[2024-03-11T14:02:17.418Z] {FRAME}", "jenkins", None, "2024-03-11T14:02:17.418Z", FRAME),
    # the shapes these must not take
    (
        json.dumps({"timestamp": "2024-03-11T14:02:17.5Z", "host": "h-1", "message": LOGBACK_ISO}),
        "json_message",
        "h-1",
        "2024-03-11T14:02:17.5Z",
        LOGBACK_ISO,
    ),  # a shipper's time of its own: the message is the line as written
    (
        '2024-03-11T14:02:17Z {"level":"INFO","message":"a JSON record behind kubectl"}',
        "kubectl",
        None,
        "2024-03-11T14:02:17Z",
        '{"level":"INFO","message":"a JSON record behind kubectl"}',
    ),
    (f"2024-03-11T14:02:17+00:00 host-a java[4242]: {LOG4J}", "journald", "host-a", "2024-03-11T14:02:17+00:00", LOG4J),
    (f"2024-03-11T14:02:17.418123456Z {LOG4J}", "kubectl", None, "2024-03-11T14:02:17.418123456Z", LOG4J),
    (f"2024-03-11T14:02:17.418000Z {EXCEPTION}", "kubectl", None, "2024-03-11T14:02:17.418000Z", EXCEPTION),
    (f"host-a    | {LOG4J}", "compose", "host-a", None, LOG4J),
    (f"INFO   | jvm 1    | 2024/03/11 14:02:17 | {LOG4J}", "tanuki", None, "2024/03/11 14:02:17", LOG4J),  # Java Service Wrapper, LPTM
    (f"INFO   | main    | jvm 1    | 2024/03/11 14:02:17.418 | {FRAME}", "tanuki", None, "2024/03/11 14:02:17.418", FRAME),  # LDPZM
    (f"jvm 1    | {LOGBACK}", "tanuki", None, None, LOGBACK),  # its console's PM
    (f"jvm 2    | 2024/03/11 14:02:17 | {EXCEPTION}", "tanuki", None, "2024/03/11 14:02:17", EXCEPTION),  # PTM, the JVM restarted
    ("STATUS | wrapper  | 2024/03/11 14:02:10 | Launching a JVM...", "tanuki", None, "2024/03/11 14:02:10", "Launching a JVM..."),
    ("consumer group rebalanced without trouble", None, None, None, "consumer group rebalanced without trouble"),
    (LOG4J, None, None, None, LOG4J),
]


@pytest.fixture(scope="module")
def recognised(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("pods") / "terminal.txt"
    path.write_text("\n".join(line for line, *_ in CASES) + "\n", encoding="utf-8")
    rows = recognise(read_splits(spark, [str(path)]), layouts.LAYOUTS, ALL).collect()
    return {row["line"]: row for row in rows}


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_the_pod_or_stream_is_the_host_and_the_inner_line_is_read(recognised, case):
    line, wrapper, host, time, inner = CASES[case]
    row = recognised[case + 1]
    assert (row["wrapper"], row["w_host"], row["w_ts"], row["value"]) == (wrapper, host, time, inner), line
    if inner in (LOG4J, LOGBACK):
        assert row["layout"] not in (None, "message_only"), line  # the inner line is a record head in its own layout


def test_pods_in_one_file_are_hosts_and_their_stack_traces_stay_whole(spark, tmp_path):
    """Two pods' lines in one ``kubectl logs -f --prefix --timestamps`` file: each record is its
    pod's, dated by its own layout, and the exception continues the ERROR record across the
    other pod's line written between them."""
    other = "orders-consumer-7d9f8b6c5-q8m2v"
    error = "[2024-03-11 14:05:31,266] ERROR [Consumer clientId=c-1, groupId=g] Offset commit with offsets {orders-2=OffsetAndMetadata{offset=40612, leaderEpoch=7, metadata=''}} failed (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"
    lines = [
        f"[pod/{POD}/app] 2024-03-11T14:02:17.418123456Z {LOG4J}",
        f"[pod/{other}/app] 2024-03-11T14:05:31.266306399Z {error}",
        f"[pod/{POD}/app] 2024-03-11T14:05:31.266309000Z {LOG4J}",
        f"[pod/{other}/app] 2024-03-11T14:05:31.266311108Z {EXCEPTION}",
        f"[pod/{other}/app] 2024-03-11T14:05:31.26631892Z {FRAME}",
        f"[pod/{other}/app] 2024-03-11T14:05:31.270000000Z {BARE}",
    ]
    (tmp_path / "kubectl-logs.txt").write_text("\n".join(lines) + "\n")
    result = ingest_paths(spark, tmp_path / "kubectl-logs.txt")
    records = records_by_line(result)
    assert sorted(records) == [1, 2, 3, 6]
    assert [records[n]["host"] for n in (1, 2, 3, 6)] == [POD, other, POD, other]
    assert records[2]["message"].endswith(f"failed\n{EXCEPTION}")  # its frames are counted, not kept
    assert records[3]["message"] == records[1]["message"]
    assert records[2]["ts"].isoformat() == "2024-03-11T14:05:31.266000"
    assert records[6]["layout"] == "message_only" and records[6]["ts"].isoformat() == "2024-03-11T14:05:31.270000"
    assert result.accounting["continuations"] == 2 and result.accounting["unparsed"] == 0


def test_aws_logs_tail_short_format_dates_a_line_in_no_layout_in_utc(spark, tmp_path):
    """``aws logs tail --format short`` gives a UTC time to the second and no stream: a Kafka line
    in no layout is a record dated by it; a line in a layout keeps its own time and milliseconds."""
    lines = [f"2024-03-11T14:02:17 {BARE}", f"2024-03-11T14:02:17 {LOG4J}"]
    (tmp_path / "tail.txt").write_text("\n".join(lines) + "\n")
    records = records_by_line(ingest_paths(spark, tmp_path / "tail.txt", tz="Europe/Paris"))
    assert records[1]["layout"] == "message_only" and records[1]["ts"].isoformat() == "2024-03-11T14:02:17"
    assert records[2]["layout"] == "log4j" and records[2]["ts"].isoformat() == "2024-03-11T13:02:17.418000"  # the log's own clock, in Paris
    assert records[1]["host"] == records[2]["host"] == "tail"


def test_a_writers_record_goes_on_across_another_writers_lines(spark, tmp_path):
    """Two services' lines interleave in ``docker compose logs --timestamps``: one service's
    config block goes on after the other service's record and stays whole, with its logger;
    the other service's record holds only its own line."""
    other = "[2024-03-11 14:00:00,113] INFO [Consumer clientId=c-2, groupId=g] Subscribed to topic(s): orders (org.apache.kafka.clients.consumer.KafkaConsumer)"
    lines = [
        "orders-1  | 2024-03-11T14:00:00.112416221Z [2024-03-11 14:00:00,112] INFO ConsumerConfig values: ",
        "orders-1  | 2024-03-11T14:00:00.112422524Z \tallow.auto.create.topics = true",
        f"orders-2  | 2024-03-11T14:00:00.113000000Z {other}",
        "orders-1  | 2024-03-11T14:00:00.112430317Z \tgroup.id = g",
        "orders-1  | 2024-03-11T14:00:00.112430317Z  (org.apache.kafka.clients.consumer.ConsumerConfig)",
    ]
    (tmp_path / "compose.log").write_text("\n".join(lines) + "\n")
    result = ingest_paths(spark, tmp_path / "compose.log")
    records = records_by_line(result)
    assert sorted(records) == [1, 3]
    assert (records[1]["host"], records[3]["host"]) == ("orders-1", "orders-2")
    assert records[1]["message"].rstrip() == "ConsumerConfig values: \n\tallow.auto.create.topics = true\n\tgroup.id = g"
    assert records[1]["logger"] == "org.apache.kafka.clients.consumer.ConsumerConfig"
    assert records[3]["message"] == other.split("] INFO ", 1)[1].rsplit(" (", 1)[0]
    assert result.accounting["continuations"] == 3 and result.accounting["unparsed"] == 0
