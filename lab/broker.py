"""A real single-node KRaft Kafka (broker and controller combined) on 127.0.0.1, from Maven's jars.

Its `server.log` keeps Kafka's shipped layout (`[%d] %p %m (%c)%n`) at INFO, which holds the group
coordinator's lines (classic `GroupCoordinator` on 3.9, `GroupMetadataManager` on 4.x).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from . import maven

__all__ = ["Broker", "BrokerError", "VERSIONS", "broker_jars", "TOOLS"]

VERSIONS = ("4.4.0", "3.9.2")
"""The brokers the lab runs: the newest 4.x, and the newest 3.9 (classic coordinator, old clients)."""

TOOLS = {
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-storage": "kafka.tools.StorageTool",
}
_BY_MAJOR = {
    "3": {"kafka-dump-log": "kafka.tools.DumpLogSegments", "kafka-configs": "kafka.admin.ConfigCommand"},
    "4": {"kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments", "kafka-configs": "org.apache.kafka.tools.ConfigCommand"},
}


class BrokerError(RuntimeError):
    """The broker did not start or a tool failed; the message says why, with the log's tail."""


def broker_jars(version: str) -> list[Path]:
    """The broker's and CLI tools' jars, with Kafka's own log binding for that version."""
    coordinates = [f"org.apache.kafka:kafka_2.13:{version}", f"org.apache.kafka:kafka-tools:{version}"]
    if int(version.split(".")[0]) >= 4:
        # 4.x logs through log4j2; the distribution ships the slf4j binding that the pom leaves out
        coordinates.append("org.apache.logging.log4j:log4j-slf4j-impl:2.25.5")
    return maven.jars(coordinates)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_LOG4J1 = """\
log4j.rootLogger=INFO, kafkaAppender
log4j.appender.kafkaAppender=org.apache.log4j.FileAppender
log4j.appender.kafkaAppender.File={server_log}
log4j.appender.kafkaAppender.layout=org.apache.log4j.PatternLayout
log4j.appender.kafkaAppender.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.aux=org.apache.log4j.FileAppender
log4j.appender.aux.File={aux_log}
log4j.appender.aux.layout=org.apache.log4j.PatternLayout
log4j.appender.aux.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.controller=INFO, aux
log4j.additivity.kafka.controller=false
log4j.logger.state.change.logger=INFO, aux
log4j.additivity.state.change.logger=false
log4j.logger.kafka.request.logger=WARN, aux
log4j.additivity.kafka.request.logger=false
log4j.logger.kafka.log.LogCleaner=INFO, aux
log4j.additivity.kafka.log.LogCleaner=false
"""

_LOG4J2 = """\
appender.server.type=File
appender.server.name=server
appender.server.fileName={server_log}
appender.server.layout.type=PatternLayout
appender.server.layout.pattern=[%d] %p %m (%c)%n
appender.aux.type=File
appender.aux.name=aux
appender.aux.fileName={aux_log}
appender.aux.layout.type=PatternLayout
appender.aux.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.server.ref=server
logger.controller.name=kafka.controller
logger.controller.level=INFO
logger.controller.additivity=false
logger.controller.appenderRef.aux.ref=aux
logger.state.name=state.change.logger
logger.state.level=INFO
logger.state.additivity=false
logger.state.appenderRef.aux.ref=aux
logger.request.name=kafka.request.logger
logger.request.level=WARN
logger.request.additivity=false
logger.request.appenderRef.aux.ref=aux
logger.cleaner.name=kafka.log.LogCleaner
logger.cleaner.level=INFO
logger.cleaner.additivity=false
logger.cleaner.appenderRef.aux.ref=aux
"""

_TOOL_LOG4J1 = (
    "log4j.rootLogger=WARN, err\nlog4j.appender.err=org.apache.log4j.ConsoleAppender\n"
    "log4j.appender.err.Target=System.err\nlog4j.appender.err.layout=org.apache.log4j.PatternLayout\n"
    "log4j.appender.err.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
)
_TOOL_LOG4J2 = (
    "appender.err.type=Console\nappender.err.name=err\nappender.err.target=SYSTEM_ERR\n"
    "appender.err.layout.type=PatternLayout\nappender.err.layout.pattern=[%d] %p %m (%c)%n\n"
    "rootLogger.level=WARN\nrootLogger.appenderRef.err.ref=err\n"
)


