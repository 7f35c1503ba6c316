"""What every scenario does around its fault: a broker, a topic, members and a producer to steer,
offset dumps taken with Kafka's CLI while the run goes on, and the truth written at the end."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from .. import javaclients, truth
from ..broker import Broker


def stamp() -> str:
    """A line the offset parsers read as the snapshot time of the dump below it."""
    return "# " + datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") + "\n"


class Lab:
    """`with Lab(run_dir, client, version) as lab:` a broker (the one `javaclients.BROKER_FOR`
    pairs with the client version) holding `topic`, and the processes of the run; everything is
    stopped on exit, whatever happened."""

    def __init__(
        self,
        run_dir: Path,
        client: str,
        version: str,
        *,
        topic: str = "orders",
        partitions: int = 2,
        group: str = "orders-app",
        broker_version: str | None = None,
        **broker_overrides,
    ):
        self.run_dir = Path(run_dir)
        self.client, self.version = client, version
        self.topic, self.partitions, self.group = topic, partitions, group
        self.broker = Broker(broker_version or javaclients.BROKER_FOR[version], self.run_dir, **broker_overrides)
        self.scratch = Path(tempfile.mkdtemp(prefix="forensics-lab-"))
        self.processes: list[javaclients.JavaProcess] = []
        self.generations: set[int] = set()

    def __enter__(self) -> Lab:
        (self.run_dir / "offsets").mkdir(parents=True, exist_ok=True)
        (self.run_dir / "journal").mkdir(parents=True, exist_ok=True)
        try:
            self.broker.start()
            self.broker.create_topic(self.topic, self.partitions)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        for process in self.processes:
            process.kill()
        self.broker.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def consumer(self, name: str, version: str | None = None, **settings) -> javaclients.JavaProcess:
        process = javaclients.consumer(
            version or self.version,
            self.run_dir,
            self.scratch,
            name,
            bootstrap=self.broker.bootstrap,
            topic=self.topic,
            group=self.group,
            **settings,
        )
        self.processes.append(process)
        return process

    def transactor(self, name: str, output: str, **settings) -> javaclients.JavaProcess:
        """A consume-transform-produce member under exactly-once (`javaclients.transactor`)."""
        process = javaclients.transactor(
            self.version,
            self.run_dir,
            self.scratch,
            name,
            bootstrap=self.broker.bootstrap,
            topic=self.topic,
            output=output,
            group=self.group,
            **settings,
        )
        self.processes.append(process)
        return process

    def producer(self, **settings) -> javaclients.JavaProcess:
        # the producer of the same client version as the members (its log is evidence too)
        process = javaclients.producer(
            self.version, self.run_dir, self.scratch, bootstrap=self.broker.bootstrap, topic=self.topic, **settings
        )
        self.processes.append(process)
        return process

    # -- waiting on the journals -----------------------------------------------------------

    def produced_count(self) -> int:
        path = self.run_dir / "journal" / "produced.jsonl"
        return sum(1 for _ in open(path)) if path.exists() else 0

    def processed_keys(self) -> set[tuple]:
        keys = set()
        for path in (self.run_dir / "journal").glob("processed-*.jsonl"):
            keys.update((r["topic"], r["partition"], r["offset"]) for r in truth.read_journal(path))
        return keys

    def wait_produced(self, n: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.produced_count() < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {self.produced_count()} of {n} records acknowledged in {timeout:.0f} s")
            time.sleep(0.1)

    def wait_caught_up(self, timeout: float = 60, partitions: set[int] | None = None, from_offset: int = 0) -> None:
        """Until every acked record (of `partitions`, default all; at `from_offset` or later: the
        records below a deletion point may be lost for good) has been processed by someone."""
        deadline = time.monotonic() + timeout
        while True:
            wanted = {k for k in truth.produced(self.run_dir) if (partitions is None or k[1] in partitions) and k[2] >= from_offset}
            missing = wanted - self.processed_keys()
            if not missing:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(missing)} acked records still unprocessed after {timeout:.0f} s")
            time.sleep(0.2)

    # -- the CLI dumps ---------------------------------------------------------------------

    def dump_group(self, members: bool = False) -> None:
        """`kafka-consumer-groups --describe` (and `--members` too) with a time stamp."""
        out = self.broker.tool(
            "kafka-consumer-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", self.group, check=False
        )
        if members:
            out = (
                out.rstrip("\n")
                + "\n\n"
                + self.broker.tool(
                    "kafka-consumer-groups",
                    "--bootstrap-server",
                    "{bootstrap}",
                    "--describe",
                    "--group",
                    self.group,
                    "--members",
                    check=False,
                )
            )
        with open(self.run_dir / "offsets" / "consumer-groups.txt", "a") as handle:
            handle.write(stamp() + out.rstrip("\n") + "\n\n")

    def dump_end_offsets(self) -> None:
        """GetOffsetShell: log start (`--time -2`) and log end (`--time -1`) of the topic."""
        with open(self.run_dir / "offsets" / "get-offsets.txt", "a") as handle:
            for when in ("-2", "-1"):
                out = self.broker.tool("kafka-get-offsets", "--bootstrap-server", "{bootstrap}", "--topic", self.topic, "--time", when)
                handle.write(stamp() + out)

    def dump_logs(self) -> None:
        """`kafka-dump-log` of the topic's segments (their log start) and, with `--offsets-decoder`,
        of `__consumer_offsets` (every commit the group made, in order)."""
        topic_dirs = [self.broker.log_dir(self.topic, p) for p in range(self.partitions_now())]
        segments = [str(s) for d in topic_dirs for s in sorted(d.glob("*.log"))]
        if segments:
            out = self.broker.tool("kafka-dump-log", "--files", ",".join(segments))
            (self.run_dir / "offsets" / "dump-log-topic.txt").write_text(out)
        offsets_dir = self.broker.log_dir("__consumer_offsets", 0)
        segments = [str(s) for s in sorted(offsets_dir.glob("*.log"))]
        if segments:
            out = self.broker.tool("kafka-dump-log", "--offsets-decoder", "--files", ",".join(segments))
            (self.run_dir / "offsets" / "dump-log-consumer-offsets.txt").write_text(out)

    def partitions_now(self) -> int:
        return len([d for d in self.broker.data.glob(f"data/{self.topic}-*") if re.fullmatch(rf"{re.escape(self.topic)}-\d+", d.name)])

    # -- the end ---------------------------------------------------------------------------

    def stop_all(self) -> None:
        for process in self.processes:
            process.stop()

    def generations_seen(self) -> list[int]:
        """The generations the members reported on assignment (`onPartitionsAssigned`)."""
        found = set()
        for process in self.processes:
            for line in process.statuses():
                match = re.match(r"assigned gen=(-?\d+) ", line)
                if match and int(match.group(1)) > 0:
                    found.add(int(match.group(1)))
        return sorted(found)

    def finish(self, scenario: str, *, expect_findings=None, forbid_verdicts=None, generations: bool = True, **extra) -> dict:
        """Final dumps, every process stopped, journals compacted, truth.json written."""
        self.stop_all()
        self.dump_group()
        self.dump_end_offsets()
        self.dump_logs()
        gens = self.generations_seen() if generations else []
        if not generations:  # KIP-848: groupMetadata().generationId() is the member epoch, not a generation
            extra["member_epochs"] = self.generations_seen()
        lost, duplicated = truth.lost_and_duplicated(self.run_dir)
        findings = expect_findings(lost, duplicated) if callable(expect_findings) else (expect_findings or [])
        return truth.write_truth(
            self.run_dir,
            scenario=scenario,
            client=self.client,
            version=self.version,
            expect_findings=findings,
            forbid_verdicts=forbid_verdicts or [],
            expect_rebalance_generations=gens,
            broker_version=self.broker.version,
            **extra,
        )


def ranges_as_findings(ranges: list[dict], detector: str, verdict: str) -> list[dict]:
    """Partial findings (`--json` vocabulary) naming each truth range exactly."""
    return [
        {
            "detector": detector,
            "verdict": verdict,
            "topic": r["topic"],
            "partition": r["partition"],
            "offset_from": r["from"],
            "offset_to": r["to"],
        }
        for r in ranges
    ]


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")
