"""Master resolution and the Java check of the session factory."""

from __future__ import annotations

import pytest

from forensics.errors import ForensicsError
from forensics.spark import MASTER_ENV, java_major_version, resolve_master


def test_default_master_is_local_star(monkeypatch):
    monkeypatch.delenv(MASTER_ENV, raising=False)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert resolve_master() == "local[*]"


@pytest.mark.parametrize("url", ["local[2]", "spark://10.1.2.3:7077", "yarn", "k8s://https://api:6443", "sc://127.0.0.1:15002"])
def test_any_master_is_accepted_from_the_environment(monkeypatch, url):
    monkeypatch.setenv(MASTER_ENV, url)
    assert resolve_master() == url


def test_explicit_master_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv(MASTER_ENV, "yarn")
    assert resolve_master("local[1]") == "local[1]"


def test_spark_remote_is_honoured(monkeypatch):
    monkeypatch.delenv(MASTER_ENV, raising=False)
    monkeypatch.setenv("SPARK_REMOTE", "sc://localhost")
    assert resolve_master() == "sc://localhost"


def test_unknown_master_is_a_clear_error():
    with pytest.raises(ForensicsError, match="Unknown Spark master"):
        resolve_master("mainframe")


def test_java_version_of_the_machine_is_read():
    assert java_major_version() >= 17


def test_no_java_reads_as_none(tmp_path):
    assert java_major_version(str(tmp_path / "java")) is None


@pytest.mark.parametrize(
    "url, endpoints",
    [
        ("spark://10.0.0.5:7077", [("10.0.0.5", 7077)]),
        ("spark://m1:7077,m2:7078", [("m1", 7077), ("m2", 7078)]),
        ("spark://master", [("master", 7077)]),
        ("sc://connect.example", [("connect.example", 15002)]),
        ("sc://localhost:15010/;token=abc", [("localhost", 15010)]),
        ("local[2]", []),
        ("yarn", []),
    ],
)
def test_master_endpoints(url, endpoints):
    from forensics.spark import master_endpoints

    assert master_endpoints(url) == endpoints
