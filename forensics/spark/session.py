"""One factory for the SparkSession: embedded ``local[*]`` by default, any master by configuration.

``master`` may be a classic master URL (``local[N]``, ``spark://host:port``, ``yarn``,
``k8s://https://...``) or a Spark Connect remote (``sc://host:port``). Without an argument it
comes from ``FORENSICS_SPARK_MASTER``, then ``SPARK_REMOTE``, then ``local[*]``.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import warnings
from contextlib import nullcontext
from typing import Mapping, Sequence

from ..errors import ForensicsError
from . import handles
from .jvm import jvm_stderr_without_chatter, local_collector, require_java
from .lookups import remember_jvm_lookups
from .settings import CLASSIC_CONF, SESSION_CONF

DEFAULT_MASTER = "local[*]"
MASTER_ENV = "FORENSICS_SPARK_MASTER"
LOG4J2_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
_MASTER_PATTERN = re.compile(r"^(local(\[(\*|\d+)(,\d+)?\])?|spark://.+|yarn|k8s://.+|mesos://.+|sc://.+)$")


def resolve_master(master: str | None = None) -> str:
    """Return the master URL to use: the argument, then the environment, then ``local[*]``."""
    chosen = master or os.environ.get(MASTER_ENV) or os.environ.get("SPARK_REMOTE") or DEFAULT_MASTER
    if not _MASTER_PATTERN.match(chosen):
        raise ForensicsError(
            f"Unknown Spark master {chosen!r}.", "Use local[*], local[N], spark://HOST:PORT, yarn, k8s://URL or sc://HOST:PORT."
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


def require_spark_connect(master: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Fail with one sentence when what accepts connections at an ``sc://`` URL does not finish a
    gRPC (HTTP/2) handshake in ``timeout`` seconds: on a wrong port (a web UI, a standalone
    master, another service) pyspark's Connect client would retry for minutes without a word."""
    import grpc
    from pyspark.sql.connect.client import DefaultChannelBuilder

    channel = DefaultChannelBuilder(master).toChannel()
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        raise ForensicsError(
            f"Something accepts connections at {master} but does not answer as a Spark Connect server "
            f"(no gRPC handshake in {timeout:.0f} s).",
            f"Check the port (a Spark Connect server listens on {DEFAULT_PORTS['sc']} unless configured otherwise) "
            "and whether the server wants TLS (;use_ssl=true), or use --master local[*].",
        ) from None
    finally:
        channel.close()


def get_session(
    master: str | None = None,
    app_name: str = "kafka-forensics",
    ui: bool = False,
    conf: Mapping[str, str] | None = None,
    quiet: bool = True,
    jvm_options: Sequence[str] = (),
):
    """Return a SparkSession for ``master`` with the toolkit's settings (UTC, quiet logs).

    An existing active session is reused, so a notebook or a batch run starts the JVM once.
    ``quiet`` drops the driver JVM's start-up chatter from stderr (``JVM_CHATTER``); the CLI's
    ``--debug`` keeps it. ``jvm_options``: more options of a driver JVM this call starts
    (``local_jvm_options``).
    """
    master = resolve_master(master)
    from pyspark.sql import SparkSession

    settings = {**SESSION_CONF, **(conf or {})}
    require_reachable(master)
    if master.startswith("sc://"):
        require_spark_connect(master)
        builder = SparkSession.builder.remote(master)
    else:
        running = running_session()
        if running is not None:
            return running
        if master.startswith("local"):
            require_java()
        builder = SparkSession.builder.master(master).config("spark.ui.enabled", str(ui).lower())
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        driver_options = [f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}", *local_collector(master, jvm_options), *jvm_options]
        builder = builder.config("spark.driver.extraJavaOptions", " ".join(driver_options))
        settings = {**CLASSIC_CONF, **local_driver_memory(master), **settings}
    for key, value in settings.items():
        builder = builder.config(key, value)
    starting_jvm = quiet and not master.startswith("sc://")
    try:
        with jvm_stderr_without_chatter() if starting_jvm else nullcontext():
            spark = builder.appName(app_name).getOrCreate()
    except Exception as exc:  # py4j / grpc errors carry Java traces: say it in one line
        raise ForensicsError(
            f"Could not start or reach Spark at {master}: {_first_line(exc)}",
            "Check that the master is running and reachable, or use --master local[*].",
        ) from exc
    if not master.startswith("sc://"):
        spark.sparkContext.setLogLevel("ERROR")
        remember_jvm_lookups(handles.jvm_view(spark))
    elif quiet:
        warnings.filterwarnings("ignore", message=CONNECT_WINDOW_WARNING, category=UserWarning)
    return spark


