"""Real Spark services on 127.0.0.1 for the ``cluster`` tests: a standalone master with one
worker, and a Spark Connect server, all started from the installed pyspark's ``SPARK_HOME``.

Every service runs in a process group of its own (the worker's executors join its group) and
is stopped by the job that started it (``test_cluster.run_on_clusters``, on the suite's
background lane): SIGTERM to the group, then SIGKILL. On Linux each one is also tied to the
thread that started it (``PR_SET_PDEATHSIG``; the lane lives as long as the test process), so a
killed pytest leaves no JVMs. Services start without waiting; ``ready()`` waits.

Every service binds port 0 and the tests read the port it got from its log. A port picked here
and handed over can be taken in between by any other JVM of the run (a CI run once saw the
Connect server fail to bind one, while the thing that took it accepted the tests' probe).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Callable, TypeVar

import pytest

T = TypeVar("T")

ROOT = Path(__file__).parent.parent.parent
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The JIT's quick tier and the serial collector for every JVM these tests start (master, worker,
executors, Connect server, the CLI's driver): each runs a few seconds of cold code, where the
optimising compiler's threads took as much CPU as the work (``forensics.spark.QUICK_TIER``).
What is under test is the toolkit's result on a cluster, which the JIT's tier does not change."""
START_TIMEOUT = 90  # seconds for a service to be ready (JVM start on a busy 2-core machine)
RUN_TIMEOUT = 300  # seconds for one `forensics analyze` run


def spark_home() -> str:
    from pyspark.find_spark_home import _find_spark_home

    return _find_spark_home()


def spark_class() -> str:
    return os.path.join(spark_home(), "bin", "spark-class")


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child killed when the test process dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before fork, only called after
    return lambda: prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def service_env(work: Path) -> dict[str, str]:
    """Environment of every service and client: this pyspark, loopback only, scratch in ``work``."""
    from tests.background import ENVIRONMENT

    return {
        **ENVIRONMENT,
        "SPARK_HOME": spark_home(),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_DIRS": str(work / "local"),
        "SPARK_LOG_DIR": str(work / "logs"),
        "SPARK_PID_DIR": str(work),
        "SPARK_CONF_DIR": str(work / "conf"),  # only work_dir's spark-defaults.conf: no site one leaks in
        "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM,  # master and worker
        "JDK_JAVA_OPTIONS": QUICK_JVM,  # the CLI's driver JVM (the CLI sets the driver's options itself)
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }


