"""Light imports and a one-way import graph.

``import forensics``, ``forensics --help`` and ``load_incident(analysis_json=...)`` (a report
kernel) run in fresh interpreters and must not load pyspark. The import graph of
``forensics/`` is read with ``ast``: stages import only earlier stages (``LAYERS``) and the
leaves, and no module imports a name from its own package's ``__init__``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "forensics"
SAMPLE = ROOT / "tests" / "data" / "cli" / "kafka-7672"

PYSPARK_LOADED = "import sys; print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark'))"

LEAVES = {"schema", "contract", "errors", "registry", "layouts", "catalogue", "package"}
"""Usable by every module; they import only leaves."""
LAYERS = (
    {"spark"},  # the session
    {"sources"},  # what a table or a detector is made from (known-empty inputs)
    {"ingest"},
    {"events", "offsets"},  # parse
    {"model"},
    {"detect", "recovery"},  # findings, and what to run about them
    {"analyze"},  # the stages above in one call: the JSON contract
    {"redact"},  # present: pseudonymise the JSON,
    {"report"},  # render it (notebook views, HTML reports),
    {"cli"},  # the command line
    {"__main__"},
)
"""The data flow, in order: a unit (a module or package under ``forensics/``) imports the
leaves, its own modules and units of earlier layers."""
SIDE_TOOLS = {"simulate"}
"""Generates incidents for tests and benchmarks: imports only leaves, imported by no library unit
but those of ``SIDE_TOOL_USES``."""
SIDE_TOOL_USES = {("cli", "simulate")}
"""``forensics warm-up`` analyses generated incidents while the JVM records the classes it loads."""


def run_python(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, **(env or {})})


def loaded_pyspark(done: subprocess.CompletedProcess) -> list[str]:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"'))


def imported_by_importtime(stderr: str) -> set[str]:
    """Module names of ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:") and "|" in line}


# ----------------------------------------------------------------------------- no pyspark


def test_import_forensics_loads_no_pyspark():
    assert loaded_pyspark(run_python("-c", f"import forensics; {PYSPARK_LOADED}")) == []


def test_help_loads_no_pyspark_as_module_and_console_script():
    as_module = run_python("-X", "importtime", "-m", "forensics", "--help")
    script = Path(sys.executable).with_name("forensics")
    as_script = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    )
    for done in (as_module, as_script):
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Usage: forensics" in done.stdout and "analyze" in done.stdout
        modules = imported_by_importtime(done.stderr)
        assert "forensics.cli" in modules
        assert not {m for m in modules if m.split(".")[0] == "pyspark"}


@pytest.fixture(scope="module")
def analysis_json(spark, tmp_path_factory) -> Path:
    """What ``forensics analyze --json`` writes for the small KAFKA-7672 sample."""
    from forensics.analyze import analyze

    path = tmp_path_factory.mktemp("imports") / "analysis.json"
    path.write_text(json.dumps(analyze(spark, [str(SAMPLE)]), default=str), encoding="utf-8")
    return path


def test_load_incident_from_analysis_json_loads_no_pyspark(analysis_json):
    views = (
        "from forensics.report import load_incident\n"
        f"incident = load_incident(analysis_json={str(analysis_json)!r})\n"
        "assert 'skipped_restore' in incident.findings_table()._repr_html_()\n"
        "incident.summary()._repr_html_(); incident.timeline(); incident.each_finding()._repr_html_()\n"
    )
    assert loaded_pyspark(run_python("-c", views + PYSPARK_LOADED)) == []


def test_public_names_stay_functions_when_their_submodules_load_first():
    done = run_python(
        "-c",
        "import forensics.analyze, forensics.ingest.exports, forensics\n"
        "print(forensics.analyze.__module__, forensics.ingest.__module__, forensics.get_session.__module__)",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["forensics.analyze", "forensics.ingest", "forensics.spark.session"]


# ----------------------------------------------------------------------------- import graph


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package whose namespace relative imports in ``path`` start from."""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def is_submodule(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or base.is_dir()


def imports_of(path: Path) -> list[tuple[int, str, list[str]]]:
    """``(line, imported module, names)`` of every import in ``path`` (also inside functions)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_of(path).split(".")[: len(package_of(path).split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target, [alias.name for alias in node.names]))
    return [(line, target, names) for line, target, names in found if target.split(".")[0] == "forensics"]


def unit_of(dotted: str) -> str:
    """``forensics.model.clock`` -> ``model``: the top-level module or package under forensics."""
    return dotted.split(".")[1] if "." in dotted else ""


def layer_of(unit: str) -> int | None:
    return next((i for i, units in enumerate(LAYERS) if unit in units), None)


def library_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def edges() -> list[tuple[str, int, str, list[str], Path]]:
    """``(importer, line, imported, names, file)`` for every import between forensics modules.
    ``from package import name`` imports the submodule ``package.name`` when there is one."""
    result = []
    for path in library_files():
        for line, target, names in imports_of(path):
            submodules = [f"{target}.{n}" for n in names if is_submodule(f"{target}.{n}")]
            for imported in submodules or [target]:
                result.append((module_name(path), line, imported, names, path))
    return result


def test_every_unit_has_a_place_in_the_layers():
    units = {unit_of(module_name(p)) for p in library_files()} - {""}
    placed = LEAVES | SIDE_TOOLS | set().union(*LAYERS)
    assert units - placed == set(), "place these modules in LAYERS, LEAVES or SIDE_TOOLS of tests/test_imports.py"


def test_imports_follow_the_data_flow():
    wrong = []
    for importer, line, imported, _, path in edges():
        source, target = unit_of(importer), unit_of(imported)
        if not source or source == target or target in LEAVES:
            continue
        if source in LEAVES or source in SIDE_TOOLS or target in SIDE_TOOLS:
            allowed = (source, target) in SIDE_TOOL_USES
        else:
            allowed = layer_of(target) is not None and layer_of(source) is not None and layer_of(target) < layer_of(source)
        if not allowed:
            wrong.append(f"{path.relative_to(ROOT)}:{line}: {source} imports {imported}")
    assert wrong == []


def test_no_module_imports_its_own_package_init():
    """``from . import helper`` (a sibling module) is fine; ``from .. import __version__`` or
    ``from . import name_defined_in_init`` needs the package's ``__init__`` (which may be still
    importing that very module). A package's ``__main__`` is its script, never imported by its
    ``__init__``: it may use the package's API."""
    wrong = []
    for path in library_files():
        if path.name == "__main__.py":
            continue
        own = package_of(path)
        ancestors = {".".join(own.split(".")[:i]) for i in range(1, len(own.split(".")) + (path.name != "__init__.py"))}
        for line, target, names in imports_of(path):
            init_names = [n for n in names if not is_submodule(f"{target}.{n}")] if names else ["*module*"]
            if target in ancestors and init_names:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {', '.join(init_names)} from {target}/__init__.py")
    assert wrong == []
