"""``benchmarks/driver_profile.py``: the stacks it reads from ``perf script`` and the phase it
names for each (no perf, no Spark: text as ``perf script -F comm,tid,ip,sym`` writes it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "driver_profile.py"
_SPEC = importlib.util.spec_from_file_location("driver_profile", _PATH)
driver_profile = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(driver_profile)

PERF_SCRIPT = """\
Thread-3 23268 
\t    7fee19a1 Unsafe_AllocateInstance
\t    7fee19a2 java.lang.Object jdk.internal.misc.Unsafe.allocateInstance(java.lang.Class)
\t    7fee19a3 org.apache.spark.sql.catalyst.optimizer.CollapseProject$.apply(org.apache.spark.sql.catalyst.plans.logical.LogicalPlan)
\t    7fee19a4 org.apache.spark.sql.catalyst.plans.logical.LogicalPlan org.apache.spark.sql.catalyst.analysis.Analyzer.executeAndCheck(org.apache.spark.sql.catalyst.plans.logical.LogicalPlan, org.apache.spark.sql.catalyst.QueryPlanningTracker)
\t    7fee19a5 Interpreter

dag-scheduler-event-loop 23300 
\t    7fee19b1 org.apache.spark.scheduler.DAGScheduler.submitStage(org.apache.spark.scheduler.Stage)

Thread-6 23306 
\t    7fee19c1 Interpreter
\t    7fee19c2 void py4j.commands.CallCommand.execute(java.lang.String, java.io.BufferedReader, java.io.BufferedWriter)

Thread-3 23268 
\t    7fee19d1 org.apache.xbean.asm9.ClassReader.readCode(org.apache.xbean.asm9.MethodVisitor, org.apache.xbean.asm9.Context, int)
\t    7fee19d2 void org.apache.spark.util.ClosureCleaner$.clean(java.lang.Object, boolean, scala.collection.mutable.Map)
\t    7fee19d3 java.lang.Object org.apache.spark.SparkContext.runJob(org.apache.spark.rdd.RDD, scala.Function1, scala.reflect.ClassTag)
"""


def test_samples_keep_the_py4j_threads_stacks_leaf_first():
    stacks = driver_profile.samples(PERF_SCRIPT)
    assert len(stacks) == 3  # the scheduler's thread is not the driver side of the analysis
    assert stacks[0][0] == "Unsafe_AllocateInstance"
    assert stacks[0][-1] == "Interpreter"
    assert stacks[1] == [
        "Interpreter",
        "void py4j.commands.CallCommand.execute(java.lang.String, java.io.BufferedReader, java.io.BufferedWriter)",
    ]


def test_the_innermost_phase_names_a_sample():
    lambda_in_optimizer, py4j_call, closure_cleaning = driver_profile.samples(PERF_SCRIPT)
    assert driver_profile.phase(lambda_in_optimizer) == "optimizer"  # an optimizer rule run inside an analysis
    assert driver_profile.phase(py4j_call) == "py4j (commands, reflection, sockets)"
    assert driver_profile.phase(closure_cleaning) == "running a job"
    assert driver_profile.phase(["java.util.HashMap.get(java.lang.Object)"]) == "other"
