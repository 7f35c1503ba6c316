"""The Java client drivers: jars per client version with the logging binding a user of that era
would add, the driver classes compiled against them, and member/producer processes to steer.

Logging, as an application that kept its framework's usual pattern would write it:
2.8 through slf4j-log4j12 (log4j 1.2, `%d{ISO8601} %-5p [%t] %c - %m%n`), 3.9 through logback
(`%d{yyyy-MM-dd HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n`, loggers abbreviated),
4.x through log4j2 (`%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] %-5level %c - %msg%n`); Kafka's loggers at
INFO, and the commit loggers at DEBUG only where a scenario asks (`debug_commits`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from . import maven

DRIVERS = Path(__file__).resolve().parent / "drivers" / "java" / "clients"

CLIENT_VERSIONS = ("2.8.2", "3.9.2", "4.4.0")
BROKER_FOR = {"2.8.2": "3.9.2", "3.9.2": "3.9.2", "4.4.0": "4.4.0"}
"""The broker each Java client version runs against (2.8 on the 3.9 broker, as the brief asks)."""

COMMIT_LOGGERS = (
    "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
    "org.apache.kafka.clients.consumer.internals.CommitRequestManager",
)


def _family(version: str) -> str:
    major, minor = (int(x) for x in version.split(".")[:2])
    return "log4j1" if major < 3 else "logback" if major == 3 else "log4j2"


def client_jars(version: str) -> list[Path]:
    """kafka-clients of `version` and its logging binding (listed first, so its slf4j-api wins)."""
    binding = {
        "log4j1": ["org.slf4j:slf4j-log4j12:1.7.30"],
        "logback": ["ch.qos.logback:logback-classic:1.3.14"],
        "log4j2": ["org.apache.logging.log4j:log4j-slf4j-impl:2.25.5", "org.apache.logging.log4j:log4j-core:2.25.5"],
    }[_family(version)]
    return maven.jars([*binding, f"org.apache.kafka:kafka-clients:{version}"])


def classpath(version: str) -> str:
    """The drivers' classes and the client's jars, as one classpath."""
    jars = client_jars(version)
    classes = maven.javac_build(DRIVERS, jars)
    return maven.classpath([classes, *jars])


def _log_config(family: str, log_file: Path, debug: tuple[str, ...]) -> tuple[str, str]:
    """(file name, text) of the logging configuration writing `log_file`."""
    if family == "log4j1":
        lines = [
            "log4j.rootLogger=INFO, file",
            "log4j.appender.file=org.apache.log4j.FileAppender",
            f"log4j.appender.file.File={log_file}",
            "log4j.appender.file.layout=org.apache.log4j.PatternLayout",
            "log4j.appender.file.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c - %m%n",
            *(f"log4j.logger.{name}=DEBUG" for name in debug),
        ]
        return "log4j.properties", "\n".join(lines) + "\n"
    if family == "logback":
        loggers = "".join(f'  <logger name="{name}" level="DEBUG"/>\n' for name in debug)
        return "logback.xml", (
            "<configuration>\n"
            '  <appender name="FILE" class="ch.qos.logback.core.FileAppender">\n'
            f"    <file>{log_file}</file>\n"
            "    <encoder><pattern>%d{yyyy-MM-dd HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n</pattern></encoder>\n"
            "  </appender>\n"
            f"{loggers}"
            '  <root level="INFO"><appender-ref ref="FILE"/></root>\n'
            "</configuration>\n"
        )
    lines = [
        "appender.file.type=File",
        "appender.file.name=file",
        f"appender.file.fileName={log_file}",
        "appender.file.layout.type=PatternLayout",
        "appender.file.layout.pattern=%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] %-5level %c - %msg%n",
        "rootLogger.level=INFO",
        "rootLogger.appenderRef.file.ref=file",
    ]
    for i, name in enumerate(debug):
        lines += [f"logger.d{i}.name={name}", f"logger.d{i}.level=DEBUG"]
    return "log4j2.properties", "\n".join(lines) + "\n"


def _log_flag(family: str, config: Path) -> str:
    return {
        "log4j1": f"-Dlog4j.configuration=file:{config}",
        "logback": f"-Dlogback.configurationFile={config}",
        "log4j2": f"-Dlog4j2.configurationFile={config}",
    }[family]


class JavaProcess:
    """One driver JVM: its log in `run_dir/<name>/app.log`, its control file and status output
    in `scratch/<name>/` (outside the evidence)."""

    def __init__(self, main: str, version: str, run_dir: Path, scratch: Path, name: str, args: dict, debug_commits: bool = False):
        self.name = name
        self.version = version
        self.log_dir = Path(run_dir) / name
        self.scratch = Path(scratch) / name
        self.control = self.scratch / "control"
        self.stdout = self.scratch / "stdout"
        self.main = main
        self.args = {**args, "control": str(self.control)}
        self.debug = COMMIT_LOGGERS if debug_commits else ()
        self.proc: subprocess.Popen | None = None
        self._classpath = classpath(version)
        self.starts = 0
        self.killed = False

    def start(self) -> JavaProcess:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.control.write_text("")
        family = _family(self.version)
        name, text = _log_config(family, self.log_dir / "app.log", self.debug)
        config = self.scratch / name
        config.write_text(text)
        argv = [f"{k}={v}" for k, v in self.args.items()]
        out = open(self.stdout, "a")
        self.proc = subprocess.Popen(
            [
                "java",
                "-Xmx192m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                _log_flag(family, config),
                "-cp",
                self._classpath,
                self.main,
                *argv,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        self.starts += 1
        self.killed = False
        return self

    def check_alive(self) -> None:
        """Fail when the driver died on its own (an exception, not the lab's SIGKILL or stop)."""
        if self.proc is not None and self.proc.poll() not in (None, 0) and not self.killed:
            raise RuntimeError(f"{self.name} exited with {self.proc.returncode} on its own:\n{self.tail()}")

    def command(self, text: str) -> None:
        with open(self.control, "a") as handle:
            handle.write(text + "\n")

    def statuses(self) -> list[str]:
        if not self.stdout.exists():
            return []
        return [line[7:] for line in self.stdout.read_text(errors="replace").splitlines() if line.startswith("STATUS ")]

    def wait_status(self, pattern: str, timeout: float = 60, after: int = 0) -> str:
        """The first status line (from index `after`) matching `pattern`; fails after `timeout`."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.statuses()[after:]:
                if regex.search(line):
                    return line
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.proc.returncode}) before status /{pattern}/:\n{self.tail()}")
            time.sleep(0.1)
        raise TimeoutError(f"{self.name}: no status /{pattern}/ within {timeout:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        text = self.stdout.read_text(errors="replace") if self.stdout.exists() else ""
        return "".join(text.splitlines(True)[-15:])

    def signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def stop(self, timeout: float = 30) -> None:
        """Graceful: the `stop` command, then SIGTERM, then SIGKILL."""
        if self.proc is None or self.proc.poll() is not None:
            self.check_alive()
            return
        self.command("stop")
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.check_alive()

    def kill(self) -> None:
        """SIGKILL (the process cannot leave the group), and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.killed = True
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def consumer(
    version: str,
    run_dir: Path,
    scratch: Path,
    name: str,
    *,
    bootstrap: str,
    topic: str,
    group: str,
    debug_commits: bool = False,
    **settings,
) -> JavaProcess:
    """A LabConsumer member named `name` (see LabConsumer.java for the settings: commit, assignor,
    protocol, instance, reset, delay.ms, session.ms, max.poll.ms, max.poll.records, prop.*)."""
    args = {"bootstrap": bootstrap, "topic": topic, "group": group, "member": name}
    return _member("LabConsumer", f"processed-{name}", version, run_dir, scratch, args, settings, debug_commits=debug_commits)


def _member(main: str, journal: str, version: str, run_dir: Path, scratch: Path, args: dict, settings: dict, **options) -> JavaProcess:
    """A group member's driver `main`, journaling to `journal/<journal>.jsonl`; `settings` are
    its further arguments with `_` for `.` (`max_poll_ms` is `max.poll.ms`)."""
    args = {**args, "journal": str(Path(run_dir) / "journal" / f"{journal}.jsonl")}
    args.update({k.replace("_", "."): v for k, v in settings.items()})
    (Path(run_dir) / "journal").mkdir(parents=True, exist_ok=True)
    return JavaProcess(main, version, run_dir, scratch, args["member"], args, **options)


def producer(version: str, run_dir: Path, scratch: Path, *, bootstrap: str, topic: str, name: str = "producer", **settings) -> JavaProcess:
    """A LabProducer journaling acked offsets to `journal/produced.jsonl` (settings: count, rate, prop.*)."""
    args = {"bootstrap": bootstrap, "topic": topic, "client.id": name, "journal": str(Path(run_dir) / "journal" / "produced.jsonl")}
    args.update({k.replace("_", "."): v for k, v in settings.items()})
    (Path(run_dir) / "journal").mkdir(parents=True, exist_ok=True)
    return JavaProcess("LabProducer", version, run_dir, scratch, name, args)


def transactor(
    version: str,
    run_dir: Path,
    scratch: Path,
    name: str,
    *,
    bootstrap: str,
    topic: str,
    output: str,
    group: str,
    transactional_id: str,
    **settings,
) -> JavaProcess:
    """A LabTransactor member `name` (consume-transform-produce under exactly-once, see
    LabTransactor.java): its attempts go to `journal/attempts-<name>.jsonl`; what took effect is
    `output` read with read_committed (`dump_committed`)."""
    args = {"bootstrap": bootstrap, "topic": topic, "output": output, "group": group, "member": name, "transactional.id": transactional_id}
    return _member("LabTransactor", f"attempts-{name}", version, run_dir, scratch, args, settings)


def dump_committed(version: str, bootstrap: str, output: str, out: Path) -> list[dict]:
    """`output` read from its start with read_committed: the records (journal entries the
    transactors forwarded) whose transactions committed."""
    subprocess.run(
        [
            "java",
            "-Xmx192m",
            "-cp",
            classpath(version),
            "LabTransactor",
            "mode=dump",
            f"bootstrap={bootstrap}",
            f"output={output}",
            f"out={out}",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return [json.loads(line) for line in Path(out).read_text().splitlines() if line.strip()]
