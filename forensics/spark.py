"""One factory for the SparkSession: embedded ``local[*]`` by default, any master by configuration.

``master`` may be a classic master URL (``local[N]``, ``spark://host:port``, ``yarn``,
``k8s://https://...``) or a Spark Connect remote (``sc://host:port``). Without an argument it
comes from ``FORENSICS_SPARK_MASTER``, then ``SPARK_REMOTE``, then ``local[*]``.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from functools import wraps
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence, TypeVar

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
    # HotSpot does not compile a method of over 8,000 bytes of bytecode (HugeMethodLimit), and a
    # stage whose generated row loop is larger runs interpreted, several times slower. With the
    # limit that Spark advises on HotSpot, such a stage falls back to per-operator code, whose
    # expressions come in small methods (the records projection of ingest is one such stage).
    "spark.sql.codegen.hugeMethodLimit": "8000",
}

INTERPRETED: Mapping[str, str] = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""Runtime settings under which queries run interpreted, with no generated code. Spark compiles
each stage's generated Java before it runs it; an analysis runs some 100-200 jobs of several
stages each, and on a small incident compiling them costs more than running them. Measured per analysis, in a new
process / warm: sample_logs/ (1.3 MB) 28-33 / 16-17 s interpreted against 42 / 25-27 s; 8 MB of
the benchmark corpus 28.6 / 17.2 s against 35.2 / 18.7 s; 55 MB 132 / 127 s against 93 / 60 s."""

SORTED_AGGREGATION: Mapping[str, str] = {"spark.sql.execution.useObjectHashAggregateExec": "false"}
"""Runtime settings under which ``collect_list`` / ``collect_set`` aggregate by sorting instead of
in an object hash map, which falls back to a sort past 128 keys and then asks for memory the
task may no longer have. Ingest's tails (each record's continuation lines) of the 16M-line
corpus failed so with UNABLE_TO_ACQUIRE_MEMORY in ``local[2]`` with the default 1 GiB; sorting
spills instead. The 4M corpus ingests in the same time either way (26-27 s)."""

STATIC_SHUFFLES = {"spark.sql.adaptive.enabled": "false"}
"""With ``in_step_with_cores``: shuffles planned once, into as many partitions as the local
driver has cores, not re-planned stage by stage by adaptive execution."""


def in_step_with_cores(spark, text_bytes: int | None) -> Mapping[str, str]:
    """Runtime settings under which ingest and parse of ``text_bytes`` of input (None: unknown)
    run in a local driver whose heap is at least that large: ``STATIC_SHUFFLES`` into one
    partition per core (at least two, so that ``materialise`` still keeps tables spread and
    serialized). Adaptive execution submits each query stage as a job of its own and, on this
    2-core machine, merged the 8 shuffle partitions into 2-3 anyway. The 4M-line corpus' ingest
    ran 7 jobs instead of 21, in 9.9 s instead of 10.8 s warm (medians of 6 alternated rounds;
    16M lines 35.2-35.9 s against 35.9-36.3 s); the whole analysis 37 jobs instead of 53, the
    JSON the same. The 16M-line corpus (1.9 GB) in a 1 GiB driver, though, failed in 2 of 7
    runs so (the detectors' hash aggregates found no memory: UNABLE_TO_ACQUIRE_MEMORY), and in
    none of 6 with adaptive execution, which that smaller heap keeps; with static shuffles the
    4M-line corpus (0.47 GB) passed 3 of 3 runs in 1 GiB, and 16M lines in this machine's
    default 4 GiB (129 s, 55 jobs). None where the session already runs in one partition
    (``ONE_PARTITION``: a small incident), nor for a cluster or Spark Connect, whose executors
    adaptive execution sizes for."""
    if not runs_locally(spark) or spark.conf.get("spark.sql.shuffle.partitions") == "1":
        return {}
    if text_bytes is None or text_bytes > _local_heap(spark):
        return {}
    return {**STATIC_SHUFFLES, "spark.sql.shuffle.partitions": str(max(2, spark.sparkContext.defaultParallelism))}


_KEPT_IN = "forensics.materialise.keptIn"

IN_THE_DRIVER: Mapping[str, str] = {_KEPT_IN: "driver", "spark.sql.leafNodeDefaultParallelism": "1"}
"""Runtime settings under which ``materialise``, in one partition (``ONE_PARTITION``), keeps a
table in the driver: its rows collected by one job into the driver JVM and planned from there as
a local relation, read in one partition. For a small incident only: every later plan carries the
rows, and every task that reads them is sent them. Of a plan over local relations Spark's
optimiser computes projections and filters itself (``ConvertToLocalRelation``) and knows the
sizes; a checkpoint is planned twice (to keep, to count) and read back through the block
manager. Whole process, 3 alternated runs each, medians: a 61-line log 14.38 s, 22 jobs with
checkpoints against 12.67 s, 16 jobs; sample_logs/ 20.81 s, 36 jobs against 19.98 s, 34 jobs;
the JSON identical. Without the single partition (the relation spread over
``leafNodeDefaultParallelism`` partitions, each join, window and grouping behind an exchange)
the same incident ran 135 stages instead of 49, in 20.89 s."""

SMALL_RESULT_PARTITIONS: Mapping[str, str] = {
    "spark.sql.adaptive.coalescePartitions.initialPartitionNum": "256",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "4m",
}
"""Runtime settings under which a sorted table read one partition at a time (``local_rows``)
comes in partitions of a few MB, however large it is. With the session's 8 shuffle partitions,
merged by adaptive execution up to 64 MB, a partition of the 16M corpus' tables came to the
driver as one task result too large to fetch back from the block manager ("TaskResultLost
(result lost from block manager)"). No effect where adaptive execution is off (``ONE_PARTITION``)
or where a table read needs no exchange (``in_pieces``)."""

PIECE_ROWS = 25_000
"""Rows of a piece of a table that ``in_pieces`` splits: a few MB to a few tens of MB of JSON
rows (the 4M-line corpus' commits: 34 MB of JSON in 76,090 rows, read in 4 pieces)."""

ONE_PARTITION: Mapping[str, str] = {
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.defaultSizeInBytes": "1",
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
    "spark.sql.optimizer.disableHints": "true",
}
"""Runtime settings under which a small incident's queries run in one partition, with almost no
exchanges. ``materialise`` keeps every table as one partition, and an aggregate, a window or a
sort-merge join over single-partition inputs needs no shuffle (``SinglePartition`` satisfies every
clustering). With no broadcast, not even where a query asks for one (``F.broadcast``: hints
disabled), a join stays such a sort-merge join instead of a job of its own.
``EnsureRequirements`` keeps a join's single-partition sides only while their estimated sizes are
at most ``maxSinglePartitionBytes`` (SPARK-41986); without column statistics Spark estimates a
join's size as the product of its sides' and an unknown size as ``defaultSizeInBytes``, so the
model's joins of joins pass any bound unless leaves count small. Adaptive execution, which runs
each shuffle stage as a job, has nothing to re-plan. Measured warm, with ``INTERPRETED`` either way:
sample_logs/ (1.3 MB) 36 Spark jobs instead of 186, 93 stages instead of 355, 10.8-11.4 s instead
of 14-15 s; 8 MB of the benchmark corpus 32 jobs instead of 170, 10.8-11.8 s instead of 12.9-14.8 s
(one core at work, but far fewer stages); the JSON identical. The hints disabled, later:
sample_logs/ 36 jobs instead of 41 (7.4-8.0 s warm instead of 8.0-8.2 s), a 61-line log 30
instead of 36 (5.3-5.6 s instead of 5.2-5.9 s), the JSON identical."""

