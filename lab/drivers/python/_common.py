"""What every Python lab driver shares: its arguments, the truth journal, and stopping on SIGTERM.

Runs inside a client's own venv (no import from the toolkit or the lab), so a driver sees only
its client library and the standard library.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import time


def consumer_arguments(description: str) -> argparse.Namespace:
    """The consumer drivers' common options; each driver maps them onto its client's settings."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", action="append", required=True)
    parser.add_argument("--member", required=True, help="name of this member in the journal")
    parser.add_argument("--journal", required=True, help="directory of processed-<member>.jsonl")
    parser.add_argument("--offset-reset", default="earliest", choices=["earliest", "latest"])
    parser.add_argument("--session-timeout-ms", type=int, default=10000)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=3000)
    parser.add_argument("--max-poll-interval-ms", type=int, default=300000)
    parser.add_argument("--metadata-max-age-ms", type=int, default=300000)
    parser.add_argument("--auto-commit-interval-ms", type=int, default=5000)
    parser.add_argument("--slow-after", type=int, default=0, help="sleep once after this many records")
    parser.add_argument("--slow-ms", type=int, default=0)
    parser.add_argument(
        "--log", default="stderr", choices=["stderr", "logger"], help="librdkafka only: its own stderr lines, or the app's logging logger"
    )
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO"])
    parser.add_argument(
        "--log-format", default="default", choices=sorted(FORMATS), help="basicConfig's default layout, or a team's usual one with a time"
    )
    return parser.parse_args()


FORMATS = {"default": logging.BASIC_FORMAT, "asctime": "%(asctime)s %(levelname)s %(name)s %(message)s"}
"""basicConfig's default `LEVEL:name:message` (no time), or the logging cookbook's form with one."""


def basic_logging(level: str, layout: str = "default") -> None:
    """logging.basicConfig as an application that turns its level up does, in `layout`."""
    logging.basicConfig(level=getattr(logging, level), format=FORMATS[layout])


class Journal:
    """Appends each processed record to journal/processed-<member>.jsonl, flushed per record,
    so a member killed with SIGKILL has journaled exactly what its handler finished."""

    def __init__(self, directory: str, member: str):
        os.makedirs(directory, exist_ok=True)
        self.member = member
        self.file = open(os.path.join(directory, f"processed-{member}.jsonl"), "a", encoding="utf-8")
        self.count = 0

    def processed(self, topic: str, partition: int, offset: int, generation: int | None) -> None:
        record = {"member": self.member, "generation": generation, "topic": topic, "partition": partition, "offset": offset}
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()
        self.count += 1


class Slowness:
    """A handler that stalls once (the poll-timeout fault): after `after` records, sleep `ms`."""

    def __init__(self, after: int, ms: int):
        self.after, self.ms, self.done = after, ms, False

    def step(self, count: int) -> None:
        if self.ms and not self.done and count >= self.after:
            self.done = True
            time.sleep(self.ms / 1000)


class Stop:
    """Set by SIGTERM or SIGINT: the driver leaves its loop and closes its client (LeaveGroup)."""

    def __init__(self):
        self.requested = False
        signal.signal(signal.SIGTERM, self._set)
        signal.signal(signal.SIGINT, self._set)

    def _set(self, *_):
        self.requested = True
