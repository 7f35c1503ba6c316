"""Kafka clients other than the Java one as witnesses (tests/data/witnesses/clients/).

Three incidents written by hand from each client's real wording (``catalogue/clients.yaml`` cites
the source version of every template), each a README'd story:

- ``librdkafka_maxpoll``: two confluent-kafka consumers (librdkafka 2.3.0, ``debug=cgrp,topic,fetch``),
  one logging through Python ``logging`` (``logger=``), one librdkafka's native lines; the first
  exceeds ``max.poll.interval.ms``, leaves, then fails to commit the batch it was processing;
- ``aiokafka_commit``: an aiokafka 0.12.0 consumer commits while its group rebalances (a second
  consumer joins) and the commit fails;
- ``kafkajs_rejoin``: a KafkaJS 2.2.4 consumer (JSON lines, DEBUG) rejoins when a second one joins;
- ``kafkajs_loggers``: the same story (group ``tracking-app``) through two custom log creators, winston's
  documented one (sorted keys, the fields nested in ``extra``, no namespace) and a logger-less one;
- ``kafkajs_console``: the same story (group ``parcel-app``) in the text form of KafkaJS's documented
  custom log creator, behind ``kubectl logs --timestamps``;
- ``franz_go_cooperative``: a franz-go 1.17.1 consumer (``kgo.BasicLogger`` in a containerd log) hands
  two partitions to a second one (``log/slog`` through ``kslog``, logfmt) in a cooperative-sticky
  two-round rebalance; its commit of one of them fails;

and, written here, kafka-python 2.0.2 lines in ``logging.basicConfig``'s default layout inside
Docker's json-file wrapper (the wrapper dates them), which leave the group on a poll timeout.

They go through the same ingest, catalogue, model and detectors as the Java client's lines, in ONE
ingest + parse + model + detect (distinct hosts and groups keep them apart).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from pyspark.sql import functions as F

from forensics import schema as s
from forensics.detect import detect, findings_json
from forensics.events import fields as f
from forensics.events import parse_events
from forensics.events.prefix import split_prefix
from forensics.ingest import ingest
from forensics.model import build_model
from forensics.spark import materialise
from tests.helpers import as_small_incident

CLIENTS = Path(__file__).resolve().parents[1] / "data" / "witnesses" / "clients"
FIXTURES = ("librdkafka_maxpoll", "aiokafka_commit", "kafkajs_rejoin", "kafkajs_loggers", "kafkajs_console", "franz_go_cooperative")

RDK_A1 = "rdkafka-69a9f8ec-6b44-4ec9-a756-ecd708b8841f"
RDK_B = "rdkafka-386122fa-2f78-4497-803b-0fbcc5de66a8"
AIO_A = "aiokafka-0.12.0-5da2e326-0883-4532-9199-d88494637033"
JS_A = "shipping-svc-fb267bdc-b7b3-4c70-9a75-1dc86c1f319a"
JS_B = "shipping-svc-75027282-006a-42bc-96a4-93b885769770"
WORKER_A, WORKER_B = "worker-a/rdkafka#consumer-1", "worker-b/rdkafka#consumer-1"
APP_A, APP_B = "app-a/aiokafka-0.12.0", "app-b/aiokafka-0.12.0"
SVC_A, SVC_B = "svc-a/shipping-svc", "svc-b/shipping-svc"
KGO_A, KGO_B = "kgo-3f2b7c1e-9a4d-4e8b-b6c2-5d1e0f9a8b7c", "kgo-8e1d2c3b-4a5f-4b6c-9d7e-0f1a2b3c4d5e"
GO_A, GO_B = "consumer-a/kgo", "consumer-b/kgo"
PY_MEMBER = "kafka-python-2.0.2-0b2d4f6a-8c1e-4a3b-9d5f-7e9a1c3b5d7f"
BASIC_CONFIG = [
    "INFO:kafka.coordinator:(Re-)joining group orders-py",
    "DEBUG:kafka.coordinator:Received successful JoinGroup response for group orders-py: JoinGroupResponse_v2(throttle_time_ms=0, "
    f"error_code=0, generation_id=4, group_protocol='range', leader_id='{PY_MEMBER}', member_id='{PY_MEMBER}', members=[])",
    "INFO:kafka.coordinator:Successfully joined group orders-py with generation 4",
    "WARNING:kafka.coordinator.heartbeat:Heartbeat poll expired, leaving group",
]
"""kafka-python 2.0.2 (kafka/coordinator/base.py) through ``logging.basicConfig()``: no time of its own."""


def where(source_file: str) -> str:
    """``librdkafka_maxpoll/worker-a/app.log`` for a source file (path or file: URI); the
    basicConfig file written here is ``py-worker/container.log``."""
    path = Path(unquote(urlparse(source_file).path) if source_file.startswith("file:") else source_file)
    return str(path.relative_to(CLIENTS)) if path.is_relative_to(CLIENTS) else f"{path.parent.name}/{path.name}"


def hms(ts) -> str | None:
    return ts.strftime("%H:%M:%S.%f")[:-3] if ts else None


@dataclass(frozen=True)
class Incidents:
    accounting: dict
    events: dict[tuple[str, int], dict]
    """Typed events by (file, line)."""
    records: dict[tuple[str, int], dict]
    """Every Kafka record by (file, line)."""
    rebalances: dict[tuple[str, int], dict]
    ownership: list[dict]
    commits: list[dict]
    findings: list[dict]


def docker_json_file(directory: Path) -> Path:
    """``BASIC_CONFIG`` as Docker's json-file driver writes a container's stderr, one second apart,
    in ``directory``/py-worker/ (the host)."""
    lines = [
        json.dumps({"log": text + "\n", "stream": "stderr", "time": f"2024-03-11T15:00:0{i}.100000000Z"})
        for i, text in enumerate(BASIC_CONFIG)
    ]
    path = directory / "py-worker" / "container.log"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def incidents(spark, tmp_path_factory) -> Incidents:
    basic = docker_json_file(tmp_path_factory.mktemp("basic_config"))
    ingested = ingest(spark, [*(str(CLIENTS / name) for name in FIXTURES), str(basic)])
    with as_small_incident(spark):
        events = materialise(parse_events(ingested.records))
        model = build_model(events)
        key = lambda row: (where(row[s.SOURCE_FILE]), row[s.LINE])  # noqa: E731
        return Incidents(
            accounting=ingested.accounting,
            events={key(row): row.asDict() for row in events.collect()},
            records={key(row): row.asDict() for row in ingested.records.collect()},
            rebalances={(row[s.GROUP_ID], row[s.GENERATION]): row.asDict() for row in model.rebalances.collect()},
            ownership=[row.asDict() for row in model.ownership.collect()],
            commits=[row.asDict() for row in model.commits.collect()],
            findings=findings_json(detect(model)),
        )


def test_every_line_is_a_kafka_record_or_application_noise(incidents):
    accounting = incidents.accounting
    assert (accounting["lines"], accounting["records"], accounting["irrelevant"], accounting["unparsed"]) == (217, 189, 28, 0)


def test_basic_config_lines_in_a_wrapper_give_level_logger_and_the_wrappers_time(incidents):
    records = [incidents.records[("py-worker/container.log", line)] for line in (1, 4)]
    assert [(r[s.LAYOUT], hms(r[s.TS]), r[s.LEVEL], r[s.LOGGER]) for r in records] == [
        ("message_only", "15:00:00.100", "INFO", "kafka.coordinator"),
        ("message_only", "15:00:03.100", "WARN", "kafka.coordinator.heartbeat"),
    ]
    assert records[0][s.MESSAGE] == "(Re-)joining group orders-py"


# (file, line) -> the event type, template and fields that line must give.
TYPED = {
    ("librdkafka_maxpoll/worker-a/app.log", 4): (
        "consumer:group:joined",
        "RDK14",
        {s.GENERATION: 3, s.MEMBER_ID: RDK_A1, s.CLIENT_ID: "rdkafka#consumer-1"},
    ),
    ("librdkafka_maxpoll/worker-a/app.log", 7): ("consumer:group:assigned", "RDK53", {s.PARTITIONS: ["orders-0"]}),
    ("librdkafka_maxpoll/worker-a/app.log", 16): (
        "consumer:group:poll_timeout",
        "RDK32",
        {s.CLIENT_ID: "rdkafka#consumer-1", s.LEVEL: "WARN"},
    ),
    ("librdkafka_maxpoll/worker-a/app.log", 20): ("consumer:group:lost", "RDK31", {s.GROUP_ID: "orders-app"}),
    ("librdkafka_maxpoll/worker-a/app.log", 25): (
        "consumer:offset:commit_failed",
        "RDK54",
        {s.TOPIC: "orders", s.PARTITION: 1, s.OFFSET: 4200, "error": "Broker: Unknown member"},
    ),
    ("librdkafka_maxpoll/worker-b/app.log", 17): (
        "consumer:group:joined",
        "RDK14",
        {s.GENERATION: 4, s.MEMBER_ID: RDK_B, "leader_id": RDK_B},
    ),
    ("librdkafka_maxpoll/worker-b/app.log", 27): (
        "consumer:offset:set_committed",
        "RDK56",
        {s.TOPIC: "orders", s.PARTITION: 1, s.OFFSET: 4100},
    ),
    ("aiokafka_commit/app-a/app.log", 3): ("consumer:group:revoked", "PY07", {s.PARTITIONS: [], s.GROUP_ID: "billing-app"}),
    ("aiokafka_commit/app-a/app.log", 5): ("consumer:group:joined", "PY03", {s.GENERATION: 11, s.MEMBER_ID: AIO_A}),
    ("aiokafka_commit/app-a/app.log", 7): ("consumer:group:assigned", "PY06", {s.PARTITIONS: ["payments-0", "payments-1"]}),
    ("aiokafka_commit/app-a/app.log", 11): ("consumer:offset:committed", "PY17", {s.TOPIC: "payments", s.PARTITION: 0, s.OFFSET: 5120}),
    ("aiokafka_commit/app-a/app.log", 14): ("consumer:offset:commit_requested", "PY15", {s.GROUP_ID: "billing-app"}),
    ("aiokafka_commit/app-a/app.log", 15): (
        "consumer:offset:commit_failed",
        "PY21",
        {"error": "[Error 27] RebalanceInProgressError: billing-app", s.TOPIC: None},
    ),
    ("aiokafka_commit/app-a/app.log", 18): ("consumer:group:revoked", "PY07", {s.PARTITIONS: ["payments-0", "payments-1"]}),
    ("aiokafka_commit/app-b/app.log", 7): ("consumer:offset:set_committed", "PY25", {s.TOPIC: "payments", s.PARTITION: 1, s.OFFSET: 7410}),
    ("kafkajs_rejoin/svc-a/app.log", 4): (
        "consumer:group:joined",
        "JS03",
        {s.GENERATION: 7, s.MEMBER_ID: JS_A, s.GROUP_ID: "shipping-app"},
    ),
    ("kafkajs_rejoin/svc-a/app.log", 5): (
        "consumer:group:assignment_finished",
        "JS04",
        {s.GENERATION: 7, "protocol": "RoundRobinAssigner"},
    ),
    ("kafkajs_rejoin/svc-a/app.log", 7): (
        "consumer:group:assigned",
        "JS01",
        {s.PARTITIONS: ["shipments-0", "shipments-1", "shipments-2", "shipments-3"], "leader_id": JS_A, s.MEMBER_ID: JS_A},
    ),
    ("kafkajs_rejoin/svc-a/app.log", 9): (
        "consumer:group:revoked",
        "JS05",
        {s.MEMBER_ID: JS_A, "error": "The group is rebalancing, so a rejoin is needed", s.PARTITIONS: None},
    ),
    ("kafkajs_rejoin/svc-b/app.log", 4): ("consumer:group:joined", "JS02", {s.GENERATION: 8, s.MEMBER_ID: JS_B}),
    ("kafkajs_rejoin/svc-b/app.log", 5): (
        "consumer:group:assigned",
        "JS01",
        {s.PARTITIONS: ["shipments-0", "shipments-2"], "leader_id": JS_A},
    ),
    ("py-worker/container.log", 1): ("consumer:group:join_started", "PY04", {s.GROUP_ID: "orders-py"}),
    ("py-worker/container.log", 2): ("consumer:group:joined", "PY30", {s.GENERATION: 4, s.MEMBER_ID: PY_MEMBER, "protocol": "range"}),
    ("py-worker/container.log", 3): ("consumer:group:joined", "PY01", {s.GENERATION: 4, s.GROUP_ID: "orders-py"}),
    ("py-worker/container.log", 4): ("consumer:group:poll_timeout", "PY08", {s.CLIENT_ID: None}),
    ("franz_go_cooperative/consumer-a/app.log", 3): ("consumer:group:join_started", "GO01", {s.GROUP_ID: "ledger-app", s.LEVEL: "INFO"}),
    ("franz_go_cooperative/consumer-a/app.log", 4): (
        "consumer:group:joined",
        "GO02",
        {s.GENERATION: 1, s.MEMBER_ID: KGO_A, "leader_id": KGO_A, "protocol": "cooperative-sticky", s.INSTANCE_ID: None},
    ),
    ("franz_go_cooperative/consumer-a/app.log", 7): (
        "consumer:group:assignment_received",
        "GO04",
        {s.PARTITIONS: [f"ledger-{p}" for p in range(4)]},
    ),
    ("franz_go_cooperative/consumer-a/app.log", 15): (
        "consumer:group:assigned",
        "GO05",
        {s.PARTITIONS: [], "revoked_partitions": ["ledger-2", "ledger-3"]},
    ),
    ("franz_go_cooperative/consumer-a/app.log", 16): (
        "consumer:group:revoked",
        "GO07",
        {s.PARTITIONS: ["ledger-2", "ledger-3"], "reason": "cooperative consumer calling onRevoke"},
    ),
    ("franz_go_cooperative/consumer-a/app.log", 17): (
        "consumer:offset:commit_failed",
        "GO13",
        {s.TOPIC: "ledger", s.PARTITION: 2, s.OFFSET: 8200, "error": "27", s.LEVEL: "WARN"},
    ),
    ("franz_go_cooperative/consumer-a/app.log", 18): (
        "consumer:offset:commit_failed",
        "GO14",
        {s.TOPIC: None, "error": "REBALANCE_IN_PROGRESS: The group is rebalancing, so a rejoin is needed."},
    ),
    ("franz_go_cooperative/consumer-b/app.log", 4): (
        "consumer:group:joined",
        "GO03",
        {s.GENERATION: 2, s.MEMBER_ID: KGO_B, "leader_id": None},
    ),
    ("franz_go_cooperative/consumer-b/app.log", 5): ("consumer:group:assignment_received", "GO04", {s.PARTITIONS: []}),
    ("franz_go_cooperative/consumer-b/app.log", 7): (
        "consumer:group:heartbeat_failed",
        "GO10",
        {"error": "REBALANCE_IN_PROGRESS: The group is rebalancing, so a rejoin is needed."},
    ),
    ("franz_go_cooperative/consumer-b/app.log", 11): (
        "consumer:group:assigned",
        "GO05",
        {s.PARTITIONS: ["ledger-2", "ledger-3"], s.GROUP_ID: "ledger-app"},
    ),
    ("franz_go_cooperative/consumer-a/app.log", 10): (
        "consumer:offset:set_committed",
        "GO15",
        {s.PARTITIONS: ["ledger-2", "ledger-0", "ledger-3", "ledger-1"], s.TOPIC: None, s.OFFSET: None},
    ),
    ("franz_go_cooperative/consumer-b/app.log", 12): (
        "consumer:offset:set_committed",
        "GO15",
        {s.PARTITIONS: ["ledger-2", "ledger-3"], s.GROUP_ID: "ledger-app"},
    ),
}


@pytest.mark.parametrize("at", sorted(TYPED), ids=[f"{file}:{line}" for file, line in sorted(TYPED)])
def test_client_lines_become_the_java_clients_event_types(incidents, at):
    event_type, template, fields = TYPED[at]
    event = incidents.events.get(at)
    assert event is not None, f"{at} gave no event: {incidents.records.get(at, {}).get(s.MESSAGE)!r}"
    assert (event[s.EVENT_TYPE], event[s.TEMPLATE_ID]) == (event_type, template)
    assert {name: event[name] for name in fields} == fields


LEFT_OUT = {
    ("librdkafka_maxpoll/worker-a/app.log", 6),
    ("librdkafka_maxpoll/worker-a/app.log", 24),
    ("librdkafka_maxpoll/worker-a/app.log", 33),
    ("librdkafka_maxpoll/worker-b/app.log", 5),
    ("librdkafka_maxpoll/worker-b/app.log", 19),
    ("librdkafka_maxpoll/worker-b/app.log", 37),
    ("kafkajs_rejoin/svc-a/app.log", 1),
    ("kafkajs_rejoin/svc-a/app.log", 2),
    ("kafkajs_rejoin/svc-a/app.log", 3),
    ("kafkajs_rejoin/svc-b/app.log", 1),
    ("kafkajs_rejoin/svc-b/app.log", 2),
    ("kafkajs_rejoin/svc-b/app.log", 3),
    ("kafkajs_loggers/svc-c/app.log", 1),
    ("kafkajs_loggers/svc-c/app.log", 2),
    ("kafkajs_loggers/svc-c/app.log", 3),
    ("kafkajs_loggers/svc-d/app.log", 1),
    ("kafkajs_loggers/svc-d/app.log", 2),
    ("kafkajs_loggers/svc-d/app.log", 3),
    ("kafkajs_console/svc-e/app.log", 1),
    ("kafkajs_console/svc-e/app.log", 2),
    ("kafkajs_console/svc-e/app.log", 3),
    ("kafkajs_console/svc-f/app.log", 1),
    ("kafkajs_console/svc-f/app.log", 2),
    ("kafkajs_console/svc-f/app.log", 3),
}
"""Client lines no template types, on purpose: librdkafka's "List with N partition(s):" head and
"Committing offsets for N partition(s)" (the per-partition lines say more), KafkaJS's "[Consumer]
Starting" and its "[Connection]" protocol traces."""