CLASSIC_CONF: Mapping[str, str] = {
    # Spark's production default, pinned: with SPARK_TESTING set in the environment (as this
    # project's test suite once did) Spark 4 removes shuffle files at the end of every query,
    # and a later query reusing a DataFrame then waits on a shuffle the driver has dropped
    # ("MapOutputTrackerMaster: head of empty list" on a standalone cluster; SPARK-53898).
    "spark.sql.classic.shuffleDependency.fileCleanup.enabled": "false",
    # PySpark's DataFrame debugging records the Python call site of every Column function in
    # the JVM (a session lookup, a setting read and JVM calls each; 6,640 functions in one
    # analysis of sample_logs/): off, a warm analysis of it took 20-23 s instead of 29-31 s.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # Spark compiles the Java it generates for each stage and keeps the last 100 classes: one
    # analysis of the 4M-line benchmark corpus compiles some 1,100 distinct ones, so a second
    # analysis in the same session compiled them all again (1,285 compilations, about 7 ms
    # each). Keeping 4,096: 22 compilations, warm 58 s instead of 66-68 s; the JVM's metaspace
    # 177 MB instead of 168 MB after one analysis, code cache +10 MB.
    "spark.sql.codegen.cache.maxEntries": "4096",
    # A task's result of over 1 MiB (Spark's default) is not sent to the driver but put in the
    # block manager for the driver to fetch, and one the block manager drops under memory
    # pressure is lost ("TaskResultLost (result lost from block manager)", as the JSON rows of
    # the 16M-line corpus' analysis were in a 1 GiB driver). A table is read in partitions of a
    # few MB to a few tens of MB (SMALL_RESULT_PARTITIONS, in_pieces), each sent directly, up
    # to 64 MiB (the RPC's limit is 128 MiB).
    "spark.task.maxDirectResultSize": str(64 * 1024 * 1024),
}
"""Settings of classic (non-Connect) sessions only: a Connect server owns its own."""

JVM_CHATTER = re.compile(
    r"WARNING: "
    r"|Using Spark's default log4j profile"
    r"|Setting default log level"
    r"|To adjust logging level use"
    r"|\d\d/\d\d/\d\d \d\d:\d\d:\d\d (?:INFO|WARN) "
    r"|(?:NOTE: )?Picked up (?:JDK_JAVA_OPTIONS|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS): "
)
"""Lines a driver JVM prints to stderr as it starts, none about the analysis. ``WARNING: Using
incubator modules: jdk.incubator.vector``: Spark's launcher adds ``--add-modules`` for that
module (SPARK-48021) and the JVM warns about it with no option to silence it; the JVM's other
``WARNING:`` lines (``sun.misc.Unsafe``, native access on newer JDKs). Should Spark's default
log4j configuration apply instead of ``log4j2.properties`` (``PYSPARK_SUBMIT_ARGS`` replacing
the driver's Java options), its banner and its INFO / WARN lines (``yy/MM/dd HH:mm:ss`` layout:
NativeCodeLoader, "Your hostname resolves to a loopback address") too. The launcher's echo of
an options variable the environment sets (``Picked up JAVA_TOOL_OPTIONS: ..``, common in
container images)."""
JVM_STDERR_THREAD = "forensics-jvm-stderr"
JVM_LAST_WORDS_S = 2.0
"""How long a failed start waits for the JVM's last stderr lines before reporting the error."""

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


def java_executable() -> str | None:
    """The ``java`` of JAVA_HOME, else the one on PATH; None when there is none."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    return java if java and os.path.exists(java) else None


def java_major_version(java: str | None = None) -> int | None:
    """Major version of ``java`` (default ``java_executable()``), or None when there is none or
    it does not run."""
    return _java_version(java or java_executable())[0]


def _java_version(java: str | None) -> tuple[int | None, str]:
    """The major version ``java -version`` states, and else the first line it printed (the
    JVM's own error, such as an option of ``JAVA_TOOL_OPTIONS`` it rejects)."""
    if not java or not os.path.exists(java):
        return None, ""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    text = out.stderr + out.stdout
    found = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not found or out.returncode != 0:
        said = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("Picked up ")]
        return None, said[0][:300] if said else f"exit status {out.returncode}"
    major = int(found.group(1))
    return (int(found.group(2)) if major == 1 and found.group(2) else major), ""


def require_java() -> None:
    """Fail with one sentence when no Java >= 17 can run the embedded Spark: none found, one
    that does not start, or an older one."""
    java = java_executable()
    version, said = _java_version(java)
    if java and version is None:
        raise ForensicsError(
            f"Spark needs Java {MIN_JAVA} or newer, but {java} -version failed ({said}).",
            "Check the JVM options in JAVA_TOOL_OPTIONS / _JAVA_OPTIONS and the Java of JAVA_HOME or PATH.",
        )
    if version is None or version < MIN_JAVA:
        seen = "no Java was found" if version is None else f"Java {version} was found"
        raise ForensicsError(
            f"Spark needs Java {MIN_JAVA} or newer, but {seen} (JAVA_HOME or PATH).",
            "Install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or point JAVA_HOME at one.",
        )


