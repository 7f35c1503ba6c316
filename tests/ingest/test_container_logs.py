"""Container runtimes' own log files, and the lines they cut in pieces (``wrappers.ENVELOPES``):
the CRI log files that containerd and CRI-O write for each container (``/var/log/pods``),
``<RFC 3339> <stdout|stderr> <F|P> <line>``, where a ``P`` line is a piece of a longer line that
the next line continues without a line break; Docker's json-file, where a piece's ``log`` has no
final newline."""

from __future__ import annotations

import json
import re
from pathlib import Path

from forensics import layouts
from forensics.ingest.read import read_splits
from forensics.ingest.records import recognise
from forensics.ingest.sampling import ALL, needed_recognisers

from ..helpers import ingest_paths, records_by_line

SHAPES = Path(__file__).resolve().parents[1] / "data" / "shapes"

KAFKA = "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
PLAIN = [
    "[2024-03-11 14:05:33,064] INFO [Consumer clientId=c-1, groupId=g] Setting offset for partition orders-2 to the committed offset"
    f" FetchPosition{{offset=40112, offsetEpoch=Optional[7], currentLeader=LeaderAndEpoch{{leader=Optional[k-2:9092 (id: 2 rack: null)], epoch=7}}}} ({KAFKA})",
    "[2024-03-11 14:05:33,070] INFO [Consumer clientId=c-1, groupId=g] Adding newly assigned partitions: orders-2, orders-3 "
    f"[2024-03-11 14:05:33,070] INFO looks like a head ({KAFKA})",
    f"[2024-03-11 14:05:34,001] ERROR [Consumer clientId=c-1, groupId=g] Offset commit with offsets {{orders-2=OffsetAndMetadata{{offset=40612}}}} failed ({KAFKA})",
    "org.apache.kafka.clients.consumer.CommitFailedException: Offset commit cannot be completed",
    "",
    "\tat org.apache.kafka.clients.consumer.KafkaConsumer.commitSync(KafkaConsumer.java:1608)",
    "[2024-03-11 14:05:35,000] INFO " + "an application line long enough to be cut " * 3 + "(com.example.App)",
    "[2024-03-11 14:05:36,000] INFO [Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions orders-2 (" + KAFKA + ")",
]
"""A plain log: a record whose committed offset the runtime cuts, one cut just before text
that looks like a record head, a record with an exception, a blank line and a frame, an
application line, a last record."""
CUTS = {0: ["offset=40", "rack: null)], epoch"], 1: ["orders-3 "], 6: ["cut an application"]}
"""Line of ``PLAIN`` -> the text after which the runtime ended a piece (``P``)."""


def pieces(line: str, cuts: list[str]) -> list[str]:
    """``line`` cut after each text of ``cuts``."""
    out, rest = [], line
    for cut in cuts:
        end = rest.index(cut) + len(cut)
        out.append(rest[:end])
        rest = rest[end:]
    return [*out, rest]


def cri_lines(plain: list[str], stamp, cuts=CUTS) -> list[str]:
    """``plain`` as a CRI log: each line ``F``, cut into ``P`` pieces after each text of ``cuts``;
    a blank line written without the space before its empty text, as conmon may."""
    out = []
    for i, line in enumerate(plain):
        cut = pieces(line, cuts.get(i, []))
        for j, piece in enumerate(cut):
            tag = "F" if j == len(cut) - 1 else "P"
            out.append(f"{stamp(len(out))} stdout {tag}" + (f" {piece}" if piece else ""))
    return out


def docker_lines(plain: list[str], stamp, cuts=CUTS) -> list[str]:
    """``plain`` as Docker's json-file: one entry a line, or a piece of it (no final newline)."""
    out = []
    for i, line in enumerate(plain):
        cut = pieces(line, cuts.get(i, []))
        for j, piece in enumerate(cut):
            entry = {"log": piece + ("\n" if j == len(cut) - 1 else ""), "stream": "stdout", "time": stamp(len(out))}
            out.append(json.dumps(entry, separators=(",", ":")))
    return out


def containerd(n: int) -> str:
    return f"2024-03-11T14:05:33.{64000 + n}Z"


def cri_o(n: int) -> str:
    return f"2024-03-11T14:05:33.{64000 + n:09d}+00:00"


def test_pieces_of_a_line_make_the_record_of_the_plain_line(spark, tmp_path):
    """Every record reads as in the plain log, its pieces joined with no line break (the
    committed offset 40112 stays one number); a piece is a continuation, never a head, even
    where it reads as one; no line is unparsed."""
    (tmp_path / "plain.log").write_text("\n".join(PLAIN) + "\n")
    for wrapper, written in (
        ("cri", cri_lines(PLAIN, containerd)),
        ("cri", cri_lines(PLAIN, cri_o)),
        ("docker_json", docker_lines(PLAIN, containerd)),
    ):
        (tmp_path / "pod.log").write_text("\n".join(written) + "\n")
        plain, pod = ingest_paths(spark, tmp_path / "plain.log"), ingest_paths(spark, tmp_path / "pod.log")
        fields = ("ts", "level", "logger", "message")
        assert read_in_order(pod, fields) == read_in_order(plain, fields)
        assert "offset=40112," in records_by_line(pod)[1]["message"]
        extra = sum(len(cuts) for cuts in CUTS.values())
        got = {k: pod.accounting[k] for k in ("lines", "records", "continuations", "irrelevant", "unparsed")}
        expected = {k: plain.accounting[k] for k in got}
        assert got == {**expected, "lines": expected["lines"] + extra, "continuations": expected["continuations"] + extra}
        assert pod.inputs[0]["wrappers"] == {wrapper: len(PLAIN), f"{wrapper}_partial": extra}


