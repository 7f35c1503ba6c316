"""The toolkit on a real cluster: a standalone master + worker, and a Spark Connect server.

``forensics analyze`` runs as a user would run it (a subprocess, ``--master URL``) and its JSON
must equal the embedded ``local`` result for the same incident, except ``spark.master``.
They are part of the default run; ``.venv/bin/pytest -m cluster`` runs them alone. (They found that SPARK_TESTING turns on Spark's eager shuffle clean-up, which
stalled standalone runs; ``forensics.spark.CLASSIC_CONF`` pins it off.)
Input files are read by the executors through local paths: the worker is on this machine.
"""

from __future__ import annotations

import json

import pytest

from forensics.analyze import analyze
from tests.cluster.conftest import run_analyze, service_env

pytestmark = pytest.mark.cluster

INCIDENT = "model/cooperative_3_6"  # several hosts, logs only


@pytest.fixture(scope="module")
def incident(data_dir) -> list[str]:
    return [str(data_dir / INCIDENT)]


@pytest.fixture(scope="module")
def local_result(spark, incident) -> dict:
    """The embedded-Spark result, shaped as the CLI writes it (``json.dumps(..., default=str)``)."""
    result = json.loads(json.dumps(analyze(spark, incident), default=str))
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


def test_standalone_cluster_gives_the_local_result(standalone, local_result, incident, tmp_path):
    master = standalone.ready()  # the JVMs started while local_result ran
    result = run_analyze(master, incident, tmp_path / "standalone.json", service_env(tmp_path), standalone.logs)
    assert result["spark"]["master"] == master
    assert_same_result(result, local_result)
    state = standalone.state()
    apps = [app["name"] for app in state["completedapps"] + state["activeapps"]]
    assert apps == ["kafka-forensics"], "the run should have been an application of this master"


def test_spark_connect_gives_the_local_result(connect_server, local_result, incident, tmp_path):
    remote = connect_server.ready()
    result = run_analyze(remote, incident, tmp_path / "connect.json", service_env(tmp_path), connect_server.service.tail)
    assert_same_result(result, local_result)
