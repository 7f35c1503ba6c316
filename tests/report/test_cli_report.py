"""``forensics batch`` as a user runs it: one Spark session, one report per incident, an index."""

from __future__ import annotations

import json
import subprocess
import sys

from .conftest import SAMPLES


def test_batch_writes_a_report_per_incident_and_an_index(tmp_path):
    out = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "forensics.cli", "batch", str(SAMPLES / "backward_commit"), str(SAMPLES / "healthy_control"),
         "-o", str(out), "--master", "local[2]"],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Index written to" in done.stdout
    index = (out / "index.html").read_text(encoding="utf-8")
    for name in ("backward_commit", "healthy_control"):
        assert (out / f"{name}.html").stat().st_size > 1_000_000  # plotly.js is inside
        assert f"{name}.html" in index
        manifest = json.loads((out / f"{name}.manifest.json").read_text(encoding="utf-8"))
        assert all(len(entry["sha256"]) == 64 for entry in manifest["inputs"] if entry["kind"] == "log")
    findings = json.loads((out / "backward_commit.json").read_text(encoding="utf-8"))["findings"]
    assert [(f["detector"], f["offset_from"], f["offset_to"]) for f in findings] == [("backward_commit", 5, 7)]
