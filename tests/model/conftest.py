"""Model fixtures: each multi-host scenario under tests/data/model, modelled once per module."""

from __future__ import annotations

import pytest

from forensics.model import Model
from tests.helpers import ingest_paths, small_model


def model_of(spark, data_dir, scenario: str) -> Model:
    return small_model(spark, ingest_paths(spark, data_dir / "model" / scenario).records)


@pytest.fixture(scope="module")
def model(request, spark, data_dir) -> Model:
    """The model of the scenario named by the test module's ``SCENARIO`` (cached, then released)."""
    modelled = model_of(spark, data_dir, request.module.SCENARIO)
    yield modelled
    modelled.unpersist()
    spark.catalog.clearCache()


def rows(frame, *columns, order=None) -> list[tuple]:
    """The given columns of every row, sorted (times as HH:MM:SS.mmm text)."""

    def show(value):
        return value.strftime("%H:%M:%S.%f")[:-3] if hasattr(value, "strftime") else value

    result = [tuple(show(r[c]) for c in columns) for r in frame.select(*columns).collect()]
    return sorted(result, key=lambda row: tuple("" if v is None else str(v) for v in row))


CC = "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)"


def line(ts: str, level: str, client: str, text: str, logger: str = CC) -> str:
    """A consumer's log4j line of 2024-06-01 09:``ts`` in group orders-app."""
    return f"[2024-06-01 09:{ts}] {level} [Consumer clientId={client}, groupId=orders-app] {text} {logger}"


def generation(n: int, member: str) -> str:
    return f"Generation{{generationId={n}, memberId='{member}', protocol='range'}}"