def test_only_the_lines_left_out_stay_unrecognised(incidents):
    unrecognised = {at: record[s.MESSAGE] for at, record in incidents.records.items() if at not in incidents.events}
    assert set(unrecognised) == LEFT_OUT, unrecognised


KAFKAJS_HOSTS = {"tracking": ("svc-c", "svc-d"), "parcel": ("svc-e", "svc-f")}
"""The name of each KafkaJS twin's group and client -> its hosts, kafkajs_rejoin's svc-a and svc-b."""


def kafkajs_twin(text: str, name: str) -> str:
    """kafkajs_rejoin's ``text`` (a host, client or member) in the names of its twin ``name``."""
    host_a, host_b = KAFKAJS_HOSTS[name]
    return text.replace("svc-a", host_a).replace("svc-b", host_b).replace("shipping", name)


KAFKAJS_TWINS = {
    "kafkajs_loggers/svc-c/app.log": ("kafkajs_rejoin/svc-a/app.log", "tracking", "kafkajs", 9),
    "kafkajs_loggers/svc-d/app.log": ("kafkajs_rejoin/svc-b/app.log", "tracking", "kafkajs", 2),
    "kafkajs_console/svc-e/app.log": ("kafkajs_rejoin/svc-a/app.log", "parcel", None, 9),
    "kafkajs_console/svc-f/app.log": ("kafkajs_rejoin/svc-b/app.log", "parcel", None, 2),
}
"""A KafkaJS log through a custom log creator -> the same lines through KafkaJS's own, the name
its group and client have instead of ``shipping``, the logger its records name (the text form
names none), its typed events."""


