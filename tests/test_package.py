"""The built package carries everything a report needs, notebooks included.

Built as a user gets it (an sdist from a copy of the source tree, then a wheel from the sdist)
with this venv's setuptools, no build isolation, nothing downloaded; installed into a fresh
venv that borrows this venv's site-packages for the dependencies only; then ``forensics
report`` runs from there, away from the source tree. All of it is processes of its own, run on
the suite's background lane (``tests.background``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import background

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "cli" / "kafka-7672"
SOURCES = ("pyproject.toml", "README.md", "forensics", "notebooks")
TIMEOUT_S = 900


def run(*args: str | Path, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd, env={**background.ENVIRONMENT, **(env or {})}
    )
    assert done.returncode == 0, f"{' '.join(map(str, args))}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def copy_sources(target: Path) -> Path:
    target.mkdir()
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, target / name)
    return target


def built_wheel(work: Path) -> Path:
    source = copy_sources(work / "source")
    sdist = work / "sdist"
    built = run(sys.executable, "-c", f"from setuptools import build_meta; print(build_meta.build_sdist({str(sdist)!r}))", cwd=source)
    tarball = sdist / built.stdout.strip().splitlines()[-1]
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-q",
        "-w",
        work / "wheels",
        tarball,
        cwd=work,
    )
    return next((work / "wheels").glob("*.whl"))


def installed_venv(wheel: Path, target: Path) -> Path:
    """A fresh venv with the wheel installed; the dependencies come from this venv's
    site-packages (a path entry only: this venv's editable-install hook does not run there)."""
    run(sys.executable, "-m", "venv", "--without-pip", target, cwd=target.parent)
    python = target / "bin" / "python"
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=target).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel, cwd=target.parent)
    return target


@dataclass(frozen=True)
class Installed:
    work: Path
    wheel: Path
    venv: Path
    where: list[str]
    """``forensics.__file__`` and ``forensics.package.NOTEBOOKS`` as the installed package says."""
    report: subprocess.CompletedProcess
    out: Path
    version: str
    """``forensics.__version__`` as the installed package says."""


def build_install_and_report() -> Installed:
    """The wheel built as a user gets it, installed into a fresh venv, and ``forensics report``
    run from there on ``SAMPLE``, away from the source tree. Processes of its own only: run in
    the background (``tests.background``)."""
    work = Path(tempfile.mkdtemp(prefix="forensics-package-"))
    wheel = built_wheel(work)
    venv = installed_venv(wheel, work / "venv")
    python, script = venv / "bin" / "python", venv / "bin" / "forensics"
    where = run(
        python, "-c", "import forensics, forensics.package as p; print(forensics.__file__); print(p.NOTEBOOKS)", cwd=work
    ).stdout.split()
    out = work / "out" / "report.html"
    # nbconvert's base templates are data files of the venv that holds nbconvert, this one.
    jupyter_data = Path(sys.prefix) / "share" / "jupyter"
    report = run(
        script,
        "report",
        SAMPLE,
        "-o",
        out,
        "--master",
        "local[2]",
        "--title",
        "Installed package",
        cwd=work,
        env={"JUPYTER_PATH": str(jupyter_data)},
    )
    version = run(python, "-c", "import forensics; print(forensics.__version__)", cwd=work).stdout.strip()
    return Installed(work, wheel, venv, where, report, out, version)


BACKGROUND = (build_install_and_report,)


@pytest.fixture(scope="module")
def package() -> Installed:
    made = background.result(build_install_and_report)
    yield made
    shutil.rmtree(made.work, ignore_errors=True)


def test_the_wheel_holds_every_module_the_notebooks_and_the_data(package):
    names = set(zipfile.ZipFile(package.wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "forensics").rglob("*.py") if "__pycache__" not in p.parts}
    assert modules - names == set(), "add the missing subpackages to [tool.setuptools] packages in pyproject.toml"
    shipped = {f"forensics/notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert shipped and shipped <= names
    assert {
        "forensics/spark/log4j2.properties",
        "forensics/result.schema.json",
        "forensics/catalogue/templates.yaml",
        "forensics/report/templates/forensics_report/index.html.j2",
    } <= names


def test_forensics_report_runs_from_the_installed_package(package):
    assert all(Path(p).is_relative_to(package.venv) for p in package.where), package.where
    assert "Report written to" in package.report.stdout
    assert package.report.stderr == ""  # no chatter: the JVM's, Spark's or the notebook kernel's
    html = package.out.read_text(encoding="utf-8")
    assert package.out.stat().st_size > 1_000_000 and "Installed package" in html and "skipped_restore" in html
    manifest = json.loads(package.out.with_suffix(".manifest.json").read_text(encoding="utf-8"))
    assert manifest["tool_version"] == package.version
    assert package.out.with_suffix(".ipynb").is_file()