def running_session():
    """The classic session this process already runs, or None: this thread's active session, else
    the one the process started. Spark's active session is per JVM thread, and py4j's pinned
    threads give each Python thread its own, so a thread other than the starting one has none;
    the builder's ``getOrCreate`` would then hand back the running session with this module's
    settings written over the ones its owner chose (``spark.sql.files.maxPartitionBytes``, say)."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or handles.started_session()


def driver_ended() -> str | None:
    """Why the local driver JVM this process started is gone, in one sentence, or None while it
    runs (or where there is none). py4j only sees its socket closed ("Connection reset by
    peer", "Answer from Java side is empty"); a JVM killed by SIGKILL was, on Linux, most often
    chosen by the kernel's out-of-memory killer, as when several Spark drivers share a machine."""
    if not handles.driver_jvm_started():
        return None
    code = handles.driver_jvm_process().poll()
    if code is None:
        return None
    if code == -signal.SIGKILL:
        return (
            "The Spark driver JVM was killed (SIGKILL), most likely by the kernel's out-of-memory killer: "
            "other processes, another Spark driver among them, left too little memory."
        )
    if code < 0:
        return f"The Spark driver JVM was ended by signal {signal.Signals(-code).name}."
    return f"The Spark driver JVM exited with status {code}."


CONNECT_WINDOW_WARNING = r"WARN WindowExpression: No Partition Defined"
"""The Connect client's Python twin of the driver's WARN line for a window without
``partitionBy``, which a classic session hides with its log level. The toolkit has one, over the
hosts (``model.clock._reference``, a few rows)."""
DRIVER_MEMORY_SHARE = 4
DRIVER_MEMORY_GIB = (1, 4)
"""A local driver's heap: a ``DRIVER_MEMORY_SHARE``-th of the machine's memory, within these
bounds (GiB). Spark's default of 1 GiB is too small for a multi-gigabyte incident in
``local[N]``, whose executors share the driver's heap (docs/performance.md, "Memory")."""


def local_driver_memory(master: str) -> dict[str, str]:
    """``spark.driver.memory`` for a local driver this process starts (``DRIVER_MEMORY_SHARE``),
    unless the user named it where Spark looks (``SPARK_DRIVER_MEMORY``, ``PYSPARK_SUBMIT_ARGS``,
    ``spark-defaults.conf``); nothing for other masters, whose executors hold the data."""
    if not master.startswith("local") or _driver_memory_named():
        return {}
    try:
        total_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):  # no sysconf names: Spark's default
        return {}
    low, high = DRIVER_MEMORY_GIB
    return {"spark.driver.memory": f"{max(low, min(high, int(total_gib // DRIVER_MEMORY_SHARE)))}g"}


def _driver_memory_named() -> bool:
    submit_args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if os.environ.get("SPARK_DRIVER_MEMORY") or "--driver-memory" in submit_args or "spark.driver.memory" in submit_args:
        return True
    conf_dir = os.environ.get("SPARK_CONF_DIR") or os.path.join(_spark_home(), "conf")
    try:
        with open(os.path.join(conf_dir, "spark-defaults.conf"), encoding="utf-8") as defaults:
            return any(line.split()[:1] == ["spark.driver.memory"] for line in defaults)
    except OSError:
        return False


def _spark_home() -> str:
    """Where ``spark-submit`` looks for ``conf/``: ``SPARK_HOME``, or a pip-installed pyspark's own
    directory (never the working directory)."""
    import pyspark

    return os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