@pytest.mark.parametrize("twin", sorted(KAFKAJS_TWINS))
def test_kafkajs_through_custom_log_creators_gives_what_its_own_gives(incidents, twin):
    """Winston's sorted keys, the fields nested in ``extra`` with no namespace, no logger field, or
    the documentation's text form behind ``kubectl logs --timestamps``: the same records, levels,
    times and typed events as KafkaJS's own JSON lines."""
    own_file, name, logger, typed = KAFKAJS_TWINS[twin]

    def seen(file: str) -> dict:
        records = {line: r for (f, line), r in incidents.records.items() if f == file}
        events = {line: e for (f, line), e in incidents.events.items() if f == file}
        fields = (s.EVENT_TYPE, s.TEMPLATE_ID, s.GROUP_ID, s.MEMBER_ID, s.GENERATION, "leader_id", "protocol", s.PARTITIONS, "error")
        return {
            line: (
                hms(r[s.TS]),
                r[s.LEVEL],
                r[s.LOGGER] if file == own_file else r[s.LOGGER] or "kafkajs",
                tuple(events[line][name] for name in fields) if line in events else None,
            )
            for line, r in records.items()
        }

    own = json.loads(json.dumps(seen(own_file)).replace("shipping", name))
    assert json.loads(json.dumps(seen(twin))) == own
    assert sum(event is not None for *_, event in own.values()) == typed
    assert {r[s.LOGGER] for (f, _), r in incidents.records.items() if f == twin} == {logger}


def test_kafkajs_context_fields_follow_the_message(incidents):
    record = incidents.records[("kafkajs_rejoin/svc-b/app.log", 5)]
    assert (record[s.LOGGER], record[s.LEVEL]) == ("kafkajs", "INFO")
    assert record[s.MESSAGE] == (
        f'[ConsumerGroup] Consumer has joined the group {{"groupId":"shipping-app","memberId":"{JS_B}","leaderId":"{JS_A}",'
        '"isLeader":false,"memberAssignment":{"shipments":[0,2]},"groupProtocol":"RoundRobinAssigner","duration":1433}'
    )


