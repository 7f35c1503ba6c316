"""Identity and order on sparse logs (issue 85): members of clients that log no client id, null
generations, durations across gaps in the evidence, undated findings, settings a client states in
its own words, and librdkafka lines whose facility a log handler dropped."""

from __future__ import annotations

from forensics.analyze import analyze
from forensics.contract import materialised
from tests.detect.incidents import analyse, write
from tests.helpers import ingest_paths, small_model
from tests.model.conftest import generation, rows

KAFKA_PYTHON = "2024-03-11 14:03:{:02d},202 INFO kafka.coordinator.consumer Setting newly assigned partitions {{TopicPartition(topic='orders', partition={})}} for group orders-app"
JOINED_PY = "2024-03-11 14:03:{:02d},100 INFO kafka.coordinator Successfully joined group orders-app with generation {}"


def test_a_client_that_logs_no_client_id_is_named_by_its_host_then_by_its_file(spark, tmp_path):
    """kafka-python before 2.x at INFO names neither a client id nor a member id: its lines were
    of no member, and member-keyed tables dropped them."""
    write(tmp_path, {"h1": [JOINED_PY.format(1, 3), KAFKA_PYTHON.format(2, 0)]})
    (tmp_path / "h2").mkdir()
    (tmp_path / "h2" / "a.log").write_text("\n".join([JOINED_PY.format(1, 3), KAFKA_PYTHON.format(2, 1)]) + "\n")
    (tmp_path / "h2" / "b.log").write_text("\n".join([JOINED_PY.format(1, 3), KAFKA_PYTHON.format(3, 2)]) + "\n")
    model = small_model(spark, ingest_paths(spark, tmp_path).records)
    owners = rows(model.ownership, "partition", "member", "member_basis", "generation")
    assert owners == [
        (0, "h1", "host", 3),
        (1, str(tmp_path / "h2" / "a.log"), "file and thread", 3),
        (2, str(tmp_path / "h2" / "b.log"), "file and thread", 3),
    ]


def java(stamp: str, text: str) -> str:
    return f"[2024-06-01 {stamp},000] INFO [Consumer clientId=c1, groupId=orders-app] {text} (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"


REBALANCE = [
    ("10:00:00", "Revoke previously assigned partitions orders-0"),
    ("10:00:00", "(Re-)joining group"),
    ("10:00:05", f"Successfully joined group with generation {generation(8, 'c1-m')}"),
    ("10:00:05", "Adding newly assigned partitions: orders-0"),
]


def durations(spark, root) -> list[tuple]:
    return rows(small_model(spark, ingest_paths(spark, root).records).rebalances, "generation", "duration_ms")


def test_no_duration_is_measured_across_two_excerpts_or_a_long_silence(spark, tmp_path):
    one = write(tmp_path / "one", {"h1": [java(t, text) for t, text in REBALANCE]})
    assert durations(spark, one) == [(8, 5000)]
    late = [(t.replace("10:00:05", "11:00:05"), text) for t, text in REBALANCE]
    silent = write(tmp_path / "silent", {"h1": [java(t, text) for t, text in late]})
    assert durations(spark, silent) == [(8, None)]
    two = tmp_path / "two" / "h1"
    two.mkdir(parents=True)
    (two / "excerpt-1.log").write_text("\n".join(java(t, text) for t, text in REBALANCE[:2]) + "\n")
    (two / "excerpt-2.log").write_text("\n".join(java(t.replace("10:00:05", "10:02:05"), text) for t, text in REBALANCE[2:]) + "\n")
    assert durations(spark, tmp_path / "two") == [(8, None)]


def test_an_undated_timeout_reads_as_untimed_never_null(spark, tmp_path):
    paste = (
        "Member consumer-B-2-7e21c0d9-44fa-4c3b-8f6e-19ab2d5c7e30 sending LeaveGroup request to coordinator kafka-1:9092 "
        "(id: 2147483645 rack: null) due to consumer poll timeout has expired. This means the time between subsequent calls to "
        "poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too "
        "much time processing messages. You can address this either by increasing max.poll.interval.ms or by reducing the "
        "maximum size of batches returned in poll() with max.poll.records."
    )
    found = [f for f in analyse(spark, write(tmp_path, {"pasted": [paste]})) if f["detector"] == "poll_timeout"]
    assert len(found) == 1 and found[0]["start"] is None
    assert "from untimed line " in found[0]["explanation"] and "app.log:1" in found[0]["explanation"]
    assert "null" not in found[0]["explanation"].replace("rack: null", "")


RDK_JOIN = '%7|1710165737.406|JOINGROUP|rdkafka#consumer-1| [thrd:main]: I am elected leader for group "orders-app" with 1 member(s)'
MAXPOLL = (
    "%4|1710165790.018|MAXPOLL|rdkafka#consumer-1| [thrd:main]: Application maximum poll interval (300000ms) exceeded by 89ms "
    "(adjust max.poll.interval.ms for long-running message processing): leaving group"
)


def test_librdkafkas_maxpoll_line_states_max_poll_interval(spark, tmp_path):
    found = [f for f in analyse(spark, write(tmp_path, {"w1": [RDK_JOIN, MAXPOLL]})) if f["detector"] == "poll_timeout"]
    assert len(found) == 1
    assert "(max.poll.interval.ms = 300000 ms, as its own line states)" in found[0]["explanation"]


def test_a_partition_list_line_without_its_facility_is_unrecognised_not_an_assignment(spark, tmp_path):
    """``%7|..|ASSIGNMENT|rdkafka#consumer-1| [thrd:main]:  orders [3] offset INVALID`` is an
    assignment; the same wording with the facility dropped by the application's log handler could
    be a DUMP_ALL listing (`` orders [1] offset STORED``): it opens no ownership interval and is
    counted as unrecognised Kafka."""
    (tmp_path / "w1").mkdir()
    (tmp_path / "w1" / "native.log").write_text(
        "%7|1710165737.519|ASSIGNMENT|rdkafka#consumer-1| [thrd:main]:  orders [3] offset INVALID\n"
    )
    (tmp_path / "w1" / "app.log").write_text("2024-03-11 14:03:02,002 DEBUG consumer [thrd:main]:  orders [1] offset STORED\n")
    result = materialised(analyze(spark, [str(tmp_path)]))
    assert result["events_by_type"].get("consumer:group:assigned") == 1
    assert result["accounting"]["unrecognised_kafka"] == 1
    assert [(s["file"].split("/")[-1], s["line"]) for s in result["unrecognised_kafka_samples"]] == [("app.log", 1)]