class Service:
    """One long-running process (group) with its output in ``<work>/<name>.log``."""

    def __init__(self, name: str, command: list[str], work: Path):
        self.name = name
        self.log = work / f"{name}.log"
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=work,
                env=service_env(work),
                start_new_session=True,
                preexec_fn=_die_with_parent(),
            )

    def check_running(self) -> None:
        code = self.process.poll()
        if code is not None:
            pytest.fail(f"{self.name} exited with code {code} during start-up:\n{self.tail()}", pytrace=False)

    def logged(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """The first match of ``pattern`` in the service's log so far."""
        return pattern.search(self.log.read_text(errors="replace"))

    def port(self, pattern: re.Pattern[str], what: str) -> int:
        """Wait until the service logs the port it bound (``pattern``'s first group); return it."""
        return int(wait_for(what, lambda: self.logged(pattern), [self])[1])

    def tail(self, lines: int = 40) -> str:
        return tail(self.log, self.name, lines)

    def stop(self) -> None:
        """SIGTERM to the whole process group, SIGKILL after 15 s; never raises."""
        for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                self.process.poll()  # reap the leader
                if not group_alive(self.process.pid):
                    return
                time.sleep(0.2)


def tail(path: Path, name: str, lines: int) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"  {name}| (no log at {path})"
    return "\n".join(f"  {name}| {line}" for line in text[-lines:])


def group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is left in process group ``pgid``."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def wait_for(what: str, check: Callable[[], T], services: list[Service], timeout: float = START_TIMEOUT) -> T:
    """``check()``'s first true value, tried every half second while all ``services`` run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for service in services:
            service.check_running()
        try:
            found = check()
            if found:
                return found
        except (OSError, ValueError):  # not listening yet, or a starting master's UI answering its HTML page before its JSON
            pass
        time.sleep(0.5)
    logs = "\n".join(service.tail() for service in services)
    pytest.fail(f"Timed out after {timeout:.0f} s waiting for {what}.\n{logs}", pytrace=False)


class Standalone:
    """A standalone master and one worker (1 core, 1 GiB) on 127.0.0.1. The worker is started
    once the master has logged its port (``ready()``)."""

    MASTER_PORT = re.compile(r"Starting Spark master at spark://[^\s:]+:(\d+)")
    UI_PORT = re.compile(r"Successfully started service 'MasterUI' on port (\d+)")

    def __init__(self, work: Path):
        self.work = work
        self.services: list[Service] = [
            Service(
                "master",
                [spark_class(), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"],
                work,
            )
        ]
        self.ui_port: int | None = None

    def state(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as response:
            return json.load(response)

    def ready(self) -> str:
        """Start the worker and wait until the master lists it as ALIVE; return the master URL."""
        master = self.services[0]
        url = f"spark://127.0.0.1:{master.port(self.MASTER_PORT, 'the master to bind its port')}"
        self.ui_port = master.port(self.UI_PORT, "the master's web UI to bind its port")
        self.services.append(
            Service(
                "worker",
                [
                    spark_class(),
                    "org.apache.spark.deploy.worker.Worker",
                    url,
                    "--host",
                    "127.0.0.1",
                    "--webui-port",
                    "0",
                    "--cores",
                    "1",
                    "--memory",
                    "1g",
                    "--work-dir",
                    str(self.work / "worker"),
                ],
                self.work,
            )
        )
        wait_for(
            f"the worker to register as ALIVE with the master {url}",
            lambda: any(w.get("state") == "ALIVE" for w in self.state().get("workers", [])),
            self.services,
        )
        return url

    def logs(self) -> str:
        """The last lines of the master, worker and executor logs."""
        executors = sorted(self.work.glob("worker/app-*/*/stderr"))
        return "\n".join([*(s.tail(20) for s in self.services), *(tail(e, "executor", 40) for e in executors)])

    def stop(self) -> None:
        for service in reversed(self.services):  # worker (and its executors) first
            service.stop()


class ConnectServer:
    """A Spark Connect server (``SparkConnectServer``, shipped in pyspark/jars) on 127.0.0.1.

    Its own driver runs ``local[2]``: what is under test is the toolkit speaking Connect.
    """

    STARTED = re.compile(r"Spark Connect server started at: \S*:(\d+)")

    def __init__(self, work: Path):
        self.service = Service(
            "connect",
            [
                os.path.join(spark_home(), "bin", "spark-submit"),
                "--class",
                "org.apache.spark.sql.connect.service.SparkConnectServer",
                "--name",
                "forensics-tests-connect",
                "--master",
                "local[2]",
                "--conf",
                "spark.connect.grpc.binding.address=127.0.0.1",
                "--conf",
                "spark.connect.grpc.binding.port=0",
                "--conf",
                "spark.ui.enabled=false",
                "--driver-java-options",
                QUICK_JVM,
            ],
            work,
        )

    def ready(self) -> str:
        """Wait until the server has logged that it listens; return its ``sc://`` URL."""
        return f"sc://127.0.0.1:{self.service.port(self.STARTED, 'the Spark Connect server to start')}"

    def stop(self) -> None:
        self.service.stop()


def work_dir(parent: Path, name: str) -> Path:
    """``parent/name`` with the services' scratch directories and a ``spark-defaults.conf``."""
    work = parent / name
    for sub in ("local", "logs", "conf", "worker"):
        (work / sub).mkdir(parents=True)
    (work / "conf" / "spark-defaults.conf").write_text(
        f"spark.executor.extraJavaOptions {QUICK_JVM}\n"
        "spark.master.rest.enabled false\n"  # the master's REST server would bind the fixed port 6066
    )
    return work


def run_analyze(master: str, paths: list[str], json_out: Path, env: dict[str, str], logs: Callable[[], str] = str) -> tuple[dict, str]:
    """``forensics analyze PATHS --master MASTER --json FILE`` in a subprocess: the parsed JSON,
    and what it printed on stderr.

    On failure the message holds the command's stderr and ``logs()`` (the services' logs)."""
    command = [sys.executable, "-m", "forensics.cli", "analyze", *paths, "--master", master, "--json", str(json_out), "--quiet"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        preexec_fn=_die_with_parent(),
    )
    try:
        out, err = process.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"forensics analyze --master {master} did not finish in {RUN_TIMEOUT} s:\n{err[-3000:]}\n{logs()}", pytrace=False)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the driver JVM, should it outlive its Python
        except ProcessLookupError:
            pass
    if process.returncode != 0:
        pytest.fail(
            f"forensics analyze --master {master} exited {process.returncode}:\n{err[-3000:]}{out[-1000:]}\n{logs()}", pytrace=False
        )
    return json.loads(json_out.read_text()), err