# (group, generation) -> members, joined, left, trigger, start, end, duration_ms, moved, leader
REBALANCES = {
    ("orders-app", 3): (
        [WORKER_A, WORKER_B],
        [],
        [],
        "first generation in the logs (earlier history not logged)",
        "14:00:01.203",
        "14:00:04.319",
        3116,
        [
            f"orders-0: (none) -> {WORKER_A}",
            f"orders-1: (none) -> {WORKER_A}",
            f"orders-2: (none) -> {WORKER_B}",
            f"orders-3: (none) -> {WORKER_B}",
        ],
        WORKER_A,  # its JoinGroup response: "LeaderId <its member id> (me)"
    ),
    ("orders-app", 4): (
        [WORKER_B],
        [],
        [WORKER_A],
        "member left: poll timeout (max.poll.interval.ms)",
        "14:07:05.412",
        "14:07:05.739",
        327,
        [f"orders-0: {WORKER_A} -> {WORKER_B}", f"orders-1: {WORKER_A} -> {WORKER_B}"],
        WORKER_B,
    ),
    ("orders-app", 5): (
        [WORKER_A, WORKER_B],
        [WORKER_A],
        [],
        "member joined (scale-up or restart)",
        "14:07:41.150",
        "14:07:41.572",
        422,
        [f"orders-0: {WORKER_B} -> {WORKER_A}", f"orders-1: {WORKER_B} -> {WORKER_A}"],
        WORKER_B,
    ),
    ("billing-app", 11): (
        [APP_A],
        [],
        [],
        "first generation in the logs (earlier history not logged)",
        "14:10:00.307",
        "14:10:03.431",
        3124,
        [f"payments-0: (none) -> {APP_A}", f"payments-1: (none) -> {APP_A}"],
        APP_A,
    ),
    ("billing-app", 12): (
        [APP_A, APP_B],
        [APP_B],
        [],
        "member joined (scale-up or restart)",
        "14:11:00.300",
        "14:11:01.421",
        1121,
        [f"payments-1: {APP_A} -> {APP_B}"],
        APP_A,
    ),
    ("shipping-app", 7): (
        [SVC_A],
        [],
        [],
        "first generation in the logs (earlier history not logged)",
        "14:20:03.210",
        "14:20:03.260",
        50,
        [f"shipments-{p}: (none) -> {SVC_A}" for p in range(4)],
        SVC_A,
    ),
    ("shipping-app", 8): (
        [SVC_A, SVC_B],
        [SVC_B],
        [],
        "member joined (scale-up or restart)",
        "14:21:01.305",
        "14:21:01.553",
        248,
        [f"shipments-0: {SVC_A} -> {SVC_B}", f"shipments-2: {SVC_A} -> {SVC_B}"],
        SVC_A,
    ),
    ("ledger-app", 1): (
        [GO_A],
        [],
        [],
        "first generation in the logs (earlier history not logged)",
        "14:30:00.102",
        "14:30:03.220",
        3118,
        [f"ledger-{p}: (none) -> {GO_A}" for p in range(4)],
        GO_A,
    ),
    ("ledger-app", 2): ([GO_A, GO_B], [GO_B], [], "member joined (scale-up or restart)", "14:31:03.103", "14:31:03.342", 239, [], GO_A),
    ("ledger-app", 3): (
        [GO_A, GO_B],
        [],
        [],
        "cooperative follow-up round (partitions revoked in the previous one)",
        "14:31:03.341",
        "14:31:03.381",
        39,
        [f"ledger-2: {GO_A} -> {GO_B}", f"ledger-3: {GO_A} -> {GO_B}"],
        GO_A,
    ),
}


def test_rebalances_of_every_client(incidents):
    got = {
        key: (
            row["members"],
            row["members_joined"],
            row["members_left"],
            row["trigger"],
            hms(row["start_ts"]),
            hms(row["end_ts"]),
            row["duration_ms"],
            row["moved"],
            row["leader"],
        )
        for key, row in incidents.rebalances.items()
        if key[0] in ("orders-app", "billing-app", "shipping-app", "ledger-app")
    }
    assert got == REBALANCES
    for name in KAFKAJS_HOSTS:  # each KafkaJS twin's rebalances are shipping-app's, in its names
        assert {
            key: (row["members"], row["trigger"], hms(row["start_ts"]), hms(row["end_ts"]), row["moved"], row["leader"])
            for key, row in incidents.rebalances.items()
            if key[0] == f"{name}-app"
        } == {
            (f"{name}-app", n): (
                [kafkajs_twin(m, name) for m in members],
                trigger,
                start,
                end,
                [kafkajs_twin(m, name) for m in moved],
                kafkajs_twin(leader, name),
            )
            for (group, n), (members, _, _, trigger, start, end, _, moved, leader) in REBALANCES.items()
            if group == "shipping-app"
        }, name


@pytest.mark.parametrize(
    "topic, partition, intervals",
    [
        (
            "orders",
            1,
            [
                ("worker-a", "rdkafka#consumer-1", 3, "14:00:04.319", "14:07:05.412", "member left"),
                ("worker-b", "rdkafka#consumer-1", 4, "14:07:05.739", "14:07:41.303", "revoked"),
                ("worker-a", "rdkafka#consumer-1", 5, "14:07:41.572", None, "end of logs"),
            ],
        ),
        (
            "payments",
            1,
            [
                ("app-a", "aiokafka-0.12.0", 11, "14:10:03.431", "14:11:01.370", "revoked"),
                ("app-b", "aiokafka-0.12.0", 12, "14:11:01.421", None, "end of logs"),
            ],
        ),
        (
            "shipments",
            2,
            [
                ("svc-a", "shipping-svc", 7, "14:20:03.260", "14:21:01.305", "revoked"),
                ("svc-b", "shipping-svc", 8, "14:21:01.553", None, "end of logs"),
            ],
        ),
        (
            "ledger",
            2,
            [  # revoked in the first cooperative round (generation 2), acquired in the second
                ("consumer-a", "kgo", 1, "14:30:03.220", "14:31:03.341", "revoked"),
                ("consumer-b", "kgo", 3, "14:31:03.381", None, "end of logs"),
            ],
        ),
        ("ledger", 0, [("consumer-a", "kgo", 1, "14:30:03.220", None, "end of logs")]),  # kept through both rounds
    ],
)
def test_ownership_of_a_partition(incidents, topic, partition, intervals):
    rows = sorted((r for r in incidents.ownership if (r[s.TOPIC], r[s.PARTITION]) == (topic, partition)), key=lambda r: r["from_ts"])
    seen = [(r[s.HOST], r[s.CLIENT_ID], r[s.GENERATION], hms(r["from_ts"]), hms(r["to_ts"]), r["ended"]) for r in rows]
    twin_hosts = {host: name for name, hosts in KAFKAJS_HOSTS.items() for host in hosts}
    assert [interval for interval in seen if interval[0] not in twin_hosts] == intervals
    for name in KAFKAJS_HOSTS if topic == "shipments" else ():  # the KafkaJS twins' groups own it too
        twins = [(kafkajs_twin(h, name), kafkajs_twin(c, name), *rest) for h, c, *rest in intervals]
        assert [interval for interval in seen if twin_hosts.get(interval[0]) == name] == twins


def test_franz_go_positions_of_all_partitions_in_one_line_are_one_commit_row_each(incidents):
    """franz-go's ``assigning partitions .. input: ledger[2{8000 e0 ce0} 0{..} 3{-2 e-1 ce-1} ..]``
    gives each partition its resume position, in the line's order, on that line; ``-2`` (the log
    start) is a partition with no committed offset."""
    got = [
        (where(row[s.SOURCE_FILE]), row[s.LINE], row[s.PARTITION], row["kind"], row[s.OFFSET], row["member"], row[s.GENERATION])
        for row in incidents.commits
        if row[s.GROUP_ID] == "ledger-app"
    ]
    a, b = "franz_go_cooperative/consumer-a/app.log", "franz_go_cooperative/consumer-b/app.log"
    assert sorted(got, key=lambda row: (row[0], row[1], row[2])) == [
        (a, 10, 0, "position from commit", 5100, GO_A, 1),
        (a, 10, 1, "position from commit", 6020, GO_A, 1),
        (a, 10, 2, "position from commit", 8000, GO_A, 1),
        (a, 10, 3, "no committed offset", None, GO_A, 1),
        (a, 17, 2, "commit failed", 8200, GO_A, 2),
        (b, 12, 2, "position from commit", 8100, GO_B, 3),
        (b, 12, 3, "position from commit", 9050, GO_B, 3),
    ]


