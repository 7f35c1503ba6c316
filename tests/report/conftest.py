"""One analysis per test session (shared ``spark`` fixture) of two sample incidents and a canary
incident whose client id, topic, file name and an unparsed line carry HTML/JS injection canaries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
ARTIFACTS = ROOT / "test-artifacts"

SCRIPT_CANARY = "<script>window.__pwned=1;alert(1)</script>"
IMG_CANARY = "<img/src=x/onerror=window.__pwned=1>"
JS_URL_CANARY = "javascript:window.__pwned=1"
FILE_CANARY = "app<img src=x onerror=window.__pwned=1>.log"
CANARY_TOPIC = f"orders{IMG_CANARY}"
CANARY_CLIENT = f"consumer-{SCRIPT_CANARY}-1"
UNPARSED_CANARY = f'{JS_URL_CANARY} {SCRIPT_CANARY} <img src=x onerror="window.__pwned=1"> <a href="{JS_URL_CANARY}">x</a>'


def write_canary_incident(target: Path) -> Path:
    """``backward_commit`` with its topic and client id replaced by canaries, a canary file name,
    and a leading line no layout understands (it lands in the unparsed samples)."""
    for source in sorted((SAMPLES / "backward_commit").glob("*/app.log")):
        text = source.read_text(encoding="utf-8")
        text = text.replace("orders-commands-a6b24e", CANARY_TOPIC).replace("consumer-orders-enricher-a6b24e-1", CANARY_CLIENT)
        host = target / f"canary-{source.parent.name}"
        host.mkdir(parents=True, exist_ok=True)
        (host / FILE_CANARY).write_text(UNPARSED_CANARY + "\n" + text, encoding="utf-8")
    return target


@pytest.fixture(scope="session")
def incident_dirs(tmp_path_factory) -> list[Path]:
    canary = write_canary_incident(tmp_path_factory.mktemp("canary") / "canary_incident")
    return [SAMPLES / "skipped_restore", SAMPLES / "reset_to_latest_gap", canary]


@pytest.fixture(scope="session")
def analysis_json(spark, incident_dirs, tmp_path_factory) -> Path:
    """The JSON result of one analysis of all test incidents, as `forensics analyze --json` writes it."""
    from forensics.analyze import analyze

    result = analyze(spark, [str(d) for d in incident_dirs])
    path = tmp_path_factory.mktemp("analysis") / "analysis.json"
    path.write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def result(analysis_json) -> dict:
    return json.loads(analysis_json.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def report_files(analysis_json, result, tmp_path_factory):
    """The HTML report written from the shared analysis (papermill + nbconvert, no Spark)."""
    from forensics.report.publish import write_report

    out = tmp_path_factory.mktemp("report") / "report.html"
    files = write_report(result, out, f"Test incidents {SCRIPT_CANARY}", {"tz": "UTC"})
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(files.html, ARTIFACTS / "test-report.html")
    return files
