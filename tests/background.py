"""Long work in processes of its own (real clusters, a class archive, a cold CLI run), run on
one lane beside the suite.

The suite's session leaves part of the two cores idle (py4j round trips, Python between jobs):
a serial run kept the machine 70-80 % busy. A job that only waits for processes of its own
fills that share. A test module lists its jobs in ``BACKGROUND``; when one of its tests is
collected, ``conftest`` submits them and moves the module's tests to the end of the run, so
that the jobs have the suite's length to finish. A test takes its job's result with ``result``,
which re-raises what the job raised (``pytest.fail`` included).

The lane is one daemon thread that runs the jobs in the order they were submitted: children
tied to it (``cluster.conftest._die_with_parent``) die with the test process. Jobs start their
processes with ``ENVIRONMENT``, not ``os.environ``, which tests running meanwhile change.
"""

from __future__ import annotations

import os
import queue
import threading
from concurrent.futures import Future
from typing import Callable

ENVIRONMENT = dict(os.environ)
"""The environment as the suite started (imported at collection, before any test ran)."""
_JOBS: dict[str, Future] = {}
_QUEUE: queue.Queue = queue.Queue()
_LOCK = threading.Lock()


def submit(job: Callable[[], object]) -> None:
    """Queue ``job`` (once: again is a no-op) on the lane."""
    key = _key(job)
    with _LOCK:
        if key in _JOBS:
            return
        _JOBS[key] = Future()
        if len(_JOBS) == 1:
            threading.Thread(target=_run_lane, name="tests-background", daemon=True).start()
    _QUEUE.put((job, _JOBS[key]))


def result(job: Callable[[], object]):
    """What ``job`` returned, after waiting for it (it is run here if nothing submitted it)."""
    submit(job)
    return _JOBS[_key(job)].result()


def _key(job: Callable[[], object]) -> str:
    return f"{job.__module__}.{job.__qualname__}"


def _run_lane() -> None:
    while True:
        job, future = _QUEUE.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(job())
        except BaseException as failure:  # noqa: B036 - pytest.fail raises an OutcomeException
            future.set_exception(failure)
