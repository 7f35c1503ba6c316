"""Application noise: the app's own INFO/WARN/DEBUG/ERROR lines, some with Java stack traces.

Real incident logs are mostly the application talking about its work; the Kafka lines that
tell the rebalance story are a small share of them. Nothing here names Kafka (no
``kafka`` in a record's first line), so the ingest counts these as irrelevant records.
"""

from __future__ import annotations

import random

from .logfile import HostLog, Record

_INFO = [
    "processed batch {n} ({k} records) in {ms} ms",
    "flushed {k} rows to {store} in {ms} ms",
    "request {rid} completed with status 200 in {ms} ms",
    "cache hit ratio {pct}% over the last {k} lookups",
    "scheduled job {job} finished in {ms} ms",
    "health check ok (heap {pct}% used)",
]
_DEBUG = [
    "lookup {rid} served from cache",
    "batch {n}: {k} records buffered, waiting for {ms} ms",
    "connection pool to {store}: {k} active, {pct} idle",
]
_WARN = [
    "slow call to {svc}: {ms} ms (threshold 1000 ms)",
    "retrying request {rid} to {svc} (attempt {a} of 5)",
    "GC pause of {ms} ms observed",
]
_ERROR = [
    ("request {rid} to {svc} failed", "java.net.SocketTimeoutException: Read timed out"),
    ("could not enrich record {rid}", "java.lang.IllegalStateException: missing reference data for {rid}"),
    ("write to {store} failed, will retry", "java.io.IOException: Connection reset by peer"),
]
_FRAMES = [
    "java.base/java.net.SocketInputStream.socketRead0(Native Method)",
    "java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)",
    "okhttp3.internal.http1.Http1ExchangeCodec.readResponseHeaders(Http1ExchangeCodec.java:229)",
    "java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1128)",
    "java.base/java.lang.Thread.run(Thread.java:829)",
]


class Noise:
    """Noise vocabulary of one application (its package, services and stores)."""

    def __init__(self, package: str, classes: list[str], services: list[str], stores: list[str]):
        self.package, self.classes, self.services, self.stores = package, classes, services, stores

    def _fill(self, text: str, rng: random.Random) -> str:
        return text.format(
            n=rng.randint(1, 99999),
            k=rng.randint(1, 5000),
            ms=rng.randint(2, 4000),
            pct=rng.randint(1, 99),
            rid=f"{rng.getrandbits(32):08x}",
            store=rng.choice(self.stores),
            svc=rng.choice(self.services),
            job=rng.choice(["reconcile", "compact", "export", "refresh-rates"]),
            a=rng.randint(2, 4),
        )

    def record(self, ts: int, rng: random.Random, thread: str) -> Record:
        cls = rng.choice(self.classes)
        logger = f"{self.package}.{cls}"
        roll = rng.random()
        if roll < 0.04:
            text, exc = rng.choice(_ERROR)
            text = self._fill(text, rng)
            frames = [f"\tat {self.package}.{cls}.{rng.choice(['call', 'process', 'write', 'enrich'])}({cls}.java:{rng.randint(20, 400)})"]
            frames += [f"\tat {frame}" for frame in rng.sample(_FRAMES, rng.randint(2, 4))]
            frames.append(f"\t... {rng.randint(3, 19)} more")
            return Record(ts, "ERROR", logger, text, thread, (self._fill(exc, rng), *frames))
        if roll < 0.14:
            return Record(ts, "WARN", logger, self._fill(rng.choice(_WARN), rng), thread)
        if roll < 0.30:
            return Record(ts, "DEBUG", logger, self._fill(rng.choice(_DEBUG), rng), thread)
        return Record(ts, "INFO", logger, self._fill(rng.choice(_INFO), rng), thread)

    def fill(self, host: HostLog, start: int, end: int, count: int, rng: random.Random, thread: str = "worker-1") -> None:
        """Add ``count`` noise records spread over ``[start, end)`` to ``host``."""
        for _ in range(count):
            host.add(self.record(rng.randint(start, max(start, end - 1)), rng, thread))