def test_findings_with_exact_offsets_and_evidence(incidents):
    got = [
        (
            f["detector"],
            f["group"],
            f["topic"],
            f["partition"],
            f["offset_from"],
            f["offset_to"],
            f["records"],
            f["verdict"],
            f["member"],
            [(where(e["file"]), e["line"]) for e in f["evidence"]],
        )
        for f in incidents.findings
    ]
    aiokafka_failure = next(e for e in got if e[2:4] == ("payments", 1))[-1][0]
    assert aiokafka_failure in {("aiokafka_commit/app-a/app.log", 15), ("aiokafka_commit/app-a/app.log", 16)}  # one line per partition
    failure_p0 = next(e for e in got if e[2:4] == ("payments", 0))[-1][0]
    assert failure_p0 in {("aiokafka_commit/app-a/app.log", 15), ("aiokafka_commit/app-a/app.log", 16)}
    assert got == [
        ("poll_timeout", "orders-app", None, None, None, None, None, "delay", WORKER_A, [("librdkafka_maxpoll/worker-a/app.log", 16)]),
        (
            "poll_timeout",
            "orders-py",
            None,
            None,
            None,
            None,
            None,
            "delay",
            "py-worker/kafka-python-2.0.2",
            [("py-worker/container.log", 4)],
        ),
        (
            "reprocessing",
            "billing-app",
            "payments",
            0,
            5120,
            5250,
            130,
            "expected",
            APP_A,
            [failure_p0, ("aiokafka_commit/app-a/app.log", 23)],
        ),
        (
            "reprocessing",
            "billing-app",
            "payments",
            1,
            7410,
            7520,
            110,
            "expected",
            APP_B,
            [aiokafka_failure, ("aiokafka_commit/app-b/app.log", 7)],
        ),
        (
            "reprocessing",
            "ledger-app",
            "ledger",
            2,
            8100,
            8200,
            100,
            "expected",
            GO_B,
            [("franz_go_cooperative/consumer-a/app.log", 17), ("franz_go_cooperative/consumer-b/app.log", 12)],
        ),
        (
            "reprocessing",
            "orders-app",
            "orders",
            1,
            4100,
            4200,
            100,
            "expected",
            WORKER_B,
            [("librdkafka_maxpoll/worker-a/app.log", 25), ("librdkafka_maxpoll/worker-b/app.log", 27)],
        ),
    ]


def test_partition_lists_in_every_clients_notation(spark):
    texts = [
        "{TopicPartition(topic='orders', partition=0), TopicPartition(topic='my.topic-v2', partition=10)}",
        "frozenset({TopicPartition(topic='orders', partition=1)})",
        "set()",
        "orders [3]",
        '{"orders":[0,2],"audit":[1]}',
        "{}",
        "[orders-0, orders-1]",
        FAUST_FILE_TABLE,
        FAUST_TERMINAL_TABLE,
        FAUST_TERMINAL_TABLE.replace("{6-8}", "{0-999999999}"),
        "orders[0 1 2], my.topic-v2[10]",
        "map[my.topic-v2:[10] orders:[3]]",
        "map[]",
    ]
    rows = spark.createDataFrame([(t,) for t in texts], "text string").select(f.partition_list(F.col("text"))).collect()
    assert [row[0] for row in rows] == [
        ["orders-0", "my.topic-v2-10"],
        ["orders-1"],
        [],
        ["orders-3"],
        ["orders-0", "orders-2", "audit-1"],
        [],
        ["orders-0", "orders-1"],
        ["app-__assignor-__leader-0", "orders-0", "orders-1", "orders-2", "orders-5", "orders-10", "orders-11", "orders.v2-7"],
        ["my-topic-6", "my-topic-7", "my-topic-8"],
        None,  # log text, not a table Faust wrote: too many to count out
        ["orders-0", "orders-1", "orders-2", "my.topic-v2-10"],
        ["my.topic-v2-10", "orders-3"],
        [],  # franz-go's, and a Go map
    ]


GO_POSITIONS = {
    "orders[1{4100 e3 ce3} 0{-2 e-1 ce-1}], my.topic-v2[10{77 e0 ce0}]": [("orders", 1, 4100), ("orders", 0, -2), ("my.topic-v2", 10, 77)],
    "orders[1{4100.3 3} 2{-1.-1 -1}]": [("orders", 1, 4100), ("orders", 2, -1)],  # v1.2.4-v1.4
    "orders[1{4100=>4200}, 2{7000=>7100}], audit[0{12=>15}]": [("orders", 1, 4200), ("orders", 2, 7100), ("audit", 0, 15)],  # a commit
    "map[orders:map[1:{4100.3~3} 2:{-2+5.-1~-1}]]": [("orders", 1, 4100), ("orders", 2, -2)],  # v1.2.3, a Go map; relative to the start
    '{"orders":{"1":{"At":4100,"Epoch":3,"CurrentEpoch":3},"2":{"At":-2,"Relative":5,"Epoch":-1,"CurrentEpoch":-1}}}': [
        ("orders", 1, 4100),
        ("orders", 2, -2),
    ],  # slog's JSON handler (Offset.MarshalJSON)
    "": [],
}
"""franz-go's partitions with their offsets, in each form its versions and loggers print, and what they read."""


def test_franz_go_positions_in_every_form(spark):
    rows = (
        spark.createDataFrame([(t,) for t in GO_POSITIONS], "text string")
        .select(f.go_positions(F.col("text")).alias("positions"), f.partition_list(F.col("text")).alias("partitions"))
        .collect()
    )
    assert [[tuple(p) for p in row["positions"]] for row in rows] == list(GO_POSITIONS.values())
    assert [row["partitions"] for row in rows] == [[f"{t}-{p}" for t, p, _ in expected] for expected in GO_POSITIONS.values()]


FAUST_FILE_TABLE = """\
+Topic Partition Set------+-----------------+
| topic                   | partitions      |
+-------------------------+-----------------+
| app-__assignor-__leader | {0}             |
| orders                  | {0-2, 5, 10-11} |
| orders.v2               | {7}             |
+-------------------------+-----------------+"""
"""A Faust worker's table of partitions in a log file (terminaltables' AsciiTable)."""
FAUST_TERMINAL_TABLE = """\
┌Topic Partition Set┬────────────┐
│ topic             │ partitions │
├───────────────────┼────────────┤
│ my-topic          │ {6-8}      │
└───────────────────┴────────────┘"""
"""The same table drawn for a terminal, as copied from it (robinhood/faust#678)."""


def test_librdkafka_line_through_an_applications_logger_names_facility_and_handle(spark):
    message = "MAXPOLL [orders-svc#consumer-2] [thrd:main]: Application maximum poll interval (300000ms) exceeded by 12ms"
    row = spark.createDataFrame([(message,)], "m string").select(split_prefix(F.col("m")).alias("p")).first()["p"]
    assert (row["facility"], row["client_id"], row["rest"]) == ("MAXPOLL", "orders-svc#consumer-2", message.split("]: ", 1)[1])


HANDLER_OPENINGS = [
    ("[CGRPSTATE] orders-svc#consumer-2: [thrd:main]: ", "CGRPSTATE", "orders-svc#consumer-2"),  # Microsoft.Extensions.Logging's adapter
    ("Debug | [thrd:main]: ", "", None),
    ("[7] rdkafka#consumer-1 > [thrd:main]: ", "", "rdkafka#consumer-1"),
    ("From(orders-svc#consumer-2) [thrd:main]: ", "", "orders-svc#consumer-2"),
    ("rdkafka: [thrd:main]: ", "", None),  # rdkafka-ruby
    ("[Consumer clientId=c-1, groupId=orders-app] ", None, "c-1"),  # not librdkafka's: the logger names the class
]
"""Openings of a librdkafka line that an application's log handler decorated, and one of the
Java client's: (opening, facility, client id)."""
JOIN_STATE = 'Group "orders-app" changed join state wait-sync -> wait-assign-call (state up)'


@pytest.mark.parametrize(("message", "facility", "client_id"), HANDLER_OPENINGS)
def test_librdkafka_lines_an_applications_handler_decorated_in_its_own_way(spark, message, facility, client_id):
    """A librdkafka line is known by its ``[thrd:name]: `` where a handler put its own words before
    it; it names no facility then (``""``: the application's logger is none of librdkafka's)."""
    text = message + JOIN_STATE
    row = spark.createDataFrame([(text,)], "m string").select(split_prefix(F.col("m")).alias("p")).first()["p"]
    assert (row["facility"], row["client_id"], row["rest"]) == (facility, client_id, text[len(message) :])


