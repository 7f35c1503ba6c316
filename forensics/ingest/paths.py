"""Resolve the user's paths, directories and globs into the list of input files.

Local paths are checked here so that a mistake gets one clear message; URIs with a scheme
(``hdfs://``, ``s3a://``, ...) are left to Spark, which reads them where they live.
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import os
import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ForensicsError

_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_ROTATION = re.compile(r"(\.\d+|[.-]\d{4}-\d\d-\d\d(?:[-_.]\d\d)?)$")
_LOG_SUFFIX = re.compile(r"\.(log|txt|json|jsonl|ndjson|out|err|stdout|stderr)$", re.IGNORECASE)
_OFFSET = re.compile(r"^(UTC|GMT)?[+-]\d\d:\d\d$")


def check_time_zone(tz: str) -> str:
    """``tz`` if Spark and Python both understand it (region id or ``+hh:mm``), else a clear error."""
    if _OFFSET.match(tz):
        return tz
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ForensicsError(
            f"Unknown time zone {tz!r}.", "Use a region id such as Europe/Berlin, UTC, or an offset such as +02:00."
        ) from None
    return tz


@dataclass(frozen=True)
class InputFile:
    """One file to ingest: where it is, which host wrote it, the zone of its local times."""

    path: str
    host: str
    tz: str = "UTC"
    tz_given: bool = False
    size: int | None = None
    problem: str | None = None
    duplicate_of: str | None = None

    @property
    def compressed(self) -> bool:
        return self.path.endswith(".gz")

    @property
    def is_uri(self) -> bool:
        return bool(_URI.match(self.path))


GZIP_RATIO = 10
"""The bytes of text a compressed byte is counted as (log text compresses about tenfold)."""


def text_bytes(files: Iterable[InputFile]) -> int | None:
    """The bytes of text that ``files`` hold, a compressed file counted ``GZIP_RATIO`` times its
    size, files with a problem left out; None where a size is unknown (a URI)."""
    sizes = [None if f.size is None else f.size * (GZIP_RATIO if f.compressed else 1) for f in files if not f.problem]
    return None if None in sizes else sum(sizes)


def host_from_name(file_name: str) -> str:
    """``host-a.log.2.gz`` -> ``host-a``: the file name without compression, rotation and log suffixes."""
    name = file_name[:-3] if file_name.endswith(".gz") else file_name
    name = _ROTATION.sub("", name)
    name = _LOG_SUFFIX.sub("", name)
    name = _ROTATION.sub("", name)
    return name or file_name


GENERIC_DIRS = re.compile(r"^(logs?|var|tmp|old|archive|rotated|offsets|dumps?|\d{4}(-\d\d(-\d\d)?)?)$", re.IGNORECASE)
DOCUMENTATION = re.compile(r"(\.(md|rst|ipynb|html|pdf)|^EXPECTED\.json|^truth\.json|^README(\..*)?)$", re.IGNORECASE)
"""Files skipped (and reported) when found inside a directory input: notes, not logs (``truth.json``:
a lab run's truth, ``lab/runs/<scenario>/<run>/``)."""


def is_lab_journal(path: str) -> bool:
    """Whether ``path`` is a lab run's journal (``<run>/journal/*.jsonl`` beside ``<run>/truth.json``):
    the records the lab's drivers produced and processed, its truth, not a log."""
    parent = os.path.dirname(path)
    return (
        os.path.basename(parent) == "journal"
        and path.endswith(".jsonl")
        and os.path.isfile(os.path.join(os.path.dirname(parent), "truth.json"))
    )


GENERIC_FILES = re.compile(
    r"^(app(lication)?|server|service|std(out|err)|console|output|out|main|kafka|client|consumer|producer|"
    r"streams|messages|syslog|all|debug|info|error|trace|current|log|logs|combined)$",
    re.IGNORECASE,
)
"""File names that say what a log is, not who wrote it: such a file's host is its directory."""


_NAME = r"[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?"
_POD_DIR = re.compile(rf"^{_NAME}_(?P<pod>{_NAME})_(?:[0-9a-f]{{8}}(?:-[0-9a-f]{{4}}){{3}}-[0-9a-f]{{12}}|[0-9a-f]{{32}})$")
_CONTAINER_LINK = re.compile(rf"^(?P<pod>{_NAME})_{_NAME}_{_NAME}-[0-9a-f]{{64}}\.log")


def kubernetes_pod(path: str) -> str | None:
    """The pod whose container wrote ``path``, where the path is the kubelet's: ``/var/log/pods/
    <namespace>_<pod>_<uid>/<container>/0.log`` (rotated ``0.log.<time>[.gz]``), or the link to
    it, ``/var/log/containers/<pod>_<namespace>_<container>-<container id>.log``."""
    parts = os.path.normpath(path).split(os.sep)
    found = (len(parts) >= 3 and _POD_DIR.match(parts[-3])) or _CONTAINER_LINK.match(parts[-1])
    return found["pod"] if found else None


def infer_host(path: str, root: str | None) -> str:
    """The pod, for a container log where the kubelet keeps it (``kubernetes_pod``); else the
    nearest directory between the file and the input directory whose name is not generic
    (``logs``, ``2024-03-11``, ...); for a file with a generic name (``app.log``) directly in
    the directory named (or named itself), that directory or the nearest meaningful one above
    it (``incident/host-a`` -> ``host-a``); else the file name (see ``host_from_name``)."""
    pod = kubernetes_pod(path)
    if pod is not None:
        return pod
    if root is not None:
        directories = os.path.relpath(path, root).split(os.sep)[:-1]
        for name in reversed(directories):
            if not GENERIC_DIRS.match(name):
                return name
    by_name = host_from_name(os.path.basename(path))
    if GENERIC_FILES.match(by_name):
        for name in reversed(os.path.abspath(root or os.path.dirname(path)).split(os.sep)):
            if name and not GENERIC_DIRS.match(name):
                return name
    return by_name


def _distinct_hosts(files: dict[str, InputFile], named: set[str]) -> dict[str, InputFile]:
    """Files whose host came from their file name, in different directories, with the same
    name (``a/broker.log``, ``b/broker.log``) get the directory in their host: two writers are
    never silently merged into one. ``named``: keys whose host the user gave (``--host``)."""
    dirs: dict[str, set[str]] = {}
    for file in files.values():
        if not file.is_uri:
            dirs.setdefault(file.host, set()).add(os.path.dirname(file.path))
    return {
        key: replace(file, host=f"{os.path.basename(os.path.dirname(file.path))}/{file.host}")
        if key not in named and len(dirs.get(file.host, ())) > 1 and file.host == host_from_name(os.path.basename(file.path))
        else file
        for key, file in files.items()
    }


def _lookup(mapping: Mapping[str, str] | None, path: str, host: str) -> str | None:
    """The first mapping entry whose key equals the host or matches the path as a glob."""
    for pattern, value in (mapping or {}).items():
        if pattern == host or fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(os.path.basename(path), pattern):
            return value
    return None


def _walk(directory: str) -> Iterable[str]:
    """Every file below ``directory``, following directory links once (no symlink loops)."""
    seen: set[str] = set()
    for current, dirs, files in os.walk(directory, followlinks=True):
        real = os.path.realpath(current)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs.sort()
        for name in sorted(files):
            yield os.path.join(current, name)


def _expand(path: str) -> list[tuple[str, str | None]]:
    """(file, root directory or None) pairs for one user path; raises on a path that matches nothing."""
    if _URI.match(path):
        return [(path, None)]
    expanded = os.path.expanduser(path)
    matches = sorted(glob.glob(expanded, recursive=True)) if glob.has_magic(expanded) else [expanded]
    if not matches or not any(os.path.lexists(m) for m in matches):
        raise ForensicsError(f"No such file or directory: {path}", "Check the path (globs must be quoted).")
    found: list[tuple[str, str | None]] = []
    for match in matches:
        if os.path.isdir(match):
            found.extend((f, match) for f in _walk(match))
        else:
            found.append((match, None))
    return found


ANALYSIS_HEAD = re.compile(rb'^\{\s*"tool_version"\s*:')
"""The first bytes of the JSON that ``forensics analyze --json`` writes."""


def is_own_analysis(path: str) -> bool:
    """Whether ``path`` is a ``.json`` file this toolkit wrote (``forensics analyze --json``),
    which analysts often save next to the logs it came from: not an input."""
    if not path.lower().endswith(".json"):
        return False
    try:
        with open(path, "rb") as handle:
            return bool(ANALYSIS_HEAD.match(handle.read(64)))
    except OSError:
        return False


def _problem(path: str, root: str | None) -> str | None:
    name = os.path.basename(path)
    if root is not None and DOCUMENTATION.search(name):
        return "skipped: a documentation file inside a directory input (name it explicitly to read it)"
    if root is not None and is_lab_journal(path):
        return "skipped: a lab run's journal of produced and processed records (its truth), not a log"
    if root is not None and name.startswith("."):
        return "skipped: a hidden file inside a directory input (an editor's or a run's temporary file; name it explicitly to read it)"
    if root is not None and is_own_analysis(path):
        return "skipped: an analysis this toolkit wrote (forensics analyze --json), not a log"
    if not os.path.exists(path):
        return "broken symbolic link"
    if not os.path.isfile(path):
        return "not a regular file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def check_named_files(paths: Iterable[str]) -> None:
    """Fail with one sentence when a file named explicitly (not found inside a directory)
    cannot be read: a mistake the user wants to hear about, not a line in a report."""
    for path in paths:
        if _URI.match(path) or glob.has_magic(path) or not os.path.lexists(path) or os.path.isdir(path):
            continue
        problem = _problem(os.path.abspath(path), None)
        if problem:
            raise ForensicsError(f"Cannot read {path}: {problem}.", "Check the path and its permissions, or leave the file out.")
        if is_own_analysis(path):
            raise ForensicsError(
                f"{path} is an analysis this toolkit wrote (forensics analyze --json), not a log.",
                "Pass the logs and offset dumps it came from; `forensics plan --analysis FILE` reads a saved analysis.",
            )


def resolve_inputs(
    paths: Iterable[str], hosts: Mapping[str, str] | None = None, tz: str = "UTC", tz_by_source: Mapping[str, str] | None = None
) -> list[InputFile]:
    """Input files for ``paths``, each once (by real path), with host and time zone.

    ``hosts`` and ``tz_by_source`` map a host name or a path glob to a host / time zone
    (every zone checked here, the one place zones enter the inputs: ``check_time_zone``).
    Unreadable files are kept with a ``problem`` so that they are reported, not dropped.
    """
    for zone in (tz, *(tz_by_source or {}).values()):
        check_time_zone(zone)
    files: dict[str, InputFile] = {}
    named: set[str] = set()
    for user_path in paths:
        for path, root in _expand(user_path):
            if _URI.match(path):
                key, size, problem = path, None, None
            else:
                path = os.path.abspath(path)
                key, problem = os.path.realpath(path), _problem(path, root)
                size = os.path.getsize(path) if problem is None else None
            if key in files:
                continue
            inferred = infer_host(path, root)
            given = _lookup(hosts, path, inferred)
            host = given or inferred
            if given:
                named.add(key)
            zone = _lookup(tz_by_source, path, host)
            files[key] = InputFile(path, host, zone or tz, zone is not None or tz != "UTC", size, problem)
    if not files:
        raise ForensicsError(f"No files found in: {', '.join(paths)}", "Point at log files or directories holding them.")
    return mark_duplicates(list(_distinct_hosts(files, named).values()))


@dataclass(frozen=True)
class Inputs:
    """What an analysis reads: log files and offset dumps, resolved (see ``route_inputs``)."""

    logs: list[InputFile]
    dumps: list[InputFile]

    @property
    def files(self) -> list[InputFile]:
        """The log files and then the dumps: what decides whether the analysis is small."""
        return self.logs + self.dumps


def route_inputs(
    paths: Iterable[str],
    offsets: Iterable[str],
    is_dump: Callable[[str], object],
    hosts: Mapping[str, str] | None = None,
    tz: str = "UTC",
    tz_by_source: Mapping[str, str] | None = None,
) -> Inputs:
    """``paths`` and ``offsets`` resolved (``resolve_inputs``; ``hosts``, ``tz`` and
    ``tz_by_source`` apply to ``paths``) and routed: a local file among ``paths`` that
    ``is_dump`` recognises by its content goes to the dumps, after ``offsets`` (an incident
    folder often holds both logs and ``kafka-consumer-groups.sh`` output)."""
    paths, offsets = list(paths), list(offsets)
    found = resolve_inputs(paths, hosts, tz, tz_by_source) if paths else []
    dumps = [f for f in found if not f.problem and not f.is_uri and is_dump(f.path)]
    return Inputs([f for f in found if f not in dumps], (resolve_inputs(offsets) if offsets else []) + dumps)


def sha256_file(path: str) -> str | None:
    """Hex sha256 of a local file's bytes, or None when it cannot be read."""
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
    except OSError:
        return None
    return sha.hexdigest()


def mark_duplicates(files: list[InputFile]) -> list[InputFile]:
    """Files whose bytes equal an earlier file's (a log copied from several places, an export
    holding the same file twice) get ``duplicate_of``: they are read once, and reported.
    Only files of equal size are hashed."""
    by_size: dict[int, list[int]] = {}
    for index, file in enumerate(files):
        if file.size and not file.problem:
            by_size.setdefault(file.size, []).append(index)
    result = list(files)
    for indices in by_size.values():
        first_by_digest: dict[str, str] = {}
        for index in indices if len(indices) > 1 else ():
            digest = sha256_file(files[index].path)
            if digest in first_by_digest:
                result[index] = replace(files[index], duplicate_of=first_by_digest[digest])
            elif digest:
                first_by_digest[digest] = files[index].path
    return result
