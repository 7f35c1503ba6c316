"""Running an analysis's jobs: counting them, running independent calls at once, and building
Columns once per Spark context.
"""

from __future__ import annotations

import itertools
import os
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import wraps
from typing import Callable, Iterator, TypeVar

from . import handles


@contextmanager
def counting_jobs(spark) -> Iterator[Callable[[], int | None]]:
    """Count the Spark jobs started inside the block: yields a function giving the count so far.

    The jobs run under a job group of their own, and Spark's status store (fed by its
    ``AppStatusListener``) lists the group's jobs; an adaptive query runs each shuffle stage as
    a job of its own, and so does each broadcast, so all of those count. The caller's job group
    is restored afterwards. On Spark Connect, which has no status tracker here, the count is None.
    """
    context = getattr(spark, "sparkContext", None) if not handles.is_connect(spark) else None
    if context is None:
        yield lambda: None
        return
    previous = {key: context.getLocalProperty(key) for key in _JOB_GROUP_PROPERTIES}
    group = f"forensics-{os.getpid()}-{next(_JOB_GROUPS)}"
    context.setJobGroup(group, "forensics analysis")
    try:
        yield lambda: len(context.statusTracker().getJobIdsForGroup(group))
    finally:
        for key, value in previous.items():
            context.setLocalProperty(key, value)


_JOB_GROUPS = itertools.count(1)
_JOB_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def concurrently(spark, *calls: Callable[[], object]) -> list:
    """The results of the argument-less ``calls``, in order, run at once: the first in this
    thread, the others on a pool, each carrying this thread's Spark properties (the job group
    that ``counting_jobs`` counts), so that the driver plans one call's queries while another's
    run. The calls share the session's SQL settings: one that changes them changes them for all."""
    from pyspark.util import inheritable_thread_target

    if len(calls) < 2:
        return [call() for call in calls]
    with ThreadPoolExecutor(max_workers=len(calls) - 1) as pool:
        others = [pool.submit(inheritable_thread_target(spark)(call)) for call in calls[1:]]
        first = calls[0]()
        return [first, *[future.result() for future in others]]


Built = TypeVar("Built")
_CONNECT_COLUMNS = type("ConnectColumns", (), {})()
"""The owner of the Columns built for Spark Connect, which are plain Python, bound to no session."""
KEPT_BUILDS = 64
"""Builds of one function that ``built_once`` keeps per Spark context; the oldest go beyond it."""


def built_once(build: Callable[..., Built]) -> Callable[..., Built]:
    """``build``, a pure function of hashable arguments that returns Columns, called once per
    Spark context and arguments: later calls return the same Columns. On a classic session each
    function that builds a Column is a py4j call, and a layout table's recognisers take thousands
    of them. A new context (a session stopped and started again) builds anew."""
    kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @wraps(build)
    def once(*args):
        from pyspark.sql.utils import is_remote

        owner = _CONNECT_COLUMNS if is_remote() else handles.active_context()
        if owner is None:
            return build(*args)
        builds = kept.setdefault(owner, {})
        if args not in builds:
            if len(builds) >= KEPT_BUILDS:
                del builds[next(iter(builds))]
            builds[args] = build(*args)
        return builds[args]

    return once
