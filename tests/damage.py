"""The damage that pipelines and people do to log lines, as small composable functions (issue 86).

A document is a list of ``Line``: its text and the line of the original log it came from
(``origin``; None for a line a damage added: a header, a fence). Each damage takes a document and
a ``random.Random`` and returns a new one; ``damaged`` applies a drawn composition in the order a
log travels: the line's own text (colours, levels, date and time, thread), a prefix (a
timestamp, a host, ``name: ``, a container runtime's or shipper's wrapper), newest first, a
terminal's hard wrap,
a paste (markdown) or an export (CSV / NDJSON, with or without a header), and last a
cut at the end. The damaged file's lines keep their origins, so that a record of the plain twin
can be looked for where it went.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

BASE = datetime(2024, 3, 11, 14, 2, 17)


@dataclass(frozen=True)
class Line:
    text: str
    origin: int | None


Document = list[Line]


def document(lines: list[str]) -> Document:
    return [Line(text, number) for number, text in enumerate(lines, 1)]


def _stamp(index: int) -> datetime:
    return BASE + timedelta(milliseconds=37 * index)


def _each(doc: Document, change) -> Document:
    return [Line(change(line.text), line.origin) for line in doc]


# -- the line's own text --------------------------------------------------------------------

LEVELS = re.compile(r"(?<![A-Za-z])(TRACE|DEBUG|INFO|WARN(?:ING)?|ERROR|FATAL)(?![A-Za-z])")
STAMP = re.compile(r"(\d{4}-\d\d-\d\d)([ T])(\d\d:\d\d:\d\d)")
THREAD = re.compile(
    r"(?<=\] )\[(?!Consumer |Producer |Worker |AdminClient |thrd:)([A-Za-z][^\[\]]{0,60})\]|(?<=\d )\[(?!Consumer |Producer )([A-Za-z][^\[\]]{0,60})\]"
)


def colour(doc: Document, rng: random.Random) -> Document:
    """ANSI colour around the level (a console appender's ``%highlight``), with or without the ESC byte (a paste that lost it)."""
    esc = rng.choice(["\x1b", ""])
    code = rng.choice(["32", "1;31", "33", "0;36"])
    return _each(doc, lambda text: LEVELS.sub(lambda m: f"{esc}[{code}m{m.group(1)}{esc}[0m", text, count=1))


def level_case(doc: Document, rng: random.Random) -> Document:
    """Levels re-cased (``info``, ``Info``) or cut short (``%.4p``'s ``WARN``/``ERRO``/``DEBU``, ``INF``/``WRN``)."""
    short = {"INFO": "INF", "WARN": "WRN", "WARNING": "WRN", "ERROR": "ERR", "DEBUG": "DBG", "TRACE": "TRC", "FATAL": "FTL"}
    form = rng.choice(["lower", "title", "cut4", "short"])
    change = {"lower": str.lower, "title": str.title, "cut4": lambda level: level[:4], "short": lambda level: short[level]}[form]
    return _each(doc, lambda text: LEVELS.sub(lambda m: change(m.group(1)), text, count=1))


def date_time_separator(doc: Document, rng: random.Random) -> Document:
    """The date and time split by another separator (``T``, two spaces, a tab, `` | ``, ``_``)."""
    separator = rng.choice(["T", "  ", "\t", " | ", "_", " "])
    return _each(doc, lambda text: STAMP.sub(lambda m: f"{m.group(1)}{separator}{m.group(3)}", text, count=1))


def nested_thread(doc: Document, rng: random.Random) -> Document:
    """Brackets nested in the thread (Camel's ``[Camel (x) thread #1 - KafkaConsumer[topic]]``)."""
    inner = rng.choice(["orders", "topic-1", "p0"])

    def change(text: str) -> str:
        return THREAD.sub(lambda m: f"[{m.group(1) or m.group(2)} - KafkaConsumer[{inner}]]", text, count=1)

    return _each(doc, change)


# -- a prefix -------------------------------------------------------------------------------


def prefix(doc: Document, rng: random.Random) -> Document:
    """A prefix on every line: a timestamp, a host, ``name: ``, a container runtime's or a log
    shipper's wrapper (kubectl, CRI, docker compose, syslog, kubectl --prefix, Docker's JSON
    file, a shipper's JSON), indented or not."""
    kind = rng.choice(["kubectl", "cri", "compose", "compose_ts", "host", "name", "syslog", "pod", "docker_json", "shipper_json"])
    indent = rng.choice(["", "", "  "]) if kind not in ("docker_json", "shipper_json", "cri", "kubectl") else ""
    service = rng.choice(["orders", "consumer-1", "app"])
    pad = " " * rng.randint(1, 4)

    def wrap(index: int, text: str) -> str:
        at = _stamp(index)
        iso = at.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"
        if kind == "kubectl":
            return f"{iso} {text}"
        if kind == "cri":
            return f"{iso} stdout F {text}"
        if kind == "compose":
            return f"{indent}{service}{pad}| {text}"
        if kind == "compose_ts":
            return f"{indent}{service}{pad}| {iso} {text}"
        if kind == "host":
            return f"{indent}{service}-7c9d {text}"
        if kind == "name":
            return f"{indent}{service}: {text}"
        if kind == "syslog":
            return f"{indent}{at.strftime('%b %d %H:%M:%S')} node-3 java[4242]: {text}"
        if kind == "pod":
            return f"{indent}[pod/{service}-0/{service}] {text}"
        if kind == "docker_json":
            return json.dumps({"log": text + "\n", "stream": "stdout", "time": iso}, separators=(",", ":"))
        return json.dumps({"message": text, "host": f"{service}-0", "@timestamp": iso})

    return [Line(wrap(index, line.text), line.origin) for index, line in enumerate(doc)]


# -- a terminal -----------------------------------------------------------------------------


def hard_wrap(doc: Document, rng: random.Random) -> Document:
    """Lines hard-wrapped at a terminal's width (a common width, or any)."""
    width = rng.choice([80, 100, 120, 132, 160, 200, rng.randint(60, 220)])
    out: Document = []
    for line in doc:
        text = line.text
        while len(text) > width:
            out.append(Line(text[:width], line.origin))
            text = text[width:]
        out.append(Line(text, line.origin))
    return out


def newest_first(doc: Document, rng: random.Random) -> Document:
    """The lines newest first (a Grafana download, logcli, a log platform's list)."""
    return list(reversed(doc))


# -- a paste or an export -------------------------------------------------------------------


def markdown(doc: Document, rng: random.Random) -> Document:
    """A paste into markdown: a code fence, a quote, or a table's rows."""
    form = rng.choice(["fence", "quote", "table"])
    if form == "fence":
        return [Line("```", None), *doc, Line("```", None)]
    if form == "quote":
        return _each(doc, lambda text: f"> {text}")
    return [Line("| log |", None), Line("|---|", None), *_each(doc, lambda text: f"| {text.replace('|', '&#124;')} |")]


def _entries(doc: Document, whole: bool) -> list[list[Line]]:
    """The document's lines as a platform's entries: one a line (``whole`` False: a runtime's
    output stored line by line), or a record's head with its indented and stack-trace lines."""
    if not whole:
        return [[line] for line in doc]
    entries: list[list[Line]] = []
    for line in doc:
        if entries and re.match(r"\s|Caused by: |\.\.\. \d+ more|(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)(?:: |$)", line.text):
            entries[-1].append(line)
        else:
            entries.append([line])
    return entries


def _csv_value(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(ch in text for ch in ',"\n') else text


def csv_export(doc: Document, rng: random.Random) -> Document:
    """An export to CSV: a time, a host and the message column, with or without a header, one
    entry a line or a record with its continuation lines in one quoted value."""
    header = rng.random() < 0.7
    entries = _entries(doc, rng.random() < 0.5)
    out: Document = [Line("@timestamp,host,message", None)] if header else []
    for index, entry in enumerate(entries):
        value = _csv_value("\n".join(line.text for line in entry))
        row = f"{_stamp(index).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z,orders-0,{value}"
        for piece, line in zip(row.split("\n"), entry, strict=True):
            out.append(Line(piece, line.origin))
    return out


def ndjson_export(doc: Document, rng: random.Random) -> Document:
    """An export to NDJSON: ``@timestamp``, ``host`` and ``message`` a line."""
    entries = _entries(doc, rng.random() < 0.5)
    return [
        Line(
            json.dumps(
                {
                    "@timestamp": _stamp(index).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
                    "host": "orders-0",
                    "message": "\n".join(line.text for line in entry),
                }
            ),
            entry[0].origin,
        )
        for index, entry in enumerate(entries)
    ]


def truncate(doc: Document, rng: random.Random) -> Document:
    """The end cut off, perhaps inside a line (a download cut short, a paste's limit)."""
    if not doc:
        return doc
    keep = rng.randint(max(1, len(doc) // 2), len(doc))
    last = doc[keep - 1]
    cut = Line(last.text[: rng.randint(1, max(1, len(last.text)))], last.origin)
    return [*doc[: keep - 1], cut]


CONTENT = {"colour": colour, "level_case": level_case, "date_time_separator": date_time_separator, "nested_thread": nested_thread}
"""Damage to the line's own text."""
CONTAINERS = {"markdown": markdown, "csv": csv_export, "ndjson": ndjson_export}
"""A paste or an export, one at most."""
DESTROYS = {"truncate"}
"""Damage that destroys information: what it cuts is to be reported as not read, not read."""


@dataclass(frozen=True)
class Composition:
    content: tuple[str, ...]
    prefix: bool
    wrap: bool
    newest_first: bool
    container: str | None
    truncate: bool
    seed: int

    @property
    def names(self) -> tuple[str, ...]:
        return (
            *self.content,
            *(["prefix"] if self.prefix else []),
            *(["newest_first"] if self.newest_first else []),
            *(["hard_wrap"] if self.wrap and self.container in (None, "markdown") else []),
            *([self.container] if self.container else []),
            *(["truncate"] if self.truncate else []),
        )

    @property
    def suffix(self) -> str:
        return {"csv": ".csv", "ndjson": ".ndjson", "markdown": ".md.log"}.get(self.container or "", ".log")


def damaged(lines: list[str], composition: Composition) -> Document:
    """``lines`` with ``composition`` applied, in the order a log travels."""
    rng = random.Random(composition.seed)
    doc = document(lines)
    for name in composition.content:
        doc = CONTENT[name](doc, rng)
    if composition.prefix:
        doc = prefix(doc, rng)
    if composition.newest_first:  # a platform's list, then perhaps shown in a terminal
        doc = newest_first(doc, rng)
    if composition.wrap and composition.container in (None, "markdown"):  # a terminal's, not a platform's
        doc = hard_wrap(doc, rng)
    if composition.container:
        doc = CONTAINERS[composition.container](doc, rng)
    if composition.truncate:
        doc = truncate(doc, rng)
    return doc


def random_composition(rng: random.Random) -> Composition:
    """A composition drawn at random: up to three damages to the text, then each later stage or not."""
    return Composition(
        content=tuple(rng.sample(sorted(CONTENT), k=rng.randint(0, 3))),
        prefix=rng.random() < 0.5,
        wrap=rng.random() < 0.5,
        newest_first=rng.random() < 0.25,
        container=rng.choice([None, None, "markdown", "csv", "ndjson"]),
        truncate=rng.random() < 0.3,
        seed=rng.getrandbits(32),
    )


# -- running examples -----------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """An excerpt of a real log (``EXCERPT_LINES`` from a little before one of its Kafka lines)
    and the damage done to it."""

    source: str
    start: int
    composition: Composition


EXCERPT_LINES = 60


def source_logs(root) -> list[str]:
    """The real logs examples are cut from: the lab's runs and the sample incidents."""
    from pathlib import Path

    from forensics.offsets import sniff_file

    root = Path(root)
    found = sorted(root.glob("lab/runs/*/*/**/*.log")) + sorted(
        p for p in (root / "sample_logs").rglob("*") if p.is_file() and p.suffix not in (".md", ".json") and "offsets" not in p.parts
    )
    return [str(p) for p in found if not sniff_file(str(p))]


_LINES: dict[str, tuple[list[str], list[int]]] = {}


def _source(path: str) -> tuple[list[str], list[int]]:
    """A source log's lines and the lines that carry a Kafka mark."""
    if path not in _LINES:
        from forensics.layouts.anchor import marked

        with open(path, "rb") as handle:
            lines = re.split(r"\r\n|\r|\n", handle.read().decode("utf-8", "replace"))
        lines = lines[:-1] if lines and lines[-1] == "" else lines
        _LINES[path] = (lines, [n for n, text in enumerate(lines, 1) if marked(text)])
    return _LINES[path]


def random_example(rng: random.Random, sources: list[str]) -> Example:
    """An excerpt that opens a little before one of a source's Kafka lines, and a composition."""
    path = rng.choice([p for p in sources if _source(p)[1]])
    at = rng.choice(_source(path)[1])
    return Example(path, max(1, at - rng.randint(0, 8)), random_composition(rng))


def examples(sources: list[str]):
    """A hypothesis strategy of examples over ``sources`` (hypothesis draws the seed)."""
    from hypothesis import strategies as st

    return st.integers(0, 2**64 - 1).map(lambda seed: random_example(random.Random(seed), sources))


def excerpt(example: Example) -> list[str]:
    lines, _ = _source(example.source)
    return lines[example.start - 1 : example.start - 1 + EXCERPT_LINES]


@dataclass
class Outcome:
    example: Example
    twin_events: int
    read: int
    counted: int
    destroyed: int
    lost: list[str]

    @property
    def holds(self) -> bool:
        return not self.lost


COMPARED = (
    "event_type",
    "ts",
    "level",
    "client_id",
    "group_id",
    "instance_id",
    "member_id",
    "generation",
    "task",
    "topic",
    "partition",
    "offset",
    "partitions",
    "added_partitions",
    "revoked_partitions",
    "owned_partitions",
    "reason",
    "error",
    "state_from",
    "state_to",
)
"""The fields of an event that must survive damage: its type, time and level, and what it says."""


def run_batch(spark, batch: list[Example], root) -> list[Outcome]:
    """Write each example's plain twin and its damaged file under ``root``, ingest them all at
    once, and tell for each example where every event of its twin went: read again (an event of
    the same type and fields at a line of the same origin), counted as not read (its damaged
    lines in no Kafka record and counted in the file's ``kafka_not_read``), destroyed (cut off by
    a damage that destroys; what remains of it is read or counted), or lost."""
    from pathlib import Path

    from forensics import schema as s
    from forensics.events import parse_events
    from forensics.ingest import ingest
    from tests.ingest.test_never_silent import silent_lines

    root = Path(root)
    (root / "plain").mkdir(parents=True, exist_ok=True)
    (root / "damaged").mkdir(parents=True, exist_ok=True)
    docs = {}
    for index, example in enumerate(batch):
        lines = excerpt(example)
        (root / "plain" / f"ex{index}.log").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        doc = damaged(lines, example.composition)
        path = root / "damaged" / f"ex{index}{example.composition.suffix}"
        path.write_text("".join(f"{line.text}\n" for line in doc), encoding="utf-8")
        docs[str(path)] = (index, doc)
    result = ingest(spark, [str(root / "plain"), str(root / "damaged")])
    events = parse_events(result.records).select(s.SOURCE_FILE, s.LINE, *COMPARED).collect()
    copies: dict[str, list[str]] = {}  # a file read once for several that hold the same bytes (a composition that changed nothing)
    for entry in result.inputs:
        if entry["duplicate_of"]:
            copies.setdefault(entry["duplicate_of"], []).append(entry["path"])
    spans: dict[str, list[tuple[int, int]]] = {}
    for row in result.records.select(s.SOURCE_FILE, s.LINE, s.LINE_END).collect():
        for path in (row[0], *copies.get(row[0], ())):
            spans.setdefault(path, []).append((row[1], row[2]))
    silent = {}
    for path, line, text in silent_lines(result):
        silent.setdefault(path, []).append((line, text))
    entries = {entry["path"]: entry for entry in result.inputs}

    def fields(row) -> tuple:
        return tuple(tuple(v) if isinstance(v, list) else v for v in (row[name] for name in COMPARED))

    twins: dict[int, list] = {}
    found: dict[int, dict[int, list]] = {}
    for row in events:
        for path in (row[s.SOURCE_FILE], *copies.get(row[s.SOURCE_FILE], ())):
            if "/plain/" in path:
                twins.setdefault(int(Path(path).stem[2:]), []).append((row[s.LINE], fields(row)))
            elif path in docs:
                index, doc = docs[path]
                origin = doc[row[s.LINE] - 1].origin
                found.setdefault(index, {}).setdefault(origin, []).append(fields(row))

    outcomes = []
    for path, (index, doc) in docs.items():
        example = batch[index]
        origins: dict[int, list[int]] = {}
        for number, line in enumerate(doc, 1):
            if line.origin is not None:
                origins.setdefault(line.origin, []).append(number)
        in_record = {n for start, end in spans.get(path, []) for n in range(start, end + 1)}
        whole = set(origins) - ({doc[-1].origin} if doc else set())  # the last line may be cut
        outcome = Outcome(example, 0, 0, 0, 0, [f"{line}: {text}" for line, text in silent.get(path, [])])
        twin_spans = {start: end for start, end in spans.get(str(root / "plain" / f"ex{index}.log"), [])}
        for line, twin in twins.get(index, []):
            outcome.twin_events += 1
            same = [f for f in found.get(index, {}).get(line, []) if _same(f, twin)]
            if same:
                outcome.read += 1
                continue
            placed = origins.get(line, [])
            if example.composition.truncate and not all(
                n in whole for n in range(line, twin_spans.get(line, line) + 1)
            ):  # the cut reached it
                outcome.destroyed += 1
                continue
            if placed and not any(n in in_record for n in placed) and entries[path]["kafka_not_read"]:
                outcome.counted += 1
                continue
            outcome.lost.append(
                f"twin line {line} {twin[0]}: "
                + (
                    "no line left"
                    if not placed
                    else f"damaged lines {placed[:3]}, "
                    + (
                        "read otherwise: " + str(found.get(index, {}).get(line, [])[:1])
                        if line in found.get(index, {})
                        else "in a record"
                        if any(n in in_record for n in placed)
                        else "not counted"
                    )
                )
            )
        outcomes.append(outcome)
    return outcomes


def _same(found: tuple, twin: tuple) -> bool:
    """An event read from a damaged line says what its twin's says (a twin with no time: any)."""
    return all(f == t or (name == "ts" and t is None) for name, f, t in zip(COMPARED, found, twin, strict=True))