def test_only_messages_that_name_a_librdkafka_handle_or_thread_meet_the_callback_regexes(spark):
    """``prefix.CALLBACK_MARKS`` keeps the other messages from ``_callback``'s regexes: on every
    example of the catalogue and every opening above, the marks change nothing, and the openings
    of librdkafka's lines all hold one."""
    from forensics.catalogue import load_catalogue
    from forensics.events.prefix import CALLBACK_MARKS, _callback, _callback_split

    openings = [opening for opening, _, _ in HANDLER_OPENINGS] + [
        "MAXPOLL [orders-svc#consumer-2] [thrd:main]: ",
        "RDKAFKA-7-CGRPSTATE: rdkafka#consumer-1: ",
    ]
    texts = [t.example for t in load_catalogue() if t.example] + [opening + JOIN_STATE for opening in openings]
    rows = (
        spark.createDataFrame([(t,) for t in texts], "m string")
        .select("m", _callback(F.col("m")).alias("marked"), _callback_split(F.col("m")).alias("every"))
        .collect()
    )
    assert [r["marked"] for r in rows] == [r["every"] for r in rows]
    assert sum(r["every"][0] is not None or r["every"][1] != "" for r in rows) >= len(openings) - 1  # all but the Java client's opening
    assert all(any(mark in r["m"] for mark in CALLBACK_MARKS) for r in rows if r["every"][1] != "" or r["every"][0] is not None)


def test_librdkafka_text_that_serilog_rendered_as_a_quoted_string(spark):
    """Serilog renders a string property in quotes, escaping the quotes inside: the text is read
    up to its closing quote, unescaped (the handler's own words after it are not the line's)."""
    message = r'"rdkafka#consumer-5": "[thrd:main]: Group \"orders-app\" changed join state wait-sync -> steady (state up)"; level: Debug'
    row = spark.createDataFrame([(message,)], "m string").select(split_prefix(F.col("m")).alias("p")).first()["p"]
    assert (row["facility"], row["client_id"]) == ("", "rdkafka#consumer-5")
    assert row["rest"] == 'Group "orders-app" changed join state wait-sync -> steady (state up)'


def test_python_clients_unknown_member_heartbeat_is_a_session_expiry(spark):
    """kafka-python's and aiokafka's heartbeat answered UNKNOWN_MEMBER_ID (PY31, PY32) shows the
    coordinator expired the member's session, as the Java client's "member id .. is not valid"."""
    from forensics.detect.group import session_timeout_lines

    rows = [
        ("consumer:group:heartbeat_failed", "Heartbeat: local member_id was not recognized; this consumer needs to re-join"),
        ("consumer:group:heartbeat_failed", "Heartbeat failed: local member_id was not recognized; resetting and re-joining group"),
        ("consumer:group:heartbeat_failed", "Heartbeat failed for group orders-app because it is rebalancing"),
    ]
    frame = spark.createDataFrame(rows, f"{s.EVENT_TYPE} string, {s.MESSAGE} string").selectExpr(
        "*", "cast(null as string) as error", "cast(null as string) as reason"
    )
    assert [bool(r[0]) for r in frame.select(session_timeout_lines(frame)).collect()] == [True, True, False]


def test_a_layout_printing_the_callers_class_names_abstract_coordinator_for_its_lines(spark, tmp_path):
    """``%d{HH:mm:ss.SSS} [%level] [%class:%line] [%thread] - %msg`` (confluentinc/parallel-consumer's
    logs): from Kafka 3.0 AbstractCoordinator's lines come under ConsumerCoordinator's logger, but
    a layout of the caller's class names AbstractCoordinator; they are typed all the same."""
    from forensics.catalogue import load_catalogue
    from forensics.events import parse_events
    from tests.helpers import ingest_paths

    prefix = "[Consumer instanceId=6588bffbc4-nnnzc, clientId=consumer-my-consumer-6588bffbc4-nnnzc, groupId=my-consumer]"
    (tmp_path / "pc.log").write_text(
        "\n".join(
            [
                f"22:33:44.055 [INFO] [org.apache.kafka.clients.consumer.internals.AbstractCoordinator:1072] [pc-broker-poll] - {prefix} "
                "Request joining group due to: group is already rebalancing",
                f"22:33:44.055 [INFO] [org.apache.kafka.clients.consumer.internals.ConsumerCoordinator:338] [pc-broker-poll] - {prefix} "
                "Revoke previously assigned partitions my-topic-12, my-topic-13",
            ]
        )
        + "\n"
    )
    events = parse_events(ingest_paths(spark, tmp_path / "pc.log").records).collect()
    assert [(e["line"], e["event_type"], e["thread"]) for e in sorted(events, key=lambda e: e["line"])] == [
        (1, "consumer:group:join_requested", "pc-broker-poll"),
        (2, "consumer:group:revoked", "pc-broker-poll"),
    ]
    joined = next(t for t in load_catalogue() if t.reference_id == "G05")
    assert {"ConsumerCoordinator", "WorkerCoordinator", "AbstractCoordinator"} <= set(joined.loggers)


RDK_EXCERPT = [
    # librdkafka 1.x: subscribe() logs SUBSCRIBE, then clears the previous subscription without leaving (UNSUBSCRIBE)
    '%7|1710165600.101|SUBSCRIBE|rdkafka#consumer-1| [thrd:main]: Group "hechen_test": subscribe to new subscription of 1 topics (join state init)',
    '%7|1710165600.101|UNSUBSCRIBE|rdkafka#consumer-1| [thrd:main]: Group "hechen_test": unsubscribe from current unset subscription of 0 topics '
    "(leave group=no, join state init, v1)",
    '%7|1710165600.412|MEMBERID|rdkafka#consumer-1| [thrd:main]: Group "hechen_test": updating member id "(not-set)" -> '
    '"rdkafka-a3bd5c1e-7f20-4a8b-9c3d-2e1f0a9b8c7d"',
    '%7|1710165603.412|HEARTBEAT|rdkafka#consumer-1| [thrd:main]: GroupCoordinator/1: Heartbeat for group "hechen_test" generation id 3537',
    '%7|1710165603.900|UNASSIGN|rdkafka#consumer-1| [thrd:main]: Group "hechen_test": unassign done in state up (join state wait-unassign): '
    "without new assignment: unassign (no previous assignment)",
    "%7|1710165604.001|CLOSE|rdkafka#consumer-1| [thrd:main]: Closing consumer",
    "%7|1710165604.002|CLOSE|rdkafka#consumer-1| [thrd:main]: Waiting for close events",
    # librdkafka 1.6+
    '%7|1710165610.200|SUBSCRIBE|rdkafka#consumer-2| [thrd:main]: Group "node.rb-e4ef35230e0d_app": subscribe to new subscription of 2 topics '
    "(join-state init)",
    '%7|1710165612.517|REJOIN|rdkafka#consumer-2| [thrd:main]: Group "node.rb-e4ef35230e0d_app": Rejoining group without an assignment: '
    "SyncGroup error: Broker: Group rebalance in progress",
    '%7|1710165650.030|SUBSCRIBE|rdkafka#consumer-2| [thrd:main]: Group "node.rb-e4ef35230e0d_app": subscribe to new unset subscription of 0 topics '
    "(join-state steady)",
]
"""librdkafka lines from analysts' excerpts (native layout): subscriptions (RDK60, RDK61) and the
rejoin after a failed SyncGroup (RDK59) are typed as the Java client's; the rest on purpose not:
unsubscribe() ("unset subscription", and 1.x's clearing of the old subscription inside
subscribe()), member id updates (the JoinGroup lines carry the id), heartbeats, unassign steps and
close() (the LeaveGroup itself is RDK33/RDK34; a static member closes without leaving)."""


