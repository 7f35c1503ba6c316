"""One factory for the SparkSession: embedded ``local[*]`` by default, any master by configuration.

``master`` may be a classic master URL (``local[N]``, ``spark://host:port``, ``yarn``,
``k8s://https://...``) or a Spark Connect remote (``sc://host:port``). Without an argument it
comes from ``FORENSICS_SPARK_MASTER``, then ``SPARK_REMOTE``, then ``local[*]``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from typing import Mapping

from .errors import ForensicsError

DEFAULT_MASTER = "local[*]"
MASTER_ENV = "FORENSICS_SPARK_MASTER"
MIN_JAVA = 17
LOG4J2_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")

# Each input file split is its own partition, so a row's index within its partition is its
# index within that split (see ingest.read). 128 MiB splits, as Spark's default.
SPLIT_BYTES = 128 * 1024 * 1024

SESSION_CONF: Mapping[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.files.maxPartitionBytes": str(SPLIT_BYTES),
    "spark.sql.files.openCostInBytes": str(SPLIT_BYTES),
    # A truncated .gz keeps the lines read before the damage; ingest reports the damage.
    "spark.sql.files.ignoreCorruptFiles": "true",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
}

CLASSIC_CONF: Mapping[str, str] = {
    # Spark's production default, pinned: with SPARK_TESTING set (the test suite sets it, and
    # its subprocesses inherit it) Spark 4 removes shuffle files at the end of every query,
    # and a later query reusing a DataFrame then waits on a shuffle the driver has dropped
    # ("MapOutputTrackerMaster: head of empty list" on a standalone cluster; SPARK-53898).
    "spark.sql.classic.shuffleDependency.fileCleanup.enabled": "false",
}
"""Settings of classic (non-Connect) sessions only: a Connect server owns its own."""

_MASTER_PATTERN = re.compile(r"^(local(\[(\*|\d+)(,\d+)?\])?|spark://.+|yarn|k8s://.+|mesos://.+|sc://.+)$")


def resolve_master(master: str | None = None) -> str:
    """Return the master URL to use: the argument, then the environment, then ``local[*]``."""
    chosen = master or os.environ.get(MASTER_ENV) or os.environ.get("SPARK_REMOTE") or DEFAULT_MASTER
    if not _MASTER_PATTERN.match(chosen):
        raise ForensicsError(
            f"Unknown Spark master {chosen!r}.",
            "Use local[*], local[N], spark://HOST:PORT, yarn, k8s://URL or sc://HOST:PORT.",
        )
    return chosen


DEFAULT_PORTS = {"spark": 7077, "sc": 15002}
CONNECT_TIMEOUT_S = 5.0


def master_endpoints(master: str) -> list[tuple[str, int]]:
    """Host and port of each master a ``spark://`` (possibly ``h1:p1,h2:p2``) or ``sc://`` URL names."""
    scheme, _, rest = master.partition("://")
    if scheme not in DEFAULT_PORTS:
        return []
    authority = re.split(r"[/;?]", rest, maxsplit=1)[0]
    endpoints = []
    for part in authority.split(","):
        host, _, port = part.rpartition(":") if re.search(r":\d+$", part) else (part, "", "")
        endpoints.append((host.strip("[]"), int(port) if port else DEFAULT_PORTS[scheme]))
    return endpoints


def require_reachable(master: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Fail with one sentence when no master of a ``spark://`` or ``sc://`` URL accepts a
    connection (Spark itself would retry for a minute, then fail with a Java trace)."""
    endpoints = master_endpoints(master)
    errors = []
    for host, port in endpoints:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            errors.append(f"{host}:{port}: {exc.strerror or exc}")
    if endpoints:
        raise ForensicsError(
            f"Cannot reach the Spark master {master} ({'; '.join(errors)}).",
            "Start the master (or Spark Connect server), check host and port, or use --master local[*].",
        )


def java_major_version(java: str | None = None) -> int | None:
    """Major version of the ``java`` on JAVA_HOME or PATH, or None when there is none."""
    java = java or (
        os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    )
    if not java or not os.path.exists(java):
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2)) if major == 1 and found.group(2) else major


def require_java() -> None:
    """Fail with one sentence when no Java >= 17 can run the embedded Spark."""
    version = java_major_version()
    if version is None or version < MIN_JAVA:
        seen = "no Java was found" if version is None else f"Java {version} was found"
        raise ForensicsError(
            f"Spark needs Java {MIN_JAVA} or newer, but {seen} (JAVA_HOME or PATH).",
            "Install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or point JAVA_HOME at one.",
        )


def get_session(master: str | None = None, app_name: str = "kafka-forensics", ui: bool = False, conf: Mapping[str, str] | None = None):
    """Return a SparkSession for ``master`` with the toolkit's settings (UTC, quiet logs).

    An existing active session is reused, so a notebook or a batch run starts the JVM once.
    """
    master = resolve_master(master)
    from pyspark.sql import SparkSession

    settings = {**SESSION_CONF, **(conf or {})}
    require_reachable(master)
    if master.startswith("sc://"):
        builder = SparkSession.builder.remote(master)
    else:
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        if master.startswith("local"):
            require_java()
        builder = SparkSession.builder.master(master).config("spark.ui.enabled", str(ui).lower())
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}")
        settings = {**CLASSIC_CONF, **settings}
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark = builder.appName(app_name).getOrCreate()
    except Exception as exc:  # py4j / grpc errors carry Java traces: say it in one line
        raise ForensicsError(
            f"Could not start or reach Spark at {master}: {_first_line(exc)}",
            "Check that the master is running and reachable, or use --master local[*].",
        ) from exc
    if not master.startswith("sc://"):
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
