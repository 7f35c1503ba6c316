"""The driver JVM's start-up chatter (``WARNING: Using incubator modules``, log4j banners,
NativeCodeLoader) never reaches the CLI's stderr nor a notebook's outputs; real errors do."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from forensics.report.publish import NOTEBOOKS
from forensics.spark import JVM_STDERR_THREAD, is_jvm_chatter
from tests import background

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "cli" / "kafka-7672"

CHATTER = (
    "WARNING: Using incubator modules: jdk.incubator.vector",
    "WARNING: A terminally deprecated method in sun.misc.Unsafe has been called",
    "Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties",
    'Setting default log level to "WARN".',
    "To adjust logging level use sc.setLogLevel(newLevel). For SparkR, use setLogLevel(newLevel).",
    "25/11/23 10:00:00 WARN NativeCodeLoader: Unable to load native-hadoop library for your platform... using builtin-java classes where applicable",
    "26/11/23 23:39:38 WARN Utils: Your hostname, vm, resolves to a loopback address: 127.0.0.1; using 192.0.2.2 instead (on interface eth0)",
    "Picked up JAVA_TOOL_OPTIONS: -XX:MaxRAMPercentage=75.0",
    "NOTE: Picked up JDK_JAVA_OPTIONS: -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
)
NOT_CHATTER = (
    "10:00:00 ERROR Executor: Exception in task 0.0 in stage 1.0 (TID 1)",
    "25/11/23 10:00:00 ERROR SparkContext: Error initializing SparkContext.",
    "Error: Could not find or load main class org.apache.spark.deploy.SparkSubmit",
    "java.lang.OutOfMemoryError: Java heap space",
)


@pytest.mark.parametrize("line", CHATTER)
def test_start_up_lines_are_chatter(line):
    assert is_jvm_chatter(line + "\n")


@pytest.mark.parametrize("line", NOT_CHATTER)
def test_errors_are_not_chatter(line):
    assert not is_jvm_chatter(line + "\n")


def test_a_child_started_in_the_block_keeps_its_errors_and_loses_its_chatter():
    """A child that inherits stderr in the block, as the JVM does; its lines pass the filter."""
    child = "printf 'WARNING: Using incubator modules: jdk.incubator.vector\\nreal error\\n' >&2"
    code = (
        "import subprocess, sys, threading\n"
        "from forensics.spark import jvm_stderr_without_chatter\n"
        "with jvm_stderr_without_chatter():\n"
        f"    subprocess.run(['sh', '-c', {child!r}])\n"
        "    print('python stderr inside', file=sys.stderr)\n"
        f"[t.join(10) for t in threading.enumerate() if t.name == {JVM_STDERR_THREAD!r}]\n"
        "print('python stderr after', file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["real error", "python stderr inside", "python stderr after"]


def test_forensics_analyze_prints_nothing_on_stderr(cli_sample_run):
    assert cli_sample_run.returncode == 0, cli_sample_run.stderr
    assert cli_sample_run.stdout.startswith("{") and cli_sample_run.stdout.rstrip().endswith("}")
    assert cli_sample_run.stderr == ""


def notebook_that_starts_spark() -> list[dict]:
    """The report notebook run headless on ``SAMPLE`` by papermill in a process of its own, its
    kernel (this venv's Python) analysing the sample itself in a JVM of its own, as in
    JupyterLab: the outputs of the executed notebook. Run in the background (``tests.background``)."""
    run = (
        "import sys, papermill\n"
        "notebook, executed, sample, cwd = sys.argv[1:]\n"
        "papermill.execute_notebook(notebook, executed, parameters={'paths': [sample]}, kernel_name='python3', cwd=cwd,\n"
        "                           progress_bar=False, log_output=False, execution_timeout=600)\n"
    )
    environment = dict(background.ENVIRONMENT)
    environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + environment.get("PATH", "")  # the python3 kernel: this venv's
    with tempfile.TemporaryDirectory(prefix="forensics-quiet-") as scratch:
        executed = Path(scratch) / "incident_report.ipynb"
        done = subprocess.run(
            [sys.executable, "-c", run, str(NOTEBOOKS / "incident_report.ipynb"), str(executed), str(SAMPLE), scratch],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=ROOT,
            env=environment,
        )
        if done.returncode != 0:
            pytest.fail(f"papermill failed:\n{done.stderr[-4000:]}")
        return [output for cell in nbformat.read(str(executed), as_version=4).cells for output in cell.get("outputs", [])]


BACKGROUND = (notebook_that_starts_spark,)


def test_a_notebook_that_starts_spark_shows_no_jvm_warnings():
    outputs = background.result(notebook_that_starts_spark)
    assert "skipped_restore" in str(outputs)  # the kernel did analyse the sample
    stderr = [output["text"] for output in outputs if output.get("output_type") == "stream" and output.get("name") == "stderr"]
    assert not [text for text in stderr if "WARNING" in text]