def test_librdkafka_subscribe_and_syncgroup_rejoin_lines_from_analysts_excerpts(spark, tmp_path):
    from tests.helpers import ingest_paths

    (tmp_path / "rdkafka.log").write_text("\n".join(RDK_EXCERPT) + "\n", encoding="utf-8")
    ingested = ingest_paths(spark, tmp_path / "rdkafka.log")
    assert (ingested.accounting["records"], ingested.accounting["unparsed"]) == (len(RDK_EXCERPT), 0)
    events = parse_events(ingested.records).collect()
    got = {
        e[s.LINE]: (e[s.EVENT_TYPE], e[s.TEMPLATE_ID], e[s.LEVEL], e[s.LOGGER], e[s.CLIENT_ID], e[s.GROUP_ID], e["error"], e[s.TOPIC])
        for e in events
    }
    assert got == {
        1: ("consumer:subscribed", "RDK60", "DEBUG", "SUBSCRIBE", "rdkafka#consumer-1", "hechen_test", None, None),
        8: ("consumer:subscribed", "RDK61", "DEBUG", "SUBSCRIBE", "rdkafka#consumer-2", "node.rb-e4ef35230e0d_app", None, None),
        9: (
            "consumer:group:sync_failed",
            "RDK59",
            "DEBUG",
            "REJOIN",
            "rdkafka#consumer-2",
            "node.rb-e4ef35230e0d_app",
            "Broker: Group rebalance in progress",
            None,
        ),
    }


FRANZ_GO_LINES = [
    "[INFO] joining group; group: orders-app",
    "[INFO] joined; group: orders-app, member_id: kgo-0d9e8f7a-6b5c-4d3e-8f1a-0b9c8d7e6f5a, instance_id: <nil>, generation: 7, leader: false",
    "[INFO] beginning heartbeat loop; group: orders-app",
    "[INFO] synced; group: orders-app, assigned: orders[2 3]",
]
"""franz-go's ``kgo.BasicLogger`` with no prefix (its examples' ``BasicLogger(os.Stderr, level, nil)``)."""


@pytest.mark.parametrize("prefix, layout, ts", [("", "message_only", None), ("2024/03/11 14:02:17 ", "generic", "14:02:17.000")])
def test_franz_go_basic_logger_pasted_bare_or_behind_a_time_prefix(spark, tmp_path, prefix, layout, ts):
    """Pasted as it was written (no time: a ``message_only`` head by its level and words) or with
    the time an application's ``prefixFn`` (or Go's ``log``) wrote before it: the same events. A
    franz-go line that types no event (``beginning heartbeat loop``) is application noise where it
    is dated, and in an untimed paste continues the record above it, as any line that opens none."""
    from ..helpers import ingest_paths

    path = tmp_path / "consumer.log"
    path.write_text("".join(f"{prefix}{line}\n" for line in FRANZ_GO_LINES))
    result = ingest_paths(spark, path)
    events = {e[s.LINE]: e for e in parse_events(result.records).collect()}
    noise = "continuations" if ts is None else "irrelevant"
    assert (result.inputs[0]["layout"], result.accounting["records"], result.accounting[noise], result.accounting["unparsed"]) == (
        layout,
        3,
        1,
        0,
    )
    assert {line: (e[s.EVENT_TYPE], e[s.LEVEL], hms(e[s.TS]), e[s.GENERATION], e[s.PARTITIONS]) for line, e in events.items()} == {
        1: ("consumer:group:join_started", "INFO", ts, None, None),
        2: ("consumer:group:joined", "INFO", ts, 7, None),
        4: ("consumer:group:assignment_received", "INFO", ts, None, ["orders-2", "orders-3"]),
    }


FRANZ_GO_TWINS = [
    (
        '{"level":"info","ts":1710167463.205,"logger":"kafka","caller":"kzap/kzap.go:110","msg":"joined, balancing group","group":"ledger-app",'
        f'"member_id":"{KGO_A}","instance_id":"<nil>","generation":1,"balance_protocol":"cooperative-sticky","leader":true}}',
        f"[INFO] joined, balancing group; group: ledger-app, member_id: {KGO_A}, instance_id: <nil>, generation: 1, balance_protocol: cooperative-sticky, leader: true",
    ),
    (
        '{"level":"info","ts":1710167463.22,"logger":"kafka","msg":"synced","group":"ledger-app","assigned":"ledger[0 1 2 3]"}',
        "[INFO] synced; group: ledger-app, assigned: ledger[0 1 2 3]",
    ),
    (
        '{"time":"2024-03-11T14:31:03.3418Z","level":"INFO","msg":"cooperative consumer calling onRevoke","component":"kafka","group":"ledger-app",'
        '"lost":{"ledger":[2,3]},"stage":1}',
        "[INFO] cooperative consumer calling onRevoke; group: ledger-app, lost: map[ledger:[2 3]], stage: 1",
    ),
    (
        '{"level":"warn","ts":1710167463.352,"msg":"unable to commit offset for topic partition","group":"ledger-app","topic":"ledger","partition":2,'
        '"commit_from":8100,"commit_to":8200,"commit_epoch":0,"error_code":27}',
        "[WARN] unable to commit offset for topic partition; group: ledger-app, topic: ledger, partition: 2, commit_from: 8100, commit_to: 8200, commit_epoch: 0, error_code: 27",
    ),
    (
        '{"time":"2024-03-11T14:31:03.381Z","level":"INFO","msg":"new group session begun","group":"ledger-app","added":{"ledger":[2,3]},"lost":{}}',
        "[INFO] new group session begun; group: ledger-app, added: ledger[2 3], lost: ",
    ),
    (
        '{"level":"info","ts":1710167463.384,"logger":"kafka","msg":"assigning partitions","why":"newly fetched offsets for group ledger-app",'
        '"how":"assigning everything new, keeping current assignment","input":"ledger[3{9050 e0 ce0} 2{8100 e0 ce0}]"}',
        "[INFO] assigning partitions; why: newly fetched offsets for group ledger-app, how: assigning everything new, keeping current assignment, "
        "input: ledger[3{9050 e0 ce0} 2{8100 e0 ce0}]",
    ),
    (
        '{"time":"2024-03-11T14:31:03.384Z","level":"INFO","msg":"assigning partitions","component":"kafka","why":"newly fetched offsets for group '
        'ledger-app","how":0,"input":{"ledger":{"2":{"At":8100,"Epoch":0,"CurrentEpoch":0},"3":{"At":-2,"Epoch":-1,"CurrentEpoch":-1}}}}',
        "[INFO] assigning partitions; why: newly fetched offsets for group ledger-app, how: assigning everything new, keeping current assignment, "
        "input: ledger[2{8100 e0 ce0} 3{-2 e-1 ce-1}]",
    ),
    (
        '{"@service":"benthos","err":"REBALANCE_IN_PROGRESS: The group is rebalancing, so a rejoin is needed.","group":"ledger-app",'
        '"label":"ledger_input","level":"info","msg":"heartbeat errored","path":"root.input","time":"2024-03-11T14:31:03Z"}',
        "[INFO] heartbeat errored; group: ledger-app, err: REBALANCE_IN_PROGRESS: The group is rebalancing, so a rejoin is needed.",
    ),
    (
        '{"@service":"benthos","commit_epoch":0,"commit_from":8100,"commit_to":8200,"error_code":27,"group":"ledger-app","label":"ledger_input",'
        '"level":"warning","msg":"unable to commit offset for topic partition","partition":2,"path":"root.input","time":"2024-03-11T14:31:03Z","topic":"ledger"}',
        "[WARN] unable to commit offset for topic partition; group: ledger-app, topic: ledger, partition: 2, commit_from: 8100, commit_to: 8200, commit_epoch: 0, error_code: 27",
    ),
]
"""franz-go's lines as JSON (zap through ``kzap``, with its named logger and caller, a ``fmt.Stringer`` as its
text; ``log/slog``'s JSON handler through ``kslog``, with a context field, a Go map as a JSON object and other
values as ``json.Marshal`` writes them: ``assignHow`` a number, ``Offset`` its ``MarshalJSON``; Benthos's
logrus JSON with its keys sorted, franz-go's among its own) and as ``kgo.BasicLogger`` writes them."""