def get_session(
    master: str | None = None, app_name: str = "kafka-forensics", ui: bool = False, conf: Mapping[str, str] | None = None, quiet: bool = True,
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
        remember_jvm_lookups()
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

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    started = SparkSession._instantiatedSession
    return started if started is not None and started._sc._jsc is not None else None


CONNECT_WINDOW_WARNING = r"WARN WindowExpression: No Partition Defined"
"""The Connect client's Python twin of the driver's WARN line for a window without
``partitionBy``, which a classic session hides with its log level. The toolkit has one, over the
hosts (``model.clock._reference``, a few rows)."""


DRIVER_MEMORY_SHARE = 4
DRIVER_MEMORY_GIB = (1, 4)
"""A local driver's heap: a ``DRIVER_MEMORY_SHARE``-th of the machine's memory, within these
bounds (GiB). With Spark's default of 1 GiB, the analysis of the benchmark's 16M-line corpus
(1.8 GB, 818,370 events) failed in ``local[2]`` on a 24 GiB machine, once in ingest
(UNABLE_TO_ACQUIRE_MEMORY: a hash aggregate found no execution memory left beside the
checkpoints and the other task's sort) and once reading its result (TaskResultLost)."""


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


THROUGHPUT_GC = ("-XX:+UseParallelGC",)
"""The collector of a local driver JVM, whose executors run in it (``local_collector``): the
throughput collector instead of the JVM's default G1, which on two cores runs its concurrent
work beside the tasks and puts a barrier on every reference stored. Analyses of the benchmark
corpus (``analyze`` with the JSON written), each in a new ``local[2]`` process, alternated:
4M lines 60.9 and 58.1 s against 68.3 and 63.4 s (the serial collector: 62.2 and 60.0 s); 16M
lines 129.6 s against 140.1 s; in one warm session, the fourth analysis of 4M lines 29.6 and
28.5 s against 31.0 and 31.0 s. A small incident's analysis on the quick JIT tier (``QUICK_TIER``)
once ran the serial collector instead, whose pauses stop the analysis with one thread: with it
``forensics analyze sample_logs`` paused 67-72 times, 2.08-2.10 s in all, with this one 14
times, 0.51 s (``-Xlog:gc``); a 61-line log 50 times, 0.82 s, against 11 times, 0.38 s."""
NAMES_A_COLLECTOR = re.compile(r"-XX:\+Use\w*GC\b")
"""A JVM option that selects a collector (a second one stops the JVM: conflicting collectors)."""


def local_collector(master: str, jvm_options: Sequence[str] = ()) -> tuple[str, ...]:
    """``THROUGHPUT_GC`` for a local driver JVM, unless ``jvm_options`` or the environment's JVM
    options (``JAVA_TOOL_OPTIONS``, ``_JAVA_OPTIONS``, ``JDK_JAVA_OPTIONS``) select a collector;
    none for other masters, whose executors are JVMs of their own."""
    named = [*jvm_options, *(os.environ.get(name, "") for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"))]
    if not master.startswith("local") or any(NAMES_A_COLLECTOR.search(option) for option in named):
        return ()
    return THROUGHPUT_GC


QUICK_TIER = ("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m", "-XX:CompileThresholdScaling=0.1")
"""The quick JIT tier alone (C1): a driver JVM that does not compile with the optimising tier
(C2). On two cores the optimising compiler competes with the analysis itself: a JFR recording
of one analysis of a 61-line log counted 24,815 methods compiled in 27.7 s of compiler threads
within a 25 s run; in a warm session, the compiler threads still used 3.0 CPU-seconds during a
second analysis of a small log that took 3.1 s. The quick tier compiles each method once,
cheaply. Six analyses of ``sample_logs/reset_to_latest_gap/demo-producer-1/app.log`` in one
process per setting, medians of 3 alternated rounds: 8.06, 2.73, 2.45, 2.47, 2.34, 2.31 s
with it, 9.67, 3.11, 2.69, 2.50, 2.12, 2.02 s without. The optimising tier is even at the
fourth small analysis and ahead from the fifth; a long analysis gains from it when it is run
again: the 1M-line benchmark corpus analysed twice in a session took 40.9 / 26.5 s and
41.6 / 27.4 s with the quick tier, 46.1 / 19.9 s and 43.2 / 19.7 s without. So the quick
tier is for a session started for small work (``local_jvm_options``), where the first few
analyses are what is waited for.

With the quick tier alone the JVM reserves 48 MiB for compiled code instead of the 240 MiB of
its tiered default; a session that analyses incidents again and again fills it, and the JVM
then evicts and compiles again (or stops compiling: "CodeCache is full. Compiler has been
disabled"). Seven analyses of ``sample_logs/`` in one session: from the second on 9.3-11.7 s
with 240 MiB, 10.4-14.3 s with 48 MiB (42 MiB used; two sessions each); a small log's
analyses, which use 34 MiB, took the same time either way.

A method is compiled once it has been called a tenth as often as HotSpot's thresholds ask
(``CompileThresholdScaling``): at those thresholds, the fourth analysis of a small log in one
session still compiled 1,264 methods of Catalyst and the scheduler for the first time, each
run in the bytecode interpreter until then (``-XX:+LogCompilation``). Three analyses of the
61-line log per process, 11 alternated rounds: the second took 3.31 s (median) instead of
3.84 s, faster in 9 rounds of 11 (median ratio 0.87); the first 13.75 s instead of 14.53 s. A
thirtieth compiled more and ran no faster. ``sample_logs/`` analysed three times filled
64 MiB of code cache instead of 42 MiB."""
CLASS_ARCHIVE_QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
"""Off: the JVM's own messages (on stdout) about a class archive: the classes it leaves out as it
writes one (generated and signed classes), or an archive it cannot use (another JDK build or
classpath), with which it starts as it would have without."""


def class_archive_options() -> tuple[str, ...]:
    """The JVM options that map the class-data archive ``record_class_archive`` wrote for this
    pyspark and this Java; none before it has. Any driver started from the command line may
    use them: the archive holds classes, not settings, and changes nothing the JVM computes.

    What Java 17 cannot archive is defined at every start: in one ``make demo`` the driver took
    14,853 classes from the archive and defined 7,572 (``-Xlog:class+load``): 5,718 lambda
    classes (Scala's lambdas are serializable, which the archive leaves out), 650 method-handle
    forms, 704 reflection and serialization accessors (class version 49), 366 classes of
    janino and commons-compiler (signed JARs), and 134 others (53 of them Scala's parallel
    collections, which ``warm-up``'s analyses do not load)."""
    archive = class_archive_path()
    return (f"-XX:SharedArchiveFile={archive}", *CLASS_ARCHIVE_QUIET) if archive and archive.is_file() else ()


def local_jvm_options(master: str, small_work: bool = False) -> tuple[str, ...]:
    """The driver JVM options of a session on ``master`` that the toolkit starts for a command
    or a notebook: if the master is local, whose executors run in the driver's JVM, the class
    archive (``class_archive_options``), and the quick JIT tier (``QUICK_TIER``) where the
    session is started for ``small_work`` (a small incident, a batch of them); none otherwise.
    Measured on a 61-line log, whole process (``forensics analyze``), medians of 3 alternated:
    22.8 s with neither, 21.4 s with the quick tier, 19.8 s with the archive, 16.3 s with both
    (and the serial collector then; since replaced: ``THROUGHPUT_GC``); sample_logs/ 27.1 s
    with neither, 21.4-24.3 s with both."""
    if not master.startswith("local"):
        return ()
    return (*(QUICK_TIER if small_work else ()), *class_archive_options())


def class_archive_path() -> Path | None:
    """Where the class-data archive of this pyspark and this Java is kept (in the user's cache
    directory); None without Java. An archive serves the JVM build and the jars it was written
    with only, so both are in its name."""
    java = java_executable()
    if java is None:
        return None
    import pyspark

    key = hashlib.sha256(f"{pyspark.__version__}|{os.path.realpath(java)}|{pyspark.__file__}".encode()).hexdigest()[:16]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "kafka-forensics" / f"spark-classes-{key}.jsa"


JVM_EXIT_S = 300.0
"""How long ``record_class_archive`` waits for the JVM to write the archive and exit."""


def record_class_archive(workload: Callable[[object], object], quiet: bool = True) -> Path:
    """Run ``workload(spark)`` in a new local driver JVM that writes the classes it loaded to a
    class-data archive as it exits (``-XX:ArchiveClassesAtExit``, JDK 13+), and keep the archive
    where ``class_archive_options`` looks for it. The JVM writes it at its exit, after this
    process has ended its session; a JVM that maps a truncated archive dies of SIGBUS, so the
    archive is written under a name of its own, tried by a JVM of its own, and only then
    renamed into place. Needs a process with no Spark session yet (the CLI's ``warm-up``).
    ``quiet``: without the JVM's chatter and its list of the classes it leaves out."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkSession.getActiveSession() is not None or SparkContext._gateway is not None:
        raise ForensicsError("A class archive is recorded by a JVM of its own.", "Run `forensics warm-up` in a new process.")
    require_java()
    target = class_archive_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        recording = (*QUICK_TIER, f"-XX:ArchiveClassesAtExit={partial}", *(CLASS_ARCHIVE_QUIET if quiet else ()))
        spark = get_session("local[*]", quiet=quiet, jvm_options=recording)
        try:
            workload(spark)
        finally:
            spark.stop()
            jvm = SparkContext._gateway.proc
            jvm.stdin.close()  # the gateway exits at the end of its stdin
            jvm.wait(timeout=JVM_EXIT_S)
        if not _archive_maps(partial):
            raise ForensicsError(f"The JVM wrote no usable class archive ({partial}).", "Run with --debug to see the JVM's messages.")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _archive_maps(archive: Path) -> bool:
    """Whether a JVM starts with ``archive`` mapped (a truncated one kills it; its crash report
    goes to a directory removed afterwards)."""
    if not archive.is_file():
        return False
    with tempfile.TemporaryDirectory(prefix="forensics-jvm-") as scratch:
        done = subprocess.run([java_executable(), f"-XX:SharedArchiveFile={archive}", *CLASS_ARCHIVE_QUIET, "-version"],
                              capture_output=True, timeout=60, cwd=scratch)
    return done.returncode == 0


def remember_jvm_lookups() -> None:
    """Make py4j resolve a class (``jvm.<name>``) and a class's static method once, not at every
    use; keep the Column of each name and plain value (``SameAnswer``); pass short lists in one
    call (``ListInOneCall``).

    py4j asks the JVM by reflection each time, and PySpark looks up both for every
    ``functions.<f>`` it calls (``org.apache.spark.sql.functions``, then ``col``, ``lit``, ...) and
    for every column list it passes (``PythonUtils.toSeq``): two round trips of three per call.
    A class and its static methods stay what they are while the JVM runs, so the first answer is
    kept on the view or class object, where Python finds it before asking again. Fields are not
    kept (their values may change), nor failures. Measured on ``sample_logs/``: 35,000 round trips
    an analysis, 11,700 of them these lookups."""
    from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView
    from py4j.protocol import INPUT_CONVERTER, register_input_converter

    for owner, keep in ((JVMView, (JavaClass, JavaPackage)), (JavaClass, (JavaClass, JavaMember))):
        if getattr(owner.__getattr__, "remembers", False):
            continue
        owner.__getattr__ = _remembering(owner.__getattr__, keep)
    if not any(isinstance(converter, ListInOneCall) for converter in INPUT_CONVERTER):
        register_input_converter(ListInOneCall(), prepend=True)


def _remembering(lookup, keep: tuple[type, ...]):
    """``lookup`` (a ``__getattr__``) that stores answers of the types ``keep`` on the object; a
    static method of ``SAME_ANSWER`` as a ``SameAnswer``."""

    def remembered(self, name):
        found = lookup(self, name)
        if isinstance(found, keep):
            if (self.__dict__.get("_fqn"), name) in SAME_ANSWER:
                found = SameAnswer(found)
            self.__dict__[name] = found
        return found

    remembered.remembers = True
    return remembered


SAME_ANSWER = {("org.apache.spark.sql.functions", "col"), ("org.apache.spark.sql.functions", "lit")}
"""Static methods whose answer depends on their argument alone: Spark's Column of a name
(``F.col``) and of a literal (``F.lit``), each an immutable expression that any number of other
expressions may hold."""
SAME_ANSWERS_KEPT = 4096
"""How many answers a ``SameAnswer`` keeps (it forgets them all when it has kept more)."""


class SameAnswer:
    """A static method of ``SAME_ANSWER`` that asks the JVM once per plain argument (a str, int or
    bool, told apart by type: ``lit(1)`` is not ``lit(True)``) and then answers with the same Java
    object. An analysis of ``sample_logs/`` calls ``col`` and ``lit`` some 4,800 times, with a few
    hundred distinct arguments. Other arguments go to the JVM each time."""

    def __init__(self, member):
        self.member = member
        self.answers: dict[tuple[type, object], object] = {}

    def __call__(self, *args):
        if len(args) != 1 or type(args[0]) not in (str, int, bool):
            return self.member(*args)
        key = (type(args[0]), args[0])
        found = self.answers.get(key)
        if found is None:
            if len(self.answers) >= SAME_ANSWERS_KEPT:
                self.answers.clear()
            found = self.answers[key] = self.member(*args)
        return found

    def __getattr__(self, name):
        return getattr(self.member, name)


LIST_OF_MOST = 10
"""Elements that Java's ``List.of`` takes one by one (more only as an array)."""


class ListInOneCall:
    """A py4j input converter: a Python list or tuple passed to a Java method (PySpark's column
    lists: ``PythonUtils.toSeq``) as ``java.util.List.of(...)``, one round trip for up to
    ``LIST_OF_MOST`` elements, where py4j's own converter makes an ``ArrayList`` and adds each
    element with a round trip of its own (an analysis of ``sample_logs/`` passes some 1,100
    lists of 4,200 elements). A longer list is an ``ArrayList`` filled ``LIST_OF_MOST`` at a time.
    A list with a None (which ``List.of`` refuses) is left to py4j. The list made is not
    modifiable; the methods PySpark passes lists to copy them."""

    def can_convert(self, value) -> bool:
        return type(value) in (list, tuple) and not any(element is None for element in value)

    def convert(self, value, gateway_client):
        lists = _java_class(gateway_client, "java.util.List")
        if len(value) <= LIST_OF_MOST:
            return lists.of(*value)
        whole = _java_class(gateway_client, "java.util.ArrayList")(len(value))
        for start in range(0, len(value), LIST_OF_MOST):
            whole.addAll(lists.of(*value[start:start + LIST_OF_MOST]))
        return whole


def _java_class(gateway_client, name: str):
    """The py4j class object of ``name`` kept on ``gateway_client`` (whose ``remember_jvm_lookups``
    then knows its static methods)."""
    from py4j.java_gateway import JavaClass

    kept = gateway_client.__dict__.setdefault("_forensics_classes", {})
    if name not in kept:
        kept[name] = JavaClass(name, gateway_client)
    return kept[name]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def is_jvm_chatter(line: str) -> bool:
    """Whether a line of the driver JVM's stderr is start-up chatter (``JVM_CHATTER``)."""
    return JVM_CHATTER.match(line) is not None


@contextmanager
def jvm_stderr_without_chatter() -> Iterator[None]:
    """Start the driver JVM inside this block to keep its chatter off stderr.

    pyspark starts the JVM with this process's stderr (fd 2), which a notebook kernel captures
    into cell outputs. Inside the block fd 2 is a pipe; a thread copies every line the JVM
    writes there, for the JVM's whole life, to the real stderr, except chatter. Errors and log
    lines still get through.
    """
    try:
        real_stderr = os.dup(2)
    except OSError:  # no stderr at all: nothing to keep quiet
        yield
        return
    read_end, write_end = os.pipe()
    copier = threading.Thread(target=_copy_without_chatter, args=(read_end, os.dup(real_stderr)), name=JVM_STDERR_THREAD, daemon=True)
    copier.start()
    _point_stderr_at(write_end)
    os.close(write_end)
    try:
        yield
    except BaseException:
        _point_stderr_at(real_stderr)
        copier.join(timeout=JVM_LAST_WORDS_S)  # a JVM that died at start: its last words first
        raise
    finally:
        _point_stderr_at(real_stderr)
        os.close(real_stderr)


def _point_stderr_at(fd: int) -> None:
    if sys.stderr is not None:
        sys.stderr.flush()
    os.dup2(fd, 2)


def _copy_without_chatter(source: int, target: int) -> None:
    """Copy the lines read from fd ``source`` to fd ``target``, chatter dropped, until EOF."""
    with os.fdopen(source, "rb") as lines, os.fdopen(target, "wb", buffering=0) as out:
        for line in lines:
            if not is_jvm_chatter(line.decode("utf-8", "replace")):
                try:
                    out.write(line)
                except OSError:  # stderr closed under us: keep draining so the JVM never blocks
                    pass


@contextmanager
def counting_jobs(spark) -> Iterator[Callable[[], int | None]]:
    """Count the Spark jobs started inside the block: yields a function giving the count so far.

    The jobs run under a job group of their own, and Spark's status store (fed by its
    ``AppStatusListener``) lists the group's jobs; an adaptive query runs each shuffle stage as
    a job of its own, and so does each broadcast, so all of those count. The caller's job group
    is restored afterwards. On Spark Connect, which has no status tracker here, the count is None.
    """
    context = getattr(spark, "sparkContext", None) if not _is_connect(spark) else None
    if context is None:
        yield lambda: None
        return
    previous = {key: context.getLocalProperty(key) for key in _JOB_GROUP_PROPERTIES}
    group = f"forensics-{os.getpid()}-{next(_JOB_GROUPS)}"
    context.setJobGroup(group, "forensics analysis")
    try:
        yield lambda: len(context.statusTracker().getJobIdsForGroup(group))
    finally:
        for key, value in previous.items():
            context.setLocalProperty(key, value)


_JOB_GROUPS = itertools.count(1)
_JOB_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def _is_connect(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def runs_locally(spark) -> bool:
    """Whether ``spark`` is a classic session on a local master: its executors run in the
    driver's JVM (or beside it, ``local-cluster``), on this machine, so the driver's heap is
    theirs and the files their tasks write are where this process reads them. Not a cluster's
    executors, nor a Spark Connect server, which size their own memory and keep their own disks."""
    return not _is_connect(spark) and spark.conf.get("spark.master", "").startswith("local")


@contextmanager
def sql_settings(spark, settings: Mapping[str, str]) -> Iterator[None]:
    """Runtime SQL ``settings`` for the queries run inside the block; the previous values are
    restored afterwards. The settings are the session's: a query another thread runs on the
    same session meanwhile sees them too."""
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@contextmanager
def releasing_checkpoints(spark, keep: bool = False) -> Iterator[None]:
    """Release the RDDs persisted inside the block (the ``materialise`` checkpoints of one
    analysis) when it ends, or, with ``keep`` (a result that still reads them), when the next
    such block on the session starts. Otherwise Spark frees a checkpoint only once a garbage
    collection of the JVM has found its RDD unreferenced (``ContextCleaner``), and until then its
    blocks hold storage memory: measured before ``local_rows``, every 4M-line analysis left 5
    persisted RDDs in the session for good. Other RDDs of the session (a notebook's own
    ``cache()``) are left alone. Not on Spark Connect, whose server owns them."""
    context = getattr(spark, "sparkContext", None) if not _is_connect(spark) else None
    if context is None:
        yield
        return
    _unpersist(context, _KEPT.pop(id(context), set()))
    before = _persisted(context)
    try:
        yield
    finally:
        made = _persisted(context) - before
        if keep:
            _KEPT.setdefault(id(context), set()).update(made)
        else:
            _unpersist(context, made)


_KEPT: dict[int, set[int]] = {}
"""Per SparkContext, the ids of RDDs an analysis kept for its result (``releasing_checkpoints``)."""


def _persisted(context) -> set[int]:
    return set(context._jsc.getPersistentRDDs().keySet())


def _unpersist(context, ids: set[int]) -> None:
    persisted = context._jsc.getPersistentRDDs()
    for rdd_id in ids:
        rdd = persisted.get(rdd_id)
        if rdd is not None:
            rdd.unpersist(False)


@contextmanager
def scratch_checkpoints(spark) -> Iterator[Callable]:
    """Release, when the block ends, the checkpoints that ``materialise`` made in this thread
    inside it, except those passed to the function the block is given (which returns its
    argument). Ingest and parse keep tables on the way to the events (folded lines and stitched
    rows until a garbage collection finds them; records, prepared records, their candidates in
    template order): of a 4M-line analysis, 65 of the 98 MiB of storage memory in use when the
    model started (221 of 338 MiB at 16M lines), which the model and the detectors, in one
    partition, then ran beside. Other threads' checkpoints (the offset dumps', read meanwhile
    by ``concurrently``) are theirs. Not on Spark Connect."""
    made: list[int] = []
    _SCRATCH.stack.append(made)
    kept: set[int] = set()

    def keep(frame):
        kept.add(_checkpoint_id(frame))
        return frame

    try:
        yield keep
    finally:
        _SCRATCH.stack.pop()
        context = None if _is_connect(spark) else spark.sparkContext
        if context is not None:
            _unpersist(context, set(made) - kept)


class _ScratchBlocks(threading.local):
    """Per thread, the checkpoints noted by each open ``scratch_checkpoints`` block, innermost last."""

    def __init__(self):
        self.stack: list[list[int]] = []


_SCRATCH = _ScratchBlocks()


def _checkpoint_id(frame) -> int | None:
    """The id of the RDD a ``materialise`` checkpoint reads (None: kept in the driver, or
    on Spark Connect)."""
    if _is_connect(frame.sparkSession):
        return None
    plan = frame._jdf.queryExecution().analyzed()
    return plan.rdd().id() if plan.nodeName() == "LogicalRDD" else None


def _in_scratch(frame):
    """``frame``, its checkpoint noted in this thread's innermost ``scratch_checkpoints``."""
    if _SCRATCH.stack:
        found = _checkpoint_id(frame)
        if found is not None:
            _SCRATCH.stack[-1].append(found)
    return frame


def concurrently(spark, *calls: Callable[[], object]) -> list:
    """The results of the argument-less ``calls``, in order, run at once: the first in this
    thread, the others on a pool of as many threads, each carrying this thread's Spark
    properties (the job group that ``counting_jobs`` counts); a pool thread whose call has
    ended may take the next. The driver plans and submits each thread's queries
    while the others' run: sample_logs/, its logs and its offset dumps read at once, 17.1-17.8 s
    whole process instead of 19.2-22.1 s. The calls share the session's SQL settings: one that
    changes them (``sql_settings``) changes them for the others too."""
    from pyspark.util import inheritable_thread_target

    if len(calls) < 2:
        return [call() for call in calls]
    with ThreadPoolExecutor(max_workers=len(calls) - 1) as pool:
        others = [pool.submit(inheritable_thread_target(spark)(call)) for call in calls[1:]]
        first = calls[0]()
        return [first, *[future.result() for future in others]]


HEAP_PER_CONCURRENT_ROW = 2048
"""Bytes of a local driver's heap per row that one-partition tasks over a table share, at the
least, for them to run at once (``room_to_run_at_once``). The model's four later tables, each a
chain of sorts in one task, over the 16M-line corpus' 818,370 events: in a 1 GiB heap (1.3 KiB
a row) built at once, a sort found no execution memory beside the other task's
(UNABLE_TO_ACQUIRE_MEMORY) in 1 of 4 runs of the model alone and 1 of 3 whole analyses; one after
another, 5 of 5 passed in 1 GiB, as fast (68-71 s for the model alone against 66-69 s)."""


def room_to_run_at_once(spark, rows: int) -> bool:
    """Whether one-partition work over a table of ``rows`` rows may run at once (the stages of
    ``materialised_together``, the lists ``TableReads`` writes together): always, but in a local
    driver whose heap holds less than ``HEAP_PER_CONCURRENT_ROW`` bytes a row.
    (A cluster's executors, and a Spark Connect server, size their own memory.)"""
    if not runs_locally(spark):
        return True
    return _local_heap(spark) >= rows * HEAP_PER_CONCURRENT_ROW


def _local_heap(spark) -> int:
    """The bytes of heap a local driver's JVM may use."""
    return spark._jvm.java.lang.Runtime.getRuntime().maxMemory()


def local_rows(frame) -> Iterator:
    """The rows of ``frame``, read one partition at a time (the next one fetched meanwhile).

    On a classic session they are read through ``frame.rdd``. ``DataFrame.toLocalIterator``
    runs its jobs later, in a serving thread that inherits the id of a SQL execution that has
    already ended, and Spark 4's DAG scheduler then keeps them in ``activeQueryToJobs`` for the
    life of the session, with every RDD behind them: the checkpoints, shuffles and broadcasts
    of the analysis that read its rows so (a heap dump after two analyses of one small incident
    showed each kept LocalCheckpointRDD reached from there)."""
    if _is_connect(frame.sparkSession):
        return frame.toLocalIterator(True)
    return frame.rdd.toLocalIterator(True)


def in_pieces(frame, rows: int | None):
    """``frame`` (ordered) in its order, in partitions of at most ``PIECE_ROWS`` rows where it
    runs as one partition of ``rows`` rows (``one_partition_rows``; None: it does not). A table
    kept in one partition (``ONE_PARTITION``) and ordered again needs no exchange, whatever its
    size, so reading it one partition at a time (``local_rows``) read it whole, as one task's
    result: the 4M-line corpus' commits were 34 MB of JSON rows, and the 16M corpus' JSON rows
    were lost by a 1 GiB driver's block manager ("TaskResultLost"). Its rows are numbered in
    order and each goes to piece ``number // PIECE_ROWS`` (``repartitionById``), sorted by
    number within it."""
    from pyspark.sql import functions as F

    if rows is None or rows <= PIECE_ROWS:
        return frame
    numbered = frame.withColumn("_piece_row", F.monotonically_increasing_id())
    piece = F.floor(F.col("_piece_row") / PIECE_ROWS).cast("int")
    return numbered.repartitionById(-(-rows // PIECE_ROWS), piece).sortWithinPartitions("_piece_row").drop("_piece_row")


def one_partition_rows(frames: Sequence) -> list[int | None]:
    """The rows of each of ``frames`` that runs as one partition, None for the others (and on
    Spark Connect), all counted by one Spark job: a table of one partition needs no exchange to
    be counted. Each frame's RDD is planned (``local_rows`` later reads that RDD)."""
    from pyspark.sql import functions as F

    single = [i for i, frame in enumerate(frames) if not _is_connect(frame.sparkSession) and frame.rdd.getNumPartitions() == 1]
    # grouped by a constant: a union of global aggregates becomes scalar subqueries, a job each
    counted = rows_together([frames[i].groupBy(F.lit("all")).count() for i in single]) if single else []
    rows: list[int | None] = [None] * len(frames)
    for i, found in zip(single, counted, strict=True):
        rows[i] = found[0]["count"] if found else 0
    return rows


def kept_level():
    """The storage level of a ``materialise`` checkpoint spread over partitions (ingest and parse
    at any size): serialized in memory, spilled to disk when memory runs short (PySpark's
    ``MEMORY_AND_DISK``). Spark's own ``localCheckpoint`` keeps rows deserialized, sized by
    sampling estimates: with the 16M-line corpus' ingest kept so, a 1 GiB driver ran out of heap
    in parse (its sort's spill readers: "Java heap space", in 2 of 3 runs); kept serialized, their
    bytes are counted exactly, and the analysis completed (175 s). The 4M corpus' analysis
    took 1.03-1.04x the time (medians of 3 alternated rounds). A table kept in one partition
    (``ONE_PARTITION``: the model's, read by many windows and joins) stays deserialized."""
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


def materialise(frame):
    """``frame`` computed once and kept, so that later plans start from it instead of deriving it
    again: on the executors (``localCheckpoint``; serialized where spread, ``kept_level``), or, in
    a small incident (``IN_THE_DRIVER``), in the driver as a local relation.

    In a session with one shuffle partition (``ONE_PARTITION``) it is kept as one partition,
    which later queries need no exchange to use, and counted by the same job that computes it.
    A table with no rows then becomes an empty local relation, from which Spark's optimiser
    (``PropagateEmptyRelation``) knows that every join, window and grouping over it is empty
    too: those plans are dropped instead of run. An incident without Kafka Streams has no
    restores, one without consumer lines no rebalances, ownership or commits."""
    spark = frame.sparkSession
    if spark.conf.get("spark.sql.shuffle.partitions") != "1":
        return _in_scratch(frame.localCheckpoint(storageLevel=kept_level()))
    if kept_in_the_driver(spark):
        return _driver_kept(frame, frame._jdf.collectAsList())
    kept = _in_scratch(frame.coalesce(1).localCheckpoint(eager=False))
    return kept if kept.count() else empty_like(frame)


def materialised_together(frames: Sequence) -> list:
    """``materialise`` of each of ``frames`` by one Spark job instead of a job each: the frames
    become struct columns of one union (as in ``rows_together``), kept once, and each is read
    back from it by its tag. The union's children are independent stages, which Spark runs at
    once. A frame known to be empty is returned as it is; on Spark Connect each is materialised
    apart.

    Kept in the driver (``IN_THE_DRIVER``), each frame is again a local relation of its own
    schema, split from the union's rows with no job. Kept on the executors, each is read from
    the union's checkpoint (its columns nullable), in one partition under ``ONE_PARTITION``, and
    one with no rows is an empty local relation as ``materialise`` makes it."""
    from pyspark.sql import functions as F

    spark = frames[0].sparkSession if frames else None
    todo = [i for i, frame in enumerate(frames) if not known_empty(frame)]
    if spark is None or _is_connect(spark) or len(todo) < 2:
        return [frame if known_empty(frame) else materialise(frame) for frame in frames]
    union = _tagged_union({i: frames[i] for i in todo})
    kept = list(frames)
    if spark.conf.get("spark.sql.shuffle.partitions") != "1":
        together = _in_scratch(union.localCheckpoint(storageLevel=kept_level()))
        for i in todo:
            kept[i] = together.where(F.col("_table") == i).select(f"_table_{i}.*")
        return kept
    if kept_in_the_driver(spark):
        together = _local_relation(spark, union.schema, union._jdf.collectAsList())
        for i in todo:
            rows = together.where(F.col("_table") == i).select(f"_table_{i}.*")._jdf.collectAsList()  # a local relation's: no job
            kept[i] = _driver_kept(frames[i], rows)
        return kept
    together = _in_scratch(union.localCheckpoint(eager=False))
    counts = dict(together.groupBy("_table").count().collect())
    for i in todo:
        read = together.where(F.col("_table") == i).select(f"_table_{i}.*").coalesce(1)
        kept[i] = read if counts.get(i) else empty_like(frames[i])
    return kept


def kept_with_rows(frame) -> tuple[object, list]:
    """A small table (a row per host, say) computed by one job: kept as ``materialise`` keeps
    it, in the driver as a local relation in one partition, and its rows, which the driver reads
    from that relation with no job (``materialise`` and then ``collect`` took two)."""
    spark = frame.sparkSession
    if known_empty(frame):
        return frame, []
    if _is_connect(spark):
        kept = materialise(frame)
        return kept, kept.collect()
    rows = frame._jdf.collectAsList()
    return _driver_kept(frame, rows), _local_relation(spark, frame.schema, rows).collect()  # a local relation's: no job


def _driver_kept(frame, rows):
    """``frame`` kept in the driver as its JVM ``rows`` (a ``java.util.List``): a local relation
    read in one partition, or, with no rows, an empty one, which Spark's optimiser knows is empty."""
    return _local_relation(frame.sparkSession, frame.schema, rows).coalesce(1) if rows.size() else empty_like(frame)


def materialise_observed(frame, aggregates: Sequence) -> tuple[object, dict | None]:
    """``frame`` materialised and, where it is kept in the driver (``IN_THE_DRIVER``: a small
    incident), the ``aggregates`` of its rows (aggregate Columns, each named by an alias: the
    keys of the values), computed by the job that collects it (Spark's ``Observation``).
    Elsewhere the values are None, for the caller to compute: a checkpoint of one partition is
    planned lazily and counted by a later job, which an observation does not see; over a
    checkpoint spread over partitions the observation works, but the events' 84 counts made the
    4M-line corpus' events job 1 s longer (3.5 s against 2.3-2.5 s), where a job of its own to
    count them takes 0.1-0.2 s."""
    from pyspark.sql import Observation

    spark = frame.sparkSession
    if _is_connect(spark) or not kept_in_the_driver(spark):
        return materialise(frame), None
    observation = Observation()
    kept = materialise(frame.observe(observation, *aggregates))
    return kept, observation.get


def kept_in_the_driver(spark) -> bool:
    """Whether tables are kept in the driver (``IN_THE_DRIVER``, on a classic session)."""
    return spark.conf.get(_KEPT_IN, None) == "driver" and not _is_connect(spark)


def empty_like(frame):
    """An empty local relation with ``frame``'s schema, nullability included."""
    return empty_of(frame.sparkSession, frame.schema)


def empty_of(spark, schema):
    """An empty local relation of ``schema`` (a ``StructType``). (PySpark's ``createDataFrame``
    of an empty list makes an RDD of a classic session's, which the optimiser cannot see is
    empty.)"""
    if _is_connect(spark):
        return spark.createDataFrame([], schema)
    return _local_relation(spark, schema, spark._jvm.java.util.ArrayList())


_SPLIT_TEXT = re.compile(r"^path: (?P<uri>.*), range: (?P<start>\d+)-\d+, partition values: [^,]*$")


def scan_splits(frame) -> list[tuple[str, int]] | None:
    """The file URI and start byte of the split each partition of ``frame`` reads, in partition
    order, from Spark's own plan (no job runs); ``frame`` is a plain read of files
    (``spark.read.text``). The URIs are written as ``_metadata.file_path`` writes them. None on
    Spark Connect, or where a partition reads other than one split.

    Reading ``_metadata`` instead costs a copy of every row: Spark appends the file's metadata
    to each row it reads. In one warm session, a filtered read of the 4M-line benchmark corpus
    took 2.8 s with ``_metadata.file_path`` and 1.6 s without; the whole ingest, 0.97 of its CPU."""
    if _is_connect(frame.sparkSession):
        return None
    leaves = frame._jdf.queryExecution().sparkPlan().collectLeaves()
    if leaves.size() != 1 or leaves.apply(0).getClass().getSimpleName() != "FileSourceScanExec":
        return None
    splits = []
    for partition in leaves.apply(0).inputRDD().partitions():
        files = partition.files()
        found = _SPLIT_TEXT.match(files[0].toString()) if len(files) == 1 else None  # "path: URI, range: a-b, ..."
        if found is None:
            return None
        splits.append((re.sub(r"^file:///", "file:/", found["uri"]), int(found["start"])))
    return splits


def known_empty(frame) -> bool:
    """Whether Spark knows that ``frame`` has no rows without running anything: it is an empty
    local relation (``empty_of``; what ``materialise`` keeps of a table with no rows in one
    partition). ``None``, no table, has none either. False where only a job could tell."""
    if frame is None:
        return True
    if _is_connect(frame.sparkSession):
        return False
    plan = frame._jdf.queryExecution().analyzed()
    return plan.getClass().getSimpleName() == "LocalRelation" and plan.data().isEmpty()


def _local_relation(spark, schema, rows):
    """A local relation of the JVM ``rows`` (a ``java.util.List`` of ``Row``) of ``schema``,
    built in the JVM: the rows never pass through Python."""
    from pyspark.sql.classic.dataframe import DataFrame

    jschema = spark._jsparkSession.parseDataType(schema.json())
    return DataFrame(spark._jsparkSession.createDataFrame(rows, jschema), spark)


class TableReads:
    """Reads the rows of the small ordered tables of a result, each at every use.

    Apart (the default): each table one partition at a time (``local_rows``, under
    ``SMALL_RESULT_PARTITIONS``; a table of one partition split ``in_pieces``, the tables of
    one partition counted together at the first read), so that the driver never holds a large
    one whole. Tables of JSON texts (``texts_of``) whose executors write to this machine's disk
    (``runs_locally``) are written to text files, all those registered and not written yet by
    one job at the first read of one of them (``written_together``), and streamed from the
    files. Together (tables kept in the driver, ``IN_THE_DRIVER``): the first read of a table
    reads every table registered and not read yet in one Spark job (``rows_together``); a small
    incident's result is a few lists of a few rows, each of which would cost a job of its own.

    ``settings``: the runtime SQL settings the tables were planned under (``ONE_PARTITION``
    for an incident's model of few events), under which their files are written; not
    ``at_once`` (``room_to_run_at_once``: a small local heap), each table by a job of its own,
    one after another, as the model's tables were built."""

    def __init__(self, spark, settings: Mapping[str, str] | None = None, at_once: bool = True):
        self._together = kept_in_the_driver(spark)
        self._to_files = not self._together and runs_locally(spark)
        self._settings = dict(settings or {})
        self._at_once = at_once
        self._pending: dict[int, object] = {}  # registered by ``of``, not read yet
        self._unwritten: dict[int, object] = {}  # registered by ``texts_of``, not written yet
        self._read: dict[int, list] = {}  # together: a table's rows; to files: the files it is in
        self._rows: dict[int, int | None] = {}
        self._registered = 0
        self._scratch: Path | None = None

    @property
    def reads_once(self) -> bool:
        """Whether each table is computed once, whatever the number of its reads (written to
        files, or read together): a table read so needs no ``materialise`` of its own."""
        return self._to_files or self._together

    def texts_of(self, frame) -> Callable[[], Iterator[str]]:
        """A function that returns an iterator over the values of ``frame``'s one string column (a
        table's rows as JSON text), a new one at each call. Apart, where the executors write to
        this machine's disk, the first call has Spark write the values of every table of texts
        registered and not written yet (``written_together``: one job, where a table read one
        piece at a time had cost a job per piece and one to count them), and every call streams
        the files: the driver's JVM holds no task result of them. An analysis of the 4M-line
        benchmark corpus and one of the 16M-line corpus each ran 23 Spark jobs, where a job per
        table had run 31, and reading the tables in pieces 37 and 55; the JSON the same, byte
        for byte."""
        if not self._to_files:
            read = self.of(frame)
            return lambda: (row[0] for row in read())
        index = self._register(frame, self._unwritten)

        def from_files() -> Iterator[str]:
            if index not in self._read:
                self._write_pending(frame.sparkSession)
            return tagged_lines(self._read[index], index)

        return from_files

    def _register(self, frame, pending: dict[int, object]) -> int:
        index = self._registered
        self._registered += 1
        pending[index] = frame
        return index

    def _write_pending(self, spark) -> None:
        """Write every table of texts registered and not written yet: by one Spark job, or not
        ``at_once`` a job each."""
        batches = [self._unwritten] if self._at_once else [{index: frame} for index, frame in self._unwritten.items()]
        for batch in batches:
            directory = self._scratch_directory(spark) / f"tables-{min(batch)}"
            with sql_settings(spark, self._settings):
                self._read.update(dict.fromkeys(batch, written_together(batch, directory)))
        self._unwritten = {}

    def _scratch_directory(self, spark) -> Path:
        """This result's directory of written tables (in ``scratch_root``, named after this
        process), removed with it (or as Python exits); those of processes that are gone are
        removed first (``remove_orphaned_results``)."""
        if self._scratch is None:
            root = Path(scratch_root(spark) or tempfile.gettempdir())
            remove_orphaned_results(root)
            self._scratch = Path(tempfile.mkdtemp(prefix=f"{RESULT_PREFIX}{_process_id()}-", dir=root))
            weakref.finalize(self, shutil.rmtree, self._scratch, True)
        return self._scratch

    def of(self, frame) -> Callable[[], Iterator]:
        """A function that returns an iterator over the rows of ``frame``, a new one at each call
        (apart, or together; see the class)."""
        index = self._register(frame, self._pending)
        if not self._together:
            def apart() -> Iterator:
                with sql_settings(frame.sparkSession, SMALL_RESULT_PARTITIONS):
                    if index not in self._rows:  # the tables of one partition registered so far, counted at once
                        self._rows.update(zip(self._pending, one_partition_rows(list(self._pending.values())), strict=True))
                        self._pending.clear()
                    return local_rows(in_pieces(frame, self._rows[index]))

            return apart

        def together() -> Iterator:
            if index not in self._read:
                self._read.update(zip(self._pending, rows_together(list(self._pending.values())), strict=True))
                self._pending.clear()
            return iter(self._read[index])

        return together


RESULT_PREFIX = "forensics-result-"
"""The start of the name of a result's directory of written tables: then its process's id
(``_process_id``)."""


def remove_orphaned_results(root: Path) -> None:
    """Remove the result directories in ``root`` whose process is gone: a process killed
    (SIGKILL, the kernel's out-of-memory killer) cannot remove its own, and the 16M-line
    corpus' lists take some 300 MB. A process still running, or another user's, keeps its own,
    and so does a process of another host or PID namespace (``_process_id``).
    (POSIX only: elsewhere ``os.kill`` cannot ask whether a process runs without ending it.)"""
    if os.name != "posix":
        return
    space, _ = _process_id().split("-")
    for path in root.glob(f"{RESULT_PREFIX}{space}-*-*"):
        pid = path.name[len(RESULT_PREFIX):].split("-")[1]
        if pid.isdigit() and not _is_running(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _process_id() -> str:
    """This process's id as ``SPACE-PID``: SPACE a digest of the host's name and of the process's
    PID namespace (Linux's ``/proc/self/ns/pid``), so that hosts or containers sharing a scratch
    directory never read each other's process ids as their own."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    space = hashlib.sha256(f"{socket.gethostname()} {namespace}".encode()).hexdigest()[:12]
    return f"{space}-{os.getpid()}"


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def scratch_root(spark) -> str | None:
    """Where Spark keeps its scratch files on this machine (the first of ``SPARK_LOCAL_DIRS``, else
    of ``spark.local.dir``), if it exists; None: the system's temporary directory, Spark's default."""
    listed = os.environ.get("SPARK_LOCAL_DIRS") or spark.sparkContext.getConf().get("spark.local.dir", "")
    first = listed.split(",")[0].strip()
    return first if first and os.path.isdir(first) else None


CHILD_BY_CHILD: Mapping[str, str] = {"spark.sql.unionOutputPartitioning": "false"}
"""Runtime settings under which a union's partitions are its children's, one after another.
With Spark 4.1's default (SPARK-52921), children of the same partitioning (one partition each,
as an incident's tables of few events) are read side by side: their union is one partition."""


def written_together(frames: Mapping[int, object], directory: Path) -> list[tuple[Path, int, int]]:
    """The files, in order, into which one Spark job wrote the values of the one string column of
    each of ``frames`` (by number), a line each, in its frame's order, after its frame's number and
    a space (``tagged_lines``); each file with the numbers of its first and last lines (0, -1:
    empty). ``directory`` must not exist yet.

    The frames' union is written as text, each partition in a file named after its index. Its
    partitions come frame after frame (``CHILD_BY_CHILD``), so a file holds one frame's lines,
    and the numbers of a file's lines never decrease whatever Spark does."""
    from functools import reduce

    from pyspark.sql import functions as F

    tagged = [frame.select(F.concat(F.lit(f"{number} "), F.col(frame.columns[0]))) for number, frame in frames.items()]
    union = reduce(lambda one, other: one.union(other), tagged)
    with sql_settings(union.sparkSession, CHILD_BY_CHILD):
        union.write.option("compression", "none").text(directory.as_uri())
    paths = sorted(directory.glob("part-*"), key=lambda path: (int(path.name.split("-")[1]), path.name))
    return [(path, *_first_and_last_numbers(path)) for path in paths]


def _first_and_last_numbers(path: Path) -> tuple[int, int]:
    """The numbers that the first and the last line of a ``written_together`` file start with
    (0, -1: the file is empty). The last line's start is sought backwards, a block at a time."""
    with open(path, "rb") as handle:
        if not handle.readline():
            return 0, -1
        first = _number_at(handle, 0)
        position = handle.seek(0, os.SEEK_END) - 1  # before the last line's own newline
        while position > 0:
            start = max(0, position - 65536)
            handle.seek(start)
            cut = handle.read(position - start).rfind(b"\n")
            if cut >= 0:
                return first, _number_at(handle, start + cut + 1)
            position = start
    return first, first


def _number_at(handle, offset: int) -> int:
    """The number of the ``written_together`` line that starts at byte ``offset``."""
    handle.seek(offset)
    return int(handle.read(24).split(b" ", 1)[0])


def tagged_lines(files: Sequence[tuple[Path, int, int]], number: int) -> Iterator[str]:
    """The lines of frame ``number`` in ``written_together``'s ``files``, in order, without their
    number and their ``\\n``. Split at ``\\n`` alone: a JSON text may hold other line separators
    of Unicode's (U+2028) unescaped."""
    tag = f"{number} "
    for path, first, last in files:
        if not first <= number <= last:
            continue
        with open(path, encoding="utf-8", newline="\n") as handle:
            for line in handle:
                if line.startswith(tag):
                    yield line[len(tag):-1] if line.endswith("\n") else line[len(tag):]
                elif int(line.split(" ", 1)[0]) > number:
                    break


Built = TypeVar("Built")
_CONNECT_COLUMNS = type("ConnectColumns", (), {})()
"""The owner of the Columns built for Spark Connect, which are plain Python, bound to no session."""
KEPT_BUILDS = 64
"""Builds of one function that ``built_once`` keeps per Spark context; the oldest go beyond it."""


def built_once(build: Callable[..., Built]) -> Callable[..., Built]:
    """``build``, a pure function of hashable arguments that returns Columns, called once per
    Spark context and arguments: later calls return the same Columns, which later queries use
    again. A Column is an unresolved expression bound to no query; on a classic session each
    function and operator that builds one is a call into the JVM (py4j, about 0.2 ms), and the
    recognisers of a layout table are built by thousands of them. A new context (a session
    stopped and started again) builds anew."""
    kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @wraps(build)
    def once(*args):
        from pyspark import SparkContext
        from pyspark.sql.utils import is_remote

        owner = _CONNECT_COLUMNS if is_remote() else SparkContext._active_spark_context
        if owner is None:
            return build(*args)
        builds = kept.setdefault(owner, {})
        if args not in builds:
            if len(builds) >= KEPT_BUILDS:
                del builds[next(iter(builds))]
            builds[args] = build(*args)
        return builds[args]

    return once


def rows_together(frames: Sequence) -> list[list]:
    """The rows of ``frames`` (small), each frame's in its order where it is one ordered
    partition, read by one query (one Spark job where none needs an exchange, as in a small
    incident): each frame becomes a struct column of one union, whose partitions come back frame
    after frame. Small results collected apart cost a job each."""
    rows: list[list] = [[] for _ in frames]
    for row in _tagged_union(dict(enumerate(frames))).collect():
        rows[row["_table"]].append(row[f"_table_{row['_table']}"])
    return rows


def _tagged_union(frames: Mapping[int, object]):
    """One union of ``frames`` (tag: frame), each frame's row as a struct column
    ``_table_<tag>`` beside its ``_table`` tag (null in the other frames' rows): frames of any
    schemas, in one query."""
    from pyspark.sql import functions as F

    parts = [frame.select(F.lit(i).alias("_table"), F.struct(F.col("*")).alias(f"_table_{i}")) for i, frame in frames.items()]
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part, allowMissingColumns=True)
    return union
