"""A class-data archive of the classes Spark loads, recorded once (``forensics warm-up``) and
mapped by later driver JVMs, and the JIT tier of a session started for small work.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from ..errors import ForensicsError
from . import handles
from .jvm import java_executable, require_java
from .session import get_session

QUICK_TIER = ("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m", "-XX:CompileThresholdScaling=0.1")
"""The quick JIT tier alone (C1), with more room for compiled code and methods compiled sooner:
on two cores the optimising compiler (C2) competes with the analysis itself, and a session
started for small work (``local_jvm_options``) waits on its first few analyses, not on peak
speed. Measurements: docs/performance.md, "The driver JVM"."""
CLASS_ARCHIVE_QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
"""Off: the JVM's own messages (on stdout) about a class archive: the classes it leaves out as it
writes one (generated and signed classes), or an archive it cannot use (another JDK build or
classpath), with which it starts as it would have without."""


def class_archive_options() -> tuple[str, ...]:
    """The JVM options that map the class-data archive ``record_class_archive`` wrote for this
    pyspark and this Java; none before it has. Any driver started from the command line may
    use them: the archive holds classes, not settings, and changes nothing the JVM computes.
    Java 17 still defines at every start what it cannot archive (lambdas, signed JARs' classes)."""
    archive = class_archive_path()
    return (f"-XX:SharedArchiveFile={archive}", *CLASS_ARCHIVE_QUIET) if archive and archive.is_file() else ()


def local_jvm_options(master: str, small_work: bool = False) -> tuple[str, ...]:
    """The driver JVM options of a session on ``master`` that the toolkit starts for a command
    or a notebook: for a local master, whose executors run in the driver's JVM, the class
    archive (``class_archive_options``) and, for ``small_work`` (a small incident, a batch of
    them), the quick JIT tier (``QUICK_TIER``); none otherwise."""
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
    from pyspark.sql import SparkSession

    if SparkSession.getActiveSession() is not None or handles.driver_jvm_started():
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
            jvm = handles.driver_jvm_process()
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
        done = subprocess.run(
            [java_executable(), f"-XX:SharedArchiveFile={archive}", *CLASS_ARCHIVE_QUIET, "-version"],
            capture_output=True,
            timeout=60,
            cwd=scratch,
        )
    return done.returncode == 0
