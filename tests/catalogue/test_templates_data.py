"""Data checks for the catalogue files (forensics/catalogue/*.yaml) (plain pytest, Python ``re`` only)."""

import json
import re

import pytest

from forensics.catalogue import catalogue_entries, load_catalogue
from forensics.layouts.json_lines import AROUND_MESSAGE, CLIENT_KEYS
from forensics.schema import CATALOGUE_FIELDS, EVENT_TYPES

PREFIX = r"^(?:\[(?:Consumer|ShareConsumer|Producer|AdminClient|Worker) [^\]]*\] ?|stream-client \[[^\]]*\] ?|(?:global-)?stream-thread \[[^\]]*\] ?(?:(?:task|stream-task|standby-task) \[[^\]]*\] ?)?|state-updater \[[^\]]*\] ?|(?:task|stream-task|standby-task) \[[^\]]*\] ?)*"
# the group coordinator's prefixes in broker logs (catalogue/broker.yaml)
BROKER_PREFIX = r"^(?:\[GroupCoordinator \d+\]: |\[GroupMetadataManager brokerId=\d+\] |\[GroupCoordinator id=\d+[^\]]*\] )"

LAYOUT = r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR) ([\s\S]*?) \(([\w.$]+)\)$"

# librdkafka native lines: %LEVEL|epoch.ms|FACILITY|handle| [thrd:NAME]: message (forensics/layouts/librdkafka.py)
RDKAFKA_LAYOUT = r"^%(\d)\|(\d{9,11}(?:\.\d{1,6})?)\|([A-Za-z0-9_]+)\|([^|\x01]*)\| (?:\[thrd:([^\]\x01]*)\]: )?(.*)$"
# syslog severities 0-7 in log4j's level names (as the librdkafka layout reads them)
SYSLOG_LEVELS = ("FATAL", "FATAL", "FATAL", "ERROR", "WARN", "INFO", "INFO", "DEBUG")
# Python logging's "%(asctime)s %(levelname)s %(name)s %(message)s" (kafka-python, aiokafka), levels in log4j's names
PYTHON_LAYOUT = r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) ([\w.]+) ([\s\S]*)$"
PYTHON_LEVELS = {"WARNING": "WARN", "CRITICAL": "FATAL"}
# franz-go's kgo.BasicLogger, "[LEVEL] message; key: value, ..", behind kubectl logs --timestamps; no logger of its own
FRANZ_GO_LAYOUT = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z \[(DEBUG|INFO|WARN|ERROR)\] (.*)$"
# Go's standard log package (kafka-go, Sarama): the application's prefix ("[sarama] "), then Go's time; no level
GO_LOG_LAYOUT = r"^(?:\[(\w+)\] )?\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? (.*)$"
# Ruby's Logger with its default formatter (ruby-kafka): "I, [time #pid]  INFO -- progname: message"
RUBY_LOGGER_LAYOUT = r"^[DIWEF], \[[^\]]+ #\d+\] +(DEBUG|INFO|WARN|ERROR) -- (\w*): (.*)$"


ALLOWED_EVENT_TYPES = set(EVENT_TYPES)

ALLOWED_FIELDS = set(CATALOGUE_FIELDS)

REQUIRED_KEYS = {"id", "event_type", "versions", "loggers", "pattern", "example", "fields"}
VERSION = r"\d+\.\d+(?:\.\d+)?"
VERSIONS_RE = re.compile(rf"^{VERSION}(?:-{VERSION})?(?:,{VERSION}(?:-{VERSION})?)*$")
ID_RE = re.compile(r"^(?:G|K|KS|O|S|P|CFG|RDK|B|PY|JS|GO|SK|KG|SA|RB)\d+$")
# regex constructs that Python accepts but Java does not (or that the loader must not see)
NON_JAVA = [r"(?P=", r"(?(", r"(?<=", r"(?<!", r"(?#", r"\Z", r"(?x", r"(?a", r"(?L"]

ENTRIES = catalogue_entries()


def _test_ids():
    seen = {}
    ids = []
    for entry in ENTRIES:
        base = f"{entry.get('id')}@{entry.get('versions')}:{entry.get('event_type')}"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return ids


IDS = _test_ids()


def _client_context(line: str) -> str:
    """What the json_lines layout appends to a KafkaJS record's message: the fields beside it, as
    written (those before it where they name a group or member)."""
    found = re.match(AROUND_MESSAGE, line)
    if not found or not any(key in line for key in CLIENT_KEYS):
        return ""
    before, after = found.groups()
    fields = ",".join(part for part in (before if any(key in before for key in CLIENT_KEYS) else "", after) if part)
    return f" {{{fields}}}" if fields else ""


