"""``forensics batch``: one Spark session, one report per incident, an index.

It runs in this process on the suite's warm session, as a second and third incident run in a
user's batch (a new process with its own JVM: ``test_cli``, ``test_quiet``, ``test_package``)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from forensics.cli import main
from forensics.ingest import paths

from .conftest import SAMPLES


def test_batch_writes_a_report_per_incident_and_an_index(tmp_path, spark, monkeypatch):
    out = tmp_path / "reports"
    listed = []
    expand = paths._expand
    monkeypatch.setattr(paths, "_expand", lambda path: listed.append(path) or expand(path))
    incidents = [str(SAMPLES / "backward_commit"), str(SAMPLES / "healthy_control")]
    done = CliRunner().invoke(main, ["batch", *incidents, "-o", str(out), "--master", "local[2]"])
    assert done.exit_code == 0, done.output[-3000:]
    assert listed == incidents  # each directory listed once, before Spark starts
    assert "Index written to" in done.output
    index = (out / "index.html").read_text(encoding="utf-8")
    for name in ("backward_commit", "healthy_control"):
        assert (out / f"{name}.html").stat().st_size > 1_000_000  # plotly.js is inside
        assert f"{name}.html" in index
        manifest = json.loads((out / f"{name}.manifest.json").read_text(encoding="utf-8"))
        assert all(len(entry["sha256"]) == 64 for entry in manifest["inputs"] if entry["kind"] == "log")
    findings = json.loads((out / "backward_commit.json").read_text(encoding="utf-8"))["findings"]
    assert [(f["detector"], f["offset_from"], f["offset_to"]) for f in findings] == [("backward_commit", 4, 7)]
