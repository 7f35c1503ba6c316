"""Every committed lab run (lab/runs/<scenario>/<client>-<version>/) analysed as it is, and its
findings compared with the truth the lab recorded: lost and duplicated ranges to the offset, no
loss or duplication that did not happen, no forbidden verdict, the expected rebalances.

A run where the toolkit is known to be wrong is listed in lab/DIFFERENCES.md and marked
xfail(strict=True) with the difference's name, so that the fix turns it into a failure to update.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lab import truth
from lab.compare import compare, known_differences
from lab.run import RUNS, run_dirs
from tests.helpers import lab_run_analysed

CLIENTS = {"java-consumer", "kafka-streams", "librdkafka", "kafka-python", "aiokafka", "kafkajs", "franz-go", "sarama", "broker"}
RUN_DIRS = run_dirs()
KNOWN = known_differences()
DIFFERENCES = Path(RUNS).parent / "DIFFERENCES.md"


def _label(run_dir: Path) -> str:
    return f"{run_dir.parent.name}/{run_dir.name}"


def _titles() -> dict[str, str]:
    titles = {}
    if DIFFERENCES.exists():
        for line in DIFFERENCES.read_text().splitlines():
            if line.startswith("## "):
                key, _, title = line[3:].partition(":")
                titles[key.strip()] = title.strip()
    return titles


def _params():
    titles = _titles()
    for run_dir in RUN_DIRS:
        label = _label(run_dir)
        marks = []
        if label in KNOWN:
            reason = f"{KNOWN[label]}: {titles.get(KNOWN[label], '')} (lab/DIFFERENCES.md)"
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        yield pytest.param(run_dir, id=label, marks=marks)


def test_there_are_committed_runs():
    assert RUN_DIRS, f"no lab runs under {RUNS}"


@pytest.mark.parametrize("run_dir", [pytest.param(p, id=_label(p)) for p in RUN_DIRS])
def test_truth_is_what_the_journals_say(run_dir):
    """truth.json's lost/duplicated are recomputed from the committed journals, and its keys are the lab's."""
    recorded = truth.load_truth(run_dir)
    assert set(truth.TRUTH_KEYS) <= set(recorded)
    assert recorded["client"] in CLIENTS
    assert run_dir.name == f"{recorded['client']}-{recorded['version']}" or run_dir.name.startswith(
        f"{recorded['client']}-{recorded['version']}-"
    )
    assert recorded["scenario"] == run_dir.parent.name
    lost, duplicated = truth.lost_and_duplicated(run_dir)
    assert (recorded["lost"], recorded["duplicated"]) == (lost, duplicated)
    assert truth.produced(run_dir), "a run without produced records proves nothing"


@pytest.mark.parametrize("run_dir", list(_params()))
def test_analysis_agrees_with_truth(spark, run_dir):
    result = lab_run_analysed(spark, run_dir)
    skipped = {Path(i["path"]).name for i in result["inputs"] if (i.get("problem") or "").startswith("skipped")}
    assert "truth.json" in skipped and not any(
        Path(i["path"]).parent.name == "journal" and not (i.get("problem") or "").startswith("skipped") for i in result["inputs"]
    )
    problems = compare(truth.load_truth(run_dir), result)
    assert not problems, "\n".join(problems)


def test_every_known_difference_names_a_committed_run():
    labels = {_label(p) for p in RUN_DIRS}
    assert not set(KNOWN) - labels, f"lab/DIFFERENCES.md names runs that are not committed: {sorted(set(KNOWN) - labels)}"