def _parse(example):
    """(level, logger simple name, message remainder) of an example line.

    librdkafka lines (``%7|...``): the syslog level digit, the facility as the logger and the
    message after ``[thrd:...]: `` as is (no Kafka log-context prefix). Other lines: the
    Kafka default log4j layout, with the log-context prefix stripped."""
    if example.startswith("{"):
        record = json.loads(example)
        return record["level"], record["logger"], record["message"] + _client_context(example)
    m = re.match(FRANZ_GO_LAYOUT, example)
    if m:
        return m.group(1), "kgo", m.group(2)
    m = re.match(GO_LOG_LAYOUT, example)
    if m:
        return None, m.group(1) or "log", m.group(2)
    m = re.match(RUBY_LOGGER_LAYOUT, example)
    if m:
        return m.group(1), m.group(2), m.group(3)
    m = re.match(PYTHON_LAYOUT, example)
    if m:
        return PYTHON_LEVELS.get(m.group(1), m.group(1)), m.group(2).rsplit(".", 1)[-1], m.group(3)
    if example.startswith("%"):
        m = re.match(RDKAFKA_LAYOUT, example)
        assert m, f"example does not parse as a librdkafka log line: {example!r}"
        return SYSLOG_LEVELS[int(m.group(1))], m.group(3), m.group(6)
    m = re.match(LAYOUT, example)
    assert m, f"example does not parse with the Kafka default layout: {example!r}"
    return m.group(2), m.group(4).rsplit(".", 1)[-1], re.sub(BROKER_PREFIX, "", re.sub(PREFIX, "", m.group(3), count=1), count=1)


def _remainder(example):
    return _parse(example)[2]


def test_catalogue_is_a_non_empty_list():
    assert isinstance(ENTRIES, list)
    assert len(ENTRIES) >= 120


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_keys_event_type_and_field_names(entry):
    missing = REQUIRED_KEYS - set(entry)
    assert not missing, f"missing keys: {sorted(missing)}"
    assert ID_RE.match(str(entry["id"])), entry["id"]
    for extra in entry.get("also", []):
        assert ID_RE.match(str(extra)), extra
        assert extra != entry["id"]
    assert entry["event_type"] in ALLOWED_EVENT_TYPES, entry["event_type"]
    assert isinstance(entry["versions"], str) and VERSIONS_RE.match(entry["versions"]), entry["versions"]
    assert isinstance(entry["loggers"], list) and entry["loggers"]
    assert all(re.match(r"^(?:[A-Z]\w*|[a-z][a-z_]*)$", lg) for lg in entry["loggers"]), entry["loggers"]  # Java classes, Python modules
    assert isinstance(entry["fields"], dict)
    assert set(entry["fields"]) <= ALLOWED_FIELDS, set(entry["fields"]) - ALLOWED_FIELDS
    assert all(isinstance(v, str) for v in entry["fields"].values())
    pattern = entry["pattern"]
    assert isinstance(pattern, str) and pattern.startswith("^")
    for bad in NON_JAVA:
        assert bad not in pattern, f"non-Java construct {bad!r} in pattern"
    compiled = re.compile(pattern)
    assert set(compiled.groupindex) <= ALLOWED_FIELDS, set(compiled.groupindex) - ALLOWED_FIELDS


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_example_layout_and_logger(entry):
    level, simple, _ = _parse(entry["example"])
    assert simple in entry["loggers"], f"{simple} not in {entry['loggers']}"
    if "level" in entry and level is not None:  # Go's log package writes no level
        assert level == entry["level"]


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_pattern_matches_example_and_yields_fields(entry):
    rest = _remainder(entry["example"])
    m = re.match(entry["pattern"], rest)
    assert m, f"pattern {entry['pattern']!r} does not match {rest!r}"
    got = {k: v for k, v in m.groupdict().items() if v is not None}
    assert got == entry["fields"]


@pytest.mark.parametrize("template", load_catalogue(), ids=IDS)
def test_a_message_followed_by_spaces_yields_the_same_fields(template):
    """As loaded, a pattern anchored at its end allows spaces there (Faust's layout writes one
    after every message); a capture that runs to the end keeps them."""
    rest = _remainder(template.example)
    m = re.match(template.pattern, rest + "  ")
    assert m, f"pattern {template.pattern!r} does not match {rest + '  '!r}"
    got = {name: m.group(number).rstrip(" ") for name, number in template.groups if m.group(number) is not None}
    assert got == dict(template.fields)


def test_no_duplicate_patterns():
    """No two entries share a pattern and a logger (the parser joins templates by logger: the same
    wording in two clients, e.g. kafka-python's and the Java client's 0.10, stays apart by logger)."""
    seen = {}
    for i, entry in enumerate(ENTRIES):
        for logger in entry["loggers"]:
            key = (entry["pattern"], logger)
            assert key not in seen, f"{IDS[i]} repeats the pattern of {IDS[seen[key]]} for logger {logger}"
            seen[key] = i


COMPILED = [(IDS[i], e["event_type"], re.compile(e["pattern"])) for i, e in enumerate(ENTRIES)]


@pytest.mark.parametrize("index", range(len(ENTRIES)), ids=IDS)
def test_no_other_event_type_matches_example(index):
    entry = ENTRIES[index]
    rest = _remainder(entry["example"])
    clashes = [
        test_id
        for j, (test_id, event_type, regex) in enumerate(COMPILED)
        if j != index and event_type != entry["event_type"] and regex.match(rest)
    ]
    assert not clashes, f"example of {IDS[index]} is also matched by {clashes}"
