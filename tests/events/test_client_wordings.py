"""Client wordings the paste corpus (issue 86) found unread, on hand-written files
(tests/data/client_wordings/): each line becomes the Java client's event type by its template,
with its fields; the lines around them that type nothing stay as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics import schema as s
from forensics.events import parse_events
from tests.helpers import ingest_paths

WORDINGS = Path(__file__).resolve().parents[1] / "data" / "client_wordings"
COLUMNS = (s.EVENT_TYPE, s.TEMPLATE_ID, s.GROUP_ID, s.PARTITIONS, "error")

EXPECTED = {
    "librdkafka_1_4.log": {
        1: ("consumer:group:joined", "RDK12", None, None, None),
        2: ("consumer:group:assignment_finished", "RDK62", "tolls-agg", None, None),
        3: ("consumer:group:member_state", "RDK03", "tolls-agg", None, None),
        4: ("consumer:group:assigned", "RDK65", "tolls-agg", None, None),
        6: ("consumer:group:assigned", "RDK64", None, ["toll-events-0"], None),
        7: ("consumer:group:assigned", "RDK64", None, ["toll-events-3"], None),
    },
    "confluent_python_2_3.log": {1: ("consumer:group:assignment_finished", "RDK63", "tolls-agg", None, None)},
    "connect_worker.log": {
        1: ("consumer:group:join_requested", "G112", "tolls-connect", None, None),
        2: ("consumer:group:join_started", "G02", "tolls-connect", None, None),
    },
    "aiokafka_0_3.log": {  # the second error is no coordinator's: not typed
        1: (
            "consumer:group:coordinator_unavailable",
            "PY43",
            None,
            None,
            "GroupCoordinatorNotAvailableError - 15 - The broker returns this error code for group coordinator requests.",
        )
    },
    "kafkajs_debug.log": {1: ("consumer:group:coordinator_discovered", "JS08", None, None, None)},
    "broker_masked.log": {1: ("coordinator:group:member_failed", "B09", "***", None, None)},
    "kafka_go_0_4.log": {  # Go's standard log: a time, then the text
        1: ("consumer:group:joined", "KG03", "tolls-agg", None, None),
        2: ("consumer:group:assignment_finished", "KG04", "tolls-agg", None, None),
        3: ("consumer:group:assigned", "KG05", None, ["toll-events-0", "toll-events-1"], None),
        4: ("consumer:group:synced", "KG06", "tolls-agg", None, None),
    },
    "kafka_go_envelope.json": {  # records inside a one-field envelope
        1: ("consumer:group:synced", "KG06", "tolls-agg", None, None),
        2: ("consumer:group:joined", "KG02", "tolls-agg", None, None),
        3: ("consumer:group:joined", "KG01", "tolls-agg", None, None),
    },
    "sarama_1_36.log": {  # the application's prefix before Go's time
        1: ("consumer:group:coordinator_discovered", "SA01", "tolls-agg", None, None),
        2: ("consumer:group:assigned", "SA02", None, None, None),
        3: ("consumer:group:revoked", "SA03", None, None, None),
    },
    "ruby_kafka_1_5.log": {  # pasted without a time: the consumer's tag opens each line
        1: ("consumer:group:join_started", "RB01", "tolls-agg", None, None),
        2: ("consumer:group:join_failed", "RB03", "tolls-agg", None, None),
        3: ("consumer:offset:seek", "RB05", "tolls-agg", None, None),
    },
    "ruby_kafka_syslog_tag.log": {  # RFC 3164 with one name, then a JSON record
        1: ("consumer:group:assigned", "RB04", "tolls-agg", ["toll-events-2", "toll-events-0"], None)
    },
    "kafka_python_1_3_py2.log": {  # Python 2's u'..' in the TopicPartition, a team's module->function():line
        1: ("consumer:offset:out_of_range", "PY27", None, None, None),
        2: ("consumer:offset:reset", "PY45", None, None, None),
        3: ("consumer:group:assigned", "PY06", "tolls-agg", ["toll-events-1"], None),
    },
    "kafka_python_1_4.log": {1: ("consumer:group:coordinator_discovered", "PY46", "tolls-agg", None, None)},
    "librdkafka_join_error.log": {
        1: ("consumer:group:join_failed", "RDK67", "tolls-agg", None, "Broker: Group member needs a valid member ID")
    },
    "franz_go_1_18.log": {  # a syslog-like time glued to kgo.BasicLogger's level
        1: ("consumer:offset:commit_failed", "GO20", "tolls-agg", None, "UNKNOWN_MEMBER_ID: The coordinator is not aware of this member.")
    },
    "franz_go_kzap.json": {1: ("consumer:group:revoked", "GO21", "tolls-agg", None, None)},
}


@pytest.fixture(scope="module")
def events(spark):
    ingested = ingest_paths(spark, *[WORDINGS / name for name in EXPECTED])
    found: dict[str, dict[int, tuple]] = {}
    for row in parse_events(ingested.records).collect():
        found.setdefault(Path(row[s.SOURCE_FILE]).name, {})[row[s.LINE]] = tuple(row[c] for c in COLUMNS)
    return found, ingested


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_wording_is_its_event_with_its_fields(events, name):
    assert events[0].get(name, {}) == EXPECTED[name]


def test_every_line_is_read(events):
    _, ingested = events
    lines = sum(len((WORDINGS / name).read_text().splitlines()) for name in EXPECTED)
    assert (ingested.accounting["lines"], ingested.accounting["unparsed"]) == (lines, 0)