def test_franz_go_through_zap_and_slog_json_gives_the_basic_loggers_events(spark, tmp_path):
    """A zap or slog logger's own name and fields do not hide a franz-go line: its fields follow
    its message in ``kgo.BasicLogger``'s form, and each line gives its twin's event."""
    from ..helpers import ingest_paths

    fields = (
        s.EVENT_TYPE,
        s.TEMPLATE_ID,
        s.LEVEL,
        s.GROUP_ID,
        s.MEMBER_ID,
        s.GENERATION,
        "leader_id",
        "protocol",
        s.PARTITIONS,
        s.TOPIC,
        s.PARTITION,
        s.OFFSET,
        "error",
        "reason",
    )

    def events(name: str, lines: list[str]) -> list[tuple]:
        path = tmp_path / name
        path.write_text("".join(f"{line}\n" for line in lines))
        typed = {e[s.LINE]: tuple(e[field] for field in fields) for e in parse_events(ingest_paths(spark, path).records).collect()}
        return [typed.get(line) for line in range(1, len(lines) + 1)]

    as_json = events("json.log", [pair[0] for pair in FRANZ_GO_TWINS])
    assert as_json == events("basic.log", [pair[1] for pair in FRANZ_GO_TWINS])
    assert [event[1] for event in as_json] == ["GO02", "GO04", "GO07", "GO13", "GO05", "GO15", "GO15", "GO10", "GO13"]
    assert [event[8] for event in as_json[4:7]] == [["ledger-2", "ledger-3"], ["ledger-3", "ledger-2"], ["ledger-2", "ledger-3"]]


KGO_848 = "3kQ2m9XwTgq1L0pVb7yZcA=="
FRANZ_GO_848 = [
    ("09:14:05.101", "beginning to manage the next-gen group lifecycle; group: ledger-app"),
    (
        "09:14:05.118",
        f"consumer group initial heartbeat received assignment; group: ledger-app, member_id: {KGO_848}, generation: 1, "
        "now_assigned: map[ledger:[0 1 2 3]]",
    ),
    ("09:14:05.120", "new group session begun; group: ledger-app, added: ledger[0 1 2 3], lost: "),
    ("09:14:05.121", "beginning heartbeat loop; group: ledger-app"),
    (
        "09:14:05.126",
        "assigning partitions; why: newly fetched offsets for group ledger-app, how: assigning everything new, keeping current "
        "assignment, input: ledger[1{6020 e0 ce0} 0{5100 e0 ce0} 3{9050 e0 ce0} 2{8100 e0 ce0}]",
    ),
    (
        "09:15:12.400",
        "consumer group heartbeat detected an updated assignment; exited heartbeat loop to assign & reentering; "
        f"group: ledger-app, member_id: {KGO_848}, generation: 3, now_assigned: map[ledger:[0 1]]",
    ),
    ("09:15:12.401", "new group session begun; group: ledger-app, added: , lost: ledger[2 3]"),
    ("09:15:12.402", "calling onRevoke at the end of a session; group: ledger-app, lost: ledger[2 3], stage: 1"),
    (
        "09:15:41.502",
        f"consumer group heartbeat error, abandoning assignment and rejoining; group: ledger-app, member_id: {KGO_848}, "
        "generation: 3, err: FENCED_MEMBER_EPOCH: The member epoch is fenced by the group coordinator. The member must abandon "
        "all its partitions and rejoin.",
    ),
    (
        "09:15:41.610",
        f"consumer group initial heartbeat received assignment; group: ledger-app, member_id: {KGO_848}, generation: 6, "
        "now_assigned: map[ledger:[0 1]]",
    ),
    ("09:15:41.611", "new group session begun; group: ledger-app, added: ledger[0 1], lost: "),
    ("09:20:00.001", "updated committed; group: ledger-app, to: ledger[0{5100=>5230}, 1{6020=>6188}]"),
    ("09:20:00.004", f"leaving next-gen group; group: ledger-app, member_id: {KGO_848}, instance_id: <nil>"),
]
"""franz-go 1.21 under the KIP-848 consumer protocol (``kgo.BasicLogger`` in a containerd log, at DEBUG): it
joins at epoch 1 with all of ``ledger``, gives up ledger-2 and ledger-3 at epoch 3, is fenced, rejoins at epoch
6, commits and leaves. Its member id is its own UUID in base64, with no client id in it."""


def test_franz_go_under_kip_848_gives_epochs_ownership_and_a_lost_assignment(spark, tmp_path):
    """The member epoch of each heartbeat that hands out an assignment is the member's generation;
    a fenced member's abandoned assignment ends its intervals as lost, and leaving ends the rest.
    The member is its host and franz-go's default client id, ``kgo``; its fencing is a finding;
    its DEBUG ``updated committed`` line is one commit per partition."""
    from ..helpers import ingest_paths, small_model

    path = tmp_path / "consumer-c" / "app.log"
    path.parent.mkdir()
    path.write_text(
        "".join(
            f"2025-06-02T{t}418000Z stderr F [{'DEBUG' if text.startswith('updated') else 'INFO'}] {text}\n" for t, text in FRANZ_GO_848
        )
    )
    model = small_model(spark, ingest_paths(spark, path).records)
    members = {row[s.LINE]: row.asDict() for row in model.members.collect()}
    assert {
        line: (e[s.EVENT_TYPE], e[s.TEMPLATE_ID], e["member"], e["generation_now"], e["epoch"], e[s.PARTITIONS])
        for line, e in members.items()
    } == {
        2: ("consumer:group:member_state", "GO16", "consumer-c/kgo", 1, 1, ["ledger-0", "ledger-1", "ledger-2", "ledger-3"]),
        3: ("consumer:group:assigned", "GO05", "consumer-c/kgo", 1, None, ["ledger-0", "ledger-1", "ledger-2", "ledger-3"]),
        5: ("consumer:offset:set_committed", "GO15", "consumer-c/kgo", 1, None, ["ledger-1", "ledger-0", "ledger-3", "ledger-2"]),
        6: ("consumer:group:member_state", "GO16", "consumer-c/kgo", 3, 3, ["ledger-0", "ledger-1"]),
        7: ("consumer:group:assigned", "GO05", "consumer-c/kgo", 3, None, []),
        8: ("consumer:group:revoked", "GO08", "consumer-c/kgo", 3, None, ["ledger-2", "ledger-3"]),
        9: ("consumer:group:lost", "GO17", "consumer-c/kgo", 3, 3, None),
        10: ("consumer:group:member_state", "GO16", "consumer-c/kgo", 6, 6, ["ledger-0", "ledger-1"]),
        11: ("consumer:group:assigned", "GO05", "consumer-c/kgo", 6, None, ["ledger-0", "ledger-1"]),
        12: ("consumer:offset:committed", "GO19", "consumer-c/kgo", 6, None, ["ledger-0", "ledger-1"]),
        13: ("consumer:group:leave", "GO18", "consumer-c/kgo", 6, None, None),
    }
    assert members[9]["error"].startswith("FENCED_MEMBER_EPOCH: ") and members[13][s.MEMBER_ID] == KGO_848
    assert sorted((r[s.LINE], r[s.PARTITION], r["kind"], r[s.OFFSET], r[s.GENERATION]) for r in model.commits.collect()) == [
        (5, 0, "position from commit", 5100, 1),
        (5, 1, "position from commit", 6020, 1),
        (5, 2, "position from commit", 8100, 1),
        (5, 3, "position from commit", 9050, 1),
        (12, 0, "commit", 5230, 6),
        (12, 1, "commit", 6188, 6),
    ]
    intervals = sorted(
        (row[s.PARTITION], row[s.GENERATION], row["from_line"], row["to_line"], row["ended"]) for row in model.ownership.collect()
    )
    assert intervals == [
        (0, 1, 3, 9, "lost"),
        (0, 6, 11, 13, "member left"),
        (1, 1, 3, 9, "lost"),
        (1, 6, 11, 13, "member left"),
        (2, 1, 3, 8, "revoked"),
        (3, 1, 3, 8, "revoked"),
    ]
    fenced = [(f["detector"], f["classification"], f["member"], [e["line"] for e in f["evidence"]]) for f in findings_json(detect(model))]
    assert fenced == [("fenced", "member epoch", "consumer-c/kgo", [9])]
