"""Reading the rows of a result's tables into the driver: a partition at a time, in pieces, or
written to files by one job and streamed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import tempfile
import weakref
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from . import handles
from .materialise import kept_in_the_driver, rows_together
from .settings import CHILD_BY_CHILD, SMALL_RESULT_PARTITIONS, runs_locally, sql_settings

PIECE_ROWS = 25_000
"""Rows of a piece of a table that ``in_pieces`` splits: a few MB to a few tens of MB of JSON
rows, each piece one task's result."""


def local_rows(frame) -> Iterator:
    """The rows of ``frame``, read one partition at a time (the next one fetched meanwhile).

    On a classic session they are read through ``frame.rdd``. ``DataFrame.toLocalIterator``
    runs its jobs later, in a serving thread that inherits the id of a SQL execution that has
    already ended, and Spark 4's DAG scheduler then keeps them in ``activeQueryToJobs`` for the
    life of the session, with every RDD behind them: the checkpoints, shuffles and broadcasts
    of the analysis that read its rows so (a heap dump after two analyses of one small incident
    showed each kept LocalCheckpointRDD reached from there)."""
    if handles.is_connect(frame.sparkSession):
        return frame.toLocalIterator(True)
    return frame.rdd.toLocalIterator(True)


def in_pieces(frame, rows: int | None):
    """``frame`` (ordered) in its order, in partitions of at most ``PIECE_ROWS`` rows where it
    runs as one partition of ``rows`` rows (``one_partition_rows``; None: it does not). A table
    kept in one partition and ordered again needs no exchange, so reading it a partition at a time
    read it whole as one task's result, which a small driver's block manager may lose
    ("TaskResultLost"). Rows are numbered in order and placed by ``repartitionById``."""
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

    single = [i for i, frame in enumerate(frames) if not handles.is_connect(frame.sparkSession) and frame.rdd.getNumPartitions() == 1]
    # grouped by a constant: a union of global aggregates becomes scalar subqueries, a job each
    counted = rows_together([frames[i].groupBy(F.lit("all")).count() for i in single]) if single else []
    rows: list[int | None] = [None] * len(frames)
    for i, found in zip(single, counted, strict=True):
        rows[i] = found[0]["count"] if found else 0
    return rows


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
        piece at a time would cost a job per piece and one to count them), and every call
        streams the files: the driver's JVM holds no task result of them, and the number of jobs
        does not grow with the input."""
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
    """Remove the result directories in ``root`` whose process is gone: a process killed (SIGKILL,
    the kernel's out-of-memory killer) cannot remove its own, and a large incident's lists take
    hundreds of MB. A process still running, another user's, or one of another host or PID
    namespace (``_process_id``) keeps its own. POSIX only: elsewhere ``os.kill`` cannot ask
    whether a process runs without ending it."""
    if os.name != "posix":
        return
    space, _ = _process_id().split("-")
    for path in root.glob(f"{RESULT_PREFIX}{space}-*-*"):
        pid = path.name[len(RESULT_PREFIX) :].split("-")[1]
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
                    yield line[len(tag) : -1] if line.endswith("\n") else line[len(tag) :]
                elif int(line.split(" ", 1)[0]) > number:
                    break