def read_in_order(result, fields) -> list[list]:
    records = records_by_line(result)
    return [[records[line][f] for f in fields] for line in sorted(records)]


def test_a_line_in_no_layout_is_dated_by_the_runtime(spark, tmp_path):
    """A line in no layout is a record of its own, dated by the runtime's time, as behind
    ``kubectl logs --timestamps``; the streams and both time forms are read."""
    lines = [
        "2024-03-11T14:05:33.064Z stdout F Starting the orders service",
        "2024-03-11T14:05:33.065000000+00:00 stderr F [Consumer clientId=c-1, groupId=g] Revoke previously assigned partitions orders-2",
    ]
    (tmp_path / "pod.log").write_text("\n".join(lines) + "\n")
    result = ingest_paths(spark, tmp_path / "pod.log")
    records = records_by_line(result)
    assert list(records) == [2] and records[2]["layout"] == "message_only" and records[2]["ts"].isoformat() == "2024-03-11T14:05:33.065000"
    assert records[2]["message"].startswith("[Consumer clientId=c-1")
    assert result.accounting["irrelevant"] == 1 and result.accounting["unparsed"] == 0


ODD = [
    "2024-03-11T14:05:33.064Z kubectl's shape, no stream",
    "2024-03-11T14:05:33.064Z stdout X no such tag",
    "2024-03-11T14:05:33.064Z stdout Fx no tag",
    "2024-03-11T14:05:33.064Z stdin F no such stream",
    "2024-03-11T14:05:33.064Z stdout F",
    "2024-03-11T14:05:33.064Z stdout P",
    "not wrapped",
    "2024-03-11T14:05:33.064Z host java[4242]: journald's shape",
]


def test_cri_lines_peeled_first_are_read_as_the_full_plan_reads_them(spark, tmp_path):
    """Where the samples show only the CRI prefix, lines with it skip the exact layouts and the
    wrapper regexes, and get the layout, wrapper, time and inner line the full plan gives them;
    the lines in other shapes too."""
    sampled, odd = tmp_path / "pod.log", tmp_path / "odd.log"
    lines = cri_lines(PLAIN, containerd) + cri_lines(PLAIN, cri_o)
    sampled.write_text("\n".join(lines) + "\n")
    odd.write_text("\n".join(lines + ODD) + "\n")
    tried = needed_recognisers([str(sampled)])
    assert tried.prefixed == "cri" and needed_recognisers([str(odd)]).prefixed is None
    columns = ["uri", "line", "value", "layout", "wrapper", "w_ts", "w_host"]
    read = read_splits(spark, [str(sampled), str(odd)])
    first = recognise(read, layouts.LAYOUTS, tried).select(columns).collect()
    full = recognise(read, layouts.LAYOUTS, ALL).select(columns).collect()
    assert sorted(map(tuple, first), key=str) == sorted(map(tuple, full), key=str)
    odd_rows = [r for r in sorted(full, key=lambda r: r["line"]) if r["uri"].endswith("odd.log")][len(lines) :]
    assert [r["wrapper"] for r in odd_rows] == ["kubectl", "kubectl", "kubectl", "kubectl", "cri", "cri_partial", None, "journald"]
    assert [r["value"] for r in odd_rows][4:6] == ["", ""]
    assert all(re.match(r"^\S+ std(out|err) [FP]", line) for line in lines)


def test_a_json_record_in_pieces_is_read_whole(spark, tmp_path):
    """A JSON record the runtime cut (a long config dump or stack trace in one JSON line) is no
    JSON until its pieces are glued: it is then read as the JSON line it is, with the fields
    from every piece, and not as a line in no layout dated by the runtime."""
    plain = (SHAPES / "ecs_json" / "host-a.log").read_text().splitlines()
    cuts = {i: [line[140:150], line[290:300]] for i, line in enumerate(plain) if len(line) > 320}
    assert len(cuts) >= 20
    (tmp_path / "plain.log").write_text("\n".join(plain) + "\n")
    expected = ingest_paths(spark, tmp_path / "plain.log")
    fields = ("ts", "level", "logger", "thread", "layout", "message")
    for wrapper, written in (("cri", cri_lines(plain, cri_o, cuts)), ("docker_json", docker_lines(plain, containerd, cuts))):
        (tmp_path / "pod.log").write_text("\n".join(written) + "\n")
        pod = ingest_paths(spark, tmp_path / "pod.log")
        assert read_in_order(pod, fields) == read_in_order(expected, fields)
        extra = 2 * len(cuts)
        assert pod.accounting["records"] == expected.accounting["records"] and pod.accounting["continuations"] == extra
        assert pod.inputs[0]["wrappers"] == {wrapper: len(plain), f"{wrapper}_partial": extra}