class Broker:
    """`with Broker("4.4.0", workdir) as b:` a running broker at `b.bootstrap`; gone after the block.

    `overrides` become server properties (underscores read as dots: `group_min_session_timeout_ms=500`),
    or pass exact names in `properties={...}`. Data lives in a temporary directory outside `workdir`;
    only `workdir/broker/server.log` stays (coordinator and the rest at INFO; the controller and
    state-change loggers go to a file in the data directory, as Kafka's shipped config splits them).
    """

    def __init__(
        self, version: str = "4.4.0", workdir: Path | str = ".", properties: dict | None = None, start_timeout: float = 90, **overrides
    ):
        self.version = version
        self.major = int(version.split(".")[0])
        self.workdir = Path(workdir)
        self.start_timeout = start_timeout
        self.props = {key.replace("_", "."): value for key, value in overrides.items()}
        self.props.update(properties or {})
        self.port = self.controller_port = 0
        self.proc: subprocess.Popen | None = None
        self.data: Path | None = None
        self._cp = ""

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def server_log(self) -> Path:
        return self.workdir / "broker" / "server.log"

    @property
    def classpath(self) -> str:
        return self._cp

    def _properties(self) -> dict:
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data / "data"),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "false",
        }
        props.update({k: str(v) for k, v in self.props.items()})
        return props

    def _write(self, name: str, text: str) -> Path:
        path = self.data / name
        path.write_text(text)
        return path

    def _log_flag(self, config: Path) -> str:
        return f"-Dlog4j2.configurationFile={config}" if self.major >= 4 else f"-Dlog4j.configuration=file:{config}"

    def start(self) -> Broker:
        self._cp = maven.classpath(broker_jars(self.version))
        self.data = Path(tempfile.mkdtemp(prefix="forensics-lab-broker-"))
        self.server_log.parent.mkdir(parents=True, exist_ok=True)
        self.port, self.controller_port = free_port(), free_port()
        while self.controller_port == self.port:
            self.controller_port = free_port()
        config = self._write("server.properties", "".join(f"{k}={v}\n" for k, v in self._properties().items()))
        template = _LOG4J2 if self.major >= 4 else _LOG4J1
        log_config = self._write(
            "log4j2.properties" if self.major >= 4 else "log4j.properties",
            template.format(server_log=self.server_log, aux_log=self.data / "controller.log"),
        )
        self._tool_log = self._write(
            "tools-log4j" + (".properties" if self.major < 4 else "2.properties"), _TOOL_LOG4J2 if self.major >= 4 else _TOOL_LOG4J1
        )
        cluster_id = _cluster_id()
        fmt = self._java("kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(config), timeout=120)
        if fmt.returncode != 0:
            raise BrokerError(f"kafka-storage format failed for Kafka {self.version}:\n{(fmt.stdout + fmt.stderr)[-2000:]}")
        stdout = open(self.data / "stdout.log", "w")
        self.proc = subprocess.Popen(
            [
                "java",
                "-Xms256m",
                "-Xmx512m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                f"-Dforensics.lab.workdir={self.workdir.resolve()}",
                self._log_flag(log_config),
                "-cp",
                self._cp,
                "kafka.Kafka",
                str(config),
            ],
            stdout=stdout,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        stdout.close()
        self._wait_started()
        return self

    def _wait_started(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"Kafka {self.version} exited with {self.proc.returncode} while starting")
            if self.server_log.exists() and "Kafka Server started" in self.server_log.read_text(errors="replace"):
                if _listening(self.port):
                    return
            time.sleep(0.2)
        self._fail(f"Kafka {self.version} did not start within {self.start_timeout:.0f} s")

    def _fail(self, why: str) -> None:
        tail = ""
        for path in (self.server_log, self.data / "stdout.log"):
            if path.exists():
                tail += f"\n--- {path.name} (tail) ---\n" + "".join(path.read_text(errors="replace").splitlines(True)[-30:])
        self.stop()
        raise BrokerError(why + tail)

    def _java(self, main: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        log_config = getattr(self, "_tool_log", None)
        flags = [self._log_flag(log_config)] if log_config else []
        return subprocess.run(
            ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", *flags, "-cp", self._cp, main, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def tool(self, name: str, *args: str, check: bool = True, timeout: float = 120) -> str:
        """Run a Kafka CLI tool (`kafka-topics`, `kafka-consumer-groups`, `kafka-get-offsets`,
        `kafka-dump-log`, `kafka-delete-records`, `kafka-configs`) by its class; its stdout.

        `{bootstrap}` in an argument is replaced by this broker's address.
        """
        main = {**TOOLS, **_BY_MAJOR["4" if self.major >= 4 else "3"]}.get(name, name)
        args = tuple(a.replace("{bootstrap}", self.bootstrap) for a in args)
        proc = self._java(main, *args, timeout=timeout)
        if check and proc.returncode != 0:
            raise BrokerError(f"{name} {' '.join(args)} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
        return proc.stdout

    def log_dir(self, topic: str, partition: int) -> Path:
        """The data directory of one partition (for `kafka-dump-log --files`)."""
        return self.data / "data" / f"{topic}-{partition}"

    def create_topic(self, topic: str, partitions: int = 1) -> None:
        self.tool(
            "kafka-topics",
            "--bootstrap-server",
            self.bootstrap,
            "--create",
            "--topic",
            topic,
            "--partitions",
            str(partitions),
            "--replication-factor",
            "1",
        )

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after 20 s) and delete its data; keep its logs."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None
        if self.data is not None:
            shutil.rmtree(self.data, ignore_errors=True)
            self.data = None

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _cluster_id() -> str:
    """A random cluster id in Kafka's form (22 characters of URL-safe base64 of a UUID).

    Like Kafka's `Uuid.randomUuid`, it never starts with "-": kafka-storage's argument parser
    would read such an id as an option and fail the format (one start in 64).
    """
    import base64

    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0
