"""The driver JVM: the Java it needs, its garbage collector, and its start-up chatter kept off
stderr.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, Sequence

from ..errors import ForensicsError

MIN_JAVA = 17
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


THROUGHPUT_GC = ("-XX:+UseParallelGC",)
"""The collector of a local driver JVM, whose executors run in it (``local_collector``): the
throughput collector instead of G1, which on two cores runs its concurrent work beside the
tasks and puts a barrier on every reference stored, and instead of the serial collector, whose
pauses stop the analysis. Measurements: docs/performance.md, "The driver JVM"."""
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
