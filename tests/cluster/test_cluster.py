"""The toolkit on a real cluster: a standalone master + worker, and a Spark Connect server.

``forensics analyze`` runs as a user would run it (a subprocess, ``--master URL``) and its JSON
must equal the embedded ``local`` result for the same incident, except ``spark.master``.
They are part of the default run; ``.venv/bin/pytest -m cluster`` runs them alone. (They
found that SPARK_TESTING, which the suite then set, turns on Spark's eager shuffle clean-up,
which stalled standalone runs; ``forensics.spark.CLASSIC_CONF`` pins it off.)
Input files are read by the executors through local paths: the worker is on this machine.
The services and runs are one background job (``tests.background``); these tests run last.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from forensics.analyze import analyze
from tests import background
from tests.cluster.conftest import ConnectServer, Standalone, run_analyze, service_env, work_dir

pytestmark = pytest.mark.cluster

INCIDENT = str(Path(__file__).resolve().parents[1] / "data" / "model" / "cooperative_3_6")  # several hosts, logs only


def run_on_clusters() -> dict:
    """``forensics analyze INCIDENT`` on a standalone master with one worker, then on a Spark
    Connect server (one service at a time, each stopped after its run): the results, and the
    applications the master saw. Run in the background (``tests.background``)."""
    runs = {}
    with tempfile.TemporaryDirectory(prefix="forensics-cluster-") as scratch:
        work = work_dir(Path(scratch), "standalone")
        cluster = Standalone(work)
        try:
            master = cluster.ready()
            runs["standalone"], runs["standalone_stderr"] = run_analyze(
                master, [INCIDENT], work / "standalone.json", service_env(work), cluster.logs
            )
            runs["master"] = master
            state = cluster.state()
            runs["apps"] = [app["name"] for app in state["completedapps"] + state["activeapps"]]
        finally:
            cluster.stop()
        work = work_dir(Path(scratch), "connect")
        server = ConnectServer(work)
        try:
            runs["connect"], runs["connect_stderr"] = run_analyze(
                server.ready(), [INCIDENT], work / "connect.json", service_env(work), server.service.tail
            )
        finally:
            server.stop()
    return runs


BACKGROUND = (run_on_clusters,)


@pytest.fixture(scope="module")
def local_result(spark) -> dict:
    """The embedded-Spark result, shaped as the CLI writes it (``json.dumps(..., default=str)``)."""
    result = json.loads(json.dumps(analyze(spark, [INCIDENT]), default=str))
    assert result["rebalances"] and result["ownership"], "the incident should give a non-trivial result"
    return result


def without_session(result: dict) -> dict:
    """The result without what tells the sessions apart: the master, and the number of Spark jobs
    (a Connect client cannot count them, and a cluster may plan other adaptive stages)."""
    return {**result, "spark": {k: v for k, v in result["spark"].items() if k not in ("master", "jobs")}}


def assert_same_result(remote: dict, local: dict) -> None:
    remote, local = without_session(remote), without_session(local)
    assert list(remote) == list(local)
    for field in local:  # one field at a time, so a failure names it
        assert remote[field] == local[field], f"JSON field {field!r} differs from the local[*] result"


def test_standalone_cluster_gives_the_local_result(local_result):
    runs = background.result(run_on_clusters)
    assert runs["standalone"]["spark"]["master"] == runs["master"]
    assert_same_result(runs["standalone"], local_result)
    assert runs["apps"] == ["kafka-forensics"], "the run should have been an application of this master"


def test_spark_connect_gives_the_local_result(local_result):
    assert_same_result(background.result(run_on_clusters)["connect"], local_result)


@pytest.mark.parametrize("service", ["standalone", "connect"])
def test_a_cluster_run_prints_nothing_on_stderr(service):
    """As on ``local[*]`` (``tests/test_quiet.py``): no JVM chatter, no client warnings."""
    assert background.result(run_on_clusters)[f"{service}_stderr"] == ""
