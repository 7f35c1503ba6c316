"""Resolve Kafka's jars with Maven and compile the lab's Java drivers against them.

Real Kafka comes from Maven Central through `mvn dependency:copy-dependencies` run on a tiny pom,
never from hand-downloaded archives; everything lands in the lab's cache, keyed by what was asked.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = ["cache_dir", "jars", "classpath", "javac_build", "tools_available", "MavenError"]


class MavenError(RuntimeError):
    """Maven or javac failed; the message carries the tail of their output."""


def cache_dir() -> Path:
    """The lab's cache: `$FORENSICS_LAB_CACHE`, else `~/.cache/forensics-lab`."""
    root = os.environ.get("FORENSICS_LAB_CACHE") or Path.home() / ".cache" / "forensics-lab"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def tools_available() -> list[str]:
    """The names of the JDK/Maven tools the lab needs that are missing from PATH."""
    return [tool for tool in ("mvn", "javac", "java") if shutil.which(tool) is None]


def _key(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _pom(coordinates: list[str]) -> str:
    deps = []
    for coordinate in coordinates:
        fields = coordinate.split(":")
        if len(fields) not in (3, 4):
            raise ValueError(f"not group:artifact:version[:classifier]: {coordinate!r}")
        group, artifact, version = (escape(f) for f in fields[:3])
        classifier = f"<classifier>{escape(fields[3])}</classifier>" if len(fields) == 4 else ""
        deps.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version>{classifier}</dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "<modelVersion>4.0.0</modelVersion>\n"
        "<groupId>forensics.lab</groupId><artifactId>deps</artifactId><version>0</version>\n"
        "<packaging>pom</packaging>\n"
        f"<dependencies>{''.join(deps)}</dependencies>\n"
        "</project>\n"
    )


def jars(coordinates: list[str], timeout: float = 900) -> list[Path]:
    """The jars of `coordinates` and their runtime dependencies, resolved once into the cache.

    The result is sorted by file name; a second call with the same coordinates runs no Maven.
    """
    coordinates = list(coordinates)
    target = cache_dir() / "jars" / _key(*coordinates)
    done = target / ".done"
    lib = target / "lib"
    if done.exists():
        return sorted(lib.glob("*.jar"), key=lambda p: p.name)
    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another lab process may resolve the same set now
        _resolve(coordinates, target, timeout)
    return sorted(lib.glob("*.jar"), key=lambda p: p.name)


def _resolve(coordinates: list[str], target: Path, timeout: float) -> None:
    done = target / ".done"
    lib = target / "lib"
    if not done.exists():
        if tools_available():
            raise MavenError(f"missing on PATH: {', '.join(tools_available())}")
        target.mkdir(parents=True, exist_ok=True)
        (target / "pom.xml").write_text(_pom(coordinates))
        if lib.exists():
            shutil.rmtree(lib)
        command = [
            "mvn",
            "-q",
            "-B",
            "-f",
            str(target / "pom.xml"),
            f"-Dmaven.repo.local={cache_dir() / 'm2'}",
            "dependency:copy-dependencies",
            f"-DoutputDirectory={lib}",
            "-DincludeScope=runtime",
        ]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-3000:]
            raise MavenError(f"mvn could not resolve {coordinates}:\n{tail}")
        done.write_text("\n".join(coordinates) + "\n")


def classpath(paths: list[Path]) -> str:
    """A Java classpath string of `paths`."""
    return os.pathsep.join(str(p) for p in paths)


def javac_build(source_dir: Path, classpath_jars: list[Path]) -> Path:
    """Compile every `*.java` under `source_dir` against the jars; return the classes directory.

    Cached under the hash of the sources and the classpath, so an unchanged driver is not rebuilt.
    """
    sources = sorted(Path(source_dir).rglob("*.java"))
    if not sources:
        raise MavenError(f"no .java sources under {source_dir}")
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    digest.update(classpath(classpath_jars).encode())
    out = cache_dir() / "classes" / f"{Path(source_dir).name}-{digest.hexdigest()[:16]}"
    if (out / ".done").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / ".done").exists():
            _javac(sources, classpath_jars, out, source_dir)
    return out


def _javac(sources: list[Path], classpath_jars: list[Path], out: Path, source_dir: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    command = ["javac", "-nowarn", "-d", str(out), "-cp", classpath(classpath_jars)]
    proc = subprocess.run(command + [str(s) for s in sources], capture_output=True, text=True)
    if proc.returncode != 0:
        raise MavenError(f"javac failed for {source_dir}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    (out / ".done").write_text("ok\n")
