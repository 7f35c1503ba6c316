"""Fuzzing ingest and parse: random directories of hostile files, three invariants each time.

A drawn example is a directory of files mixing real Kafka lines (catalogue examples; log4j,
logback with a time only, Spring Boot with a zone offset, JSON with epoch seconds or
milliseconds, one JSON record cut short), other loggers' lines, stack frames, random text and
bytes (NUL, invalid UTF-8), with \\n, \\r\\n and lone \\r line ends; files may be empty,
gzipped, gzip members concatenated, truncated mid-stream, or exact copies of another file.
On every example:

1. nothing raises;
2. the accounting adds up to the input line count, which this test counts itself (the line
   ends Hadoop's reader splits on) for every plain and intact gzip file; a duplicate adds none;
3. every typed event names its true file and line: that physical line holds the start of
   the event's message.

Examples are derandomised in CI; ``FORENSICS_FUZZ_EXAMPLES=N`` runs N fresh ones.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.catalogue import load_catalogue
from forensics.events import parse_events
from forensics.ingest import ingest

EXAMPLES = int(os.environ.get("FORENSICS_FUZZ_EXAMPLES", "3"))
KAFKA_LINES = sorted({t.example for t in load_catalogue() if t.example.startswith("[") and "\n" not in t.example})
"""Single-line catalogue examples in the log4j layout: each is a typed event on its own."""
LINE_END = re.compile(rb"\r\n|\r|\n")

pieces = st.one_of(
    st.sampled_from(KAFKA_LINES).map(str.encode),
    st.sampled_from(KAFKA_LINES).map(lambda line: line.replace("2024-03-11", "2019-01-01").encode()),
    st.builds(
        lambda n, text: f"[2024-03-11 14:0{n % 10}:00,000] INFO {text} (com.example.app.Worker)".encode(),
        st.integers(0, 9),
        st.text(max_size=40).map(lambda t: t.replace("\n", " ").replace("\r", " ")),
    ),
    st.just(b"\tat com.example.app.Worker.run(Worker.java:42)"),
    st.just(b"Caused by: java.io.IOException: broken pipe"),
    st.binary(max_size=60),
    st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.just(b"14:02:33.221 [main] INFO  o.a.k.c.c.internals.ConsumerCoordinator - [Consumer clientId=c-1, groupId=g] (Re-)joining group"),
    st.just(
        b'{"@timestamp": 1710165737418, "level": "INFO", "logger_name": "org.apache.kafka.clients.consumer.internals.'
        b'ConsumerCoordinator", "message": "[Consumer clientId=c-1, groupId=g] (Re-)joining group"}'
    ),
    st.just(
        b'{"ts": 1710165737, "level": "WARN", "logger": "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator", '
        b'"message": "[Consumer clientId=c-1, groupId=g] (Re-)joining group"'
    ),
    st.just(
        b"2024-03-11T14:02:33.221+02:00  INFO 1 --- [           main] o.a.k.c.c.internals.ConsumerCoordinator  : "
        b"[Consumer clientId=c-1, groupId=g] (Re-)joining group"
    ),
    st.just(b"[2024-03-11 14:02:33,221 Europe/Paris] INFO unknown zone form (org.apache.kafka.clients.Metadata)"),
    st.just(b"\x00\x00\x00"),
    st.just(b"caf\xe9 \xff\xfe"),
    st.just(b"x" * 5000),
)
line_ends = st.sampled_from([b"\n", b"\r\n", b"\r"])
contents = st.lists(st.tuples(pieces, line_ends), max_size=30).map(lambda parts: b"".join(p + e for p, e in parts))
files = st.lists(
    st.tuples(contents, st.sampled_from(["plain", "plain", "gzip", "gzip members", "truncated gzip", "copy", "unterminated"])),
    min_size=1,
    max_size=6,
)


def physical_lines(data: bytes) -> list[bytes]:
    """Lines as Hadoop's LineReader splits them: on \\n, \\r\\n or a lone \\r; no empty last line."""
    if not data:
        return []
    lines = LINE_END.split(data)
    return lines[:-1] if LINE_END.search(data[-2:]) and lines[-1] == b"" else lines


def readable_prefix(data: bytes) -> bytes:
    """What a streaming decoder gets out of possibly damaged gzip members."""
    out, stream = b"", zlib.decompressobj(zlib.MAX_WBITS | 16)
    try:
        while data:
            out += stream.decompress(data)
            data = stream.unused_data
            if data:
                stream = zlib.decompressobj(zlib.MAX_WBITS | 16)
    except zlib.error:
        pass
    return out


def write_files(root: Path, drawn) -> dict[str, tuple[bytes, bool]]:
    """Write the drawn files; returns path -> (its text content, whether Python can count it all)."""
    written: dict[str, tuple[bytes, bool]] = {}
    for i, (data, kind) in enumerate(drawn):
        host = root / f"host-{i % 3}"
        host.mkdir(exist_ok=True)
        if kind == "copy" and written:
            source = next(iter(written))
            path = host / f"copy-{i}{Path(source).suffix}"
            path.write_bytes(Path(source).read_bytes())
            written[str(path)] = written[source]
            continue
        if kind.startswith("gzip") or kind == "truncated gzip":
            half = len(data) // 2
            raw = (
                gzip.compress(data[:half], mtime=0) + gzip.compress(data[half:], mtime=0)
                if kind == "gzip members"
                else gzip.compress(data, mtime=0)
            )
            whole = kind != "truncated gzip"
            if not whole:
                raw = raw[: max(10, len(raw) * 2 // 3)]
            path = host / f"app-{i}.log.gz"
            path.write_bytes(raw)
            written[str(path)] = (data if whole else readable_prefix(raw), whole)
        else:
            body = data.rstrip(b"\r\n") if kind == "unterminated" else data
            path = host / f"app-{i}.log"
            path.write_bytes(body)
            written[str(path)] = (body, True)
    return written


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("FORENSICS_FUZZ_EXAMPLES"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(drawn=files, kafka=st.lists(st.sampled_from(KAFKA_LINES), min_size=1, max_size=5))
def test_hostile_files_keep_every_line_accounted_and_every_event_in_place(spark, tmp_path_factory, drawn, kafka):
    root = tmp_path_factory.mktemp("fuzz")
    written = write_files(root, [("\n".join(kafka).encode() + b"\n", "plain"), *drawn])
    result = ingest(spark, [str(root)])
    inputs = {entry["path"]: entry for entry in result.inputs}
    assert set(inputs) == set(written)
    for path, (content, whole) in written.items():
        entry = inputs[path]
        assert sum(entry[b] for b in ("records", "continuations", "irrelevant", "unparsed")) == entry["lines"]
        if entry["duplicate_of"]:
            assert entry["lines"] == 0 and Path(entry["duplicate_of"]).read_bytes() == Path(path).read_bytes()
        elif whole:
            assert entry["lines"] == len(physical_lines(content)), path
        else:
            assert entry["lines"] <= len(physical_lines(content)) + 1, path
    events = parse_events(result.records).select("source_file", "line", "message").collect()
    assert len(events) >= len(kafka)
    for event in events:
        content, _ = written[event["source_file"]]
        line = physical_lines(content)[event["line"] - 1].decode("utf-8", "replace")
        start = event["message"].split("\n")[0][:40]
        assert start in line, (event["source_file"], event["line"], start, line)
