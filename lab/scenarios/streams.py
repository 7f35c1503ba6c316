"""Kafka Streams in the lab: a count per key into a RocksDB store with a changelog, run by
real Streams instances (3.9 and 4.4; 4.4 also on the KIP-1071 `streams` rebalance protocol),
with the faults behind the restore incidents of seed 000 (KAFKA-7672) injected for real.

The driver (`lab/drivers/java/streams/StreamsDriver.java`) journals each processing attempt
(`journal/attempts-<instance>.jsonl`) and forwards a journal record to an output topic; the
records read back from that topic with read_committed are what took effect, and become
`journal/processed-<thread>.jsonl` (the truth): an attempt aborted under exactly-once is not
processing that happened. Each effective record carries the key's count before and after it, so a
store that lost state shows as a broken count chain: truth.json's `state_breaks` lists every break
and `store_counts` each key's records and final count.
"""

from __future__ import annotations

import shutil
import threading
import time
from datetime import datetime
from pathlib import Path

from .. import truth
from ..broker import Broker
from . import scenario
from .streams_lab import APP, CLIENT, VARIANTS, StreamsLab, broker_generations, broker_overrides, session_expiries

RECORDS = 240
"""Records per produce step: enough for every task to have state, few enough to stay small."""

CLIENTS = [(CLIENT, name) for name in VARIANTS]
NO_LOSS = ("loss", "duplication")


def _run(
    run_dir: Path,
    version: str,
    scenario_name: str,
    steps,
    *,
    guarantee: str,
    standbys: int = 0,
    expect_findings=(),
    forbid_verdicts=NO_LOSS,
    notes: str = "",
    complete: bool = False,
) -> dict:
    """Start a broker, let `steps(lab)` drive the instances, then write the journals and truth.

    The instances the fault leaves to the coordinator's session expiry (`lab.expired`: SIGKILL,
    or a clean close on the classic protocol) must be exactly those the broker logged as expired
    before the run's final stop; truth expects a `session_timeout` finding for each.
    """
    variant = VARIANTS[version]
    run_dir = Path(run_dir)
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    with Broker(variant.broker, run_dir, **broker_overrides(variant)) as broker:
        lab = StreamsLab(run_dir, variant, broker, guarantee, standbys)
        try:
            lab.setup_topics()
            action = steps(lab)
            lab.dump_offsets()
            # everything was processed and committed: read it while the run stands
            records = lab.effective_complete() if complete else lab.effective()
            final_stop = datetime.now()
            for instance in list(lab.procs):
                lab.stop(instance, final=True)
        finally:
            lab.close()
    shutil.rmtree(run_dir / ".broker-aux", ignore_errors=True)
    breaks, counts = lab.write_journals(records)
    lab.attempts_compacted()
    logged = session_expiries(run_dir / "broker" / "server.log", before=final_stop)
    if logged != sorted(set(lab.expired)):
        raise RuntimeError(f"the coordinator expired the sessions of {logged}, the scenario expected {sorted(set(lab.expired))}")
    expiries = [{"detector": "session_timeout", "group": APP, "host": instance} for instance in sorted(set(lab.expired))]
    return truth.write_truth(
        run_dir,
        scenario=scenario_name,
        client=CLIENT,
        version=version,
        expect_findings=expiries + list(expect_findings),
        forbid_verdicts=list(forbid_verdicts),
        expect_rebalance_generations=broker_generations(run_dir / "broker" / "server.log"),
        broker_version=variant.broker,
        settings={"processing.guarantee": guarantee, "num.standby.replicas": standbys, "group.protocol": variant.protocol},
        state_breaks=breaks,
        store_counts=counts,
        notes=" ".join(filter(None, [notes, action])),
    )


@scenario("streams_healthy_rolling_restart", CLIENTS)
def healthy_rolling_restart(run_dir: Path, client: str, version: str) -> dict:
    """Two instances; each in turn stopped cleanly and restarted while records flow: a control."""

    def steps(lab: StreamsLab) -> str:
        lab.start("s1")
        lab.start("s2")
        lab.wait_state(["s1", "s2"])
        lab.produce(RECORDS)
        lab.wait_processed()
        for instance in ("s1", "s2"):
            lab.stop(instance)
            lab.wait_gone(instance)
            lab.produce(RECORDS // 2)
            lab.start(instance)
            lab.wait_state([instance])
            lab.wait_processed()
        return ""

    return _run(
        run_dir,
        version,
        "streams_healthy_rolling_restart",
        steps,
        guarantee="at_least_once",
        notes="Two instances, each stopped with SIGTERM (clean close) and restarted in turn while records flow.",
    )


@scenario("streams_instance_killed", CLIENTS)
def instance_killed(run_dir: Path, client: str, version: str) -> dict:
    """Two instances, no standbys; s1 is killed with SIGKILL after its last commit: once its session
    expires s2 takes its tasks and restores their stores from the changelogs (a full restore on
    another instance: needed, not redundant). Nothing is lost or processed twice."""

    def steps(lab: StreamsLab) -> str:
        lab.start("s1")
        lab.start("s2")
        lab.wait_state(["s1", "s2"])
        lab.produce(RECORDS)
        lab.wait_processed()
        lab.kill("s1")
        lab.produce(RECORDS // 2)
        lab.wait_processed()
        return ""

    return _run(
        run_dir,
        version,
        "streams_instance_killed",
        steps,
        guarantee="at_least_once",
        notes="s1 SIGKILLed when idle after a commit; s2 takes s1's tasks and restores them from their changelogs.",
    )


@scenario("streams_checkpoint_deleted_eos", CLIENTS)
def checkpoint_deleted_eos(run_dir: Path, client: str, version: str) -> dict:
    """Exactly-once v2, one instance: stopped cleanly, its tasks' changelog offsets removed from
    disk while the RocksDB stores stay (3.9: the `.checkpoint` files; 4.4 keeps them inside the
    store (KIP-1035), so there the task directories are wiped), restarted. What Streams does with
    a store that has no checkpoint under EOS (KAFKA-7672's trigger) is what the run records."""

    def steps(lab: StreamsLab) -> str:
        lab.start("s1")
        lab.wait_state(["s1"])
        lab.produce(RECORDS)
        lab.wait_processed()
        lab.stop("s1")
        lab.wait_gone("s1")
        tasks = lab.task_dirs("s1")
        checkpoints = [d / ".checkpoint" for d in tasks if (d / ".checkpoint").exists()]
        if checkpoints:
            for path in checkpoints:
                path.unlink()
            action = f"Deleted {len(checkpoints)} .checkpoint files of s1 ({', '.join(d.name for d in tasks)}), stores kept."
        elif tasks:
            for task in tasks:
                shutil.rmtree(task)
            action = (
                f"s1 wrote no .checkpoint file (changelog offsets kept in the store, KIP-1035): "
                f"wiped its task directories {', '.join(d.name for d in tasks)}."
            )
        else:
            raise RuntimeError("s1 left no task directory to take the checkpoint from")
        lab.produce(RECORDS // 2)
        lab.start("s1")
        lab.wait_state(["s1"])
        lab.wait_processed()
        return action

    return _run(
        run_dir,
        version,
        "streams_checkpoint_deleted_eos",
        steps,
        guarantee="exactly_once_v2",
        notes="One instance under exactly_once_v2, stopped with SIGTERM, its checkpoints removed, restarted.",
    )


@scenario("streams_standby_promotion", CLIENTS)
def standby_promotion(run_dir: Path, client: str, version: str) -> dict:
    """num.standby.replicas=1 on two instances: s1 is killed after its last commit and s2 promotes
    its standbys of s1's tasks to active, restoring only what the standbys had not yet applied."""

    def steps(lab: StreamsLab) -> str:
        lab.start("s1")
        lab.start("s2")
        lab.wait_state(["s1", "s2"])
        lab.produce(RECORDS)
        lab.wait_processed()
        lab.kill("s1")
        lab.produce(RECORDS // 2)
        lab.wait_processed()
        return ""

    return _run(
        run_dir,
        version,
        "streams_standby_promotion",
        steps,
        guarantee="at_least_once",
        standbys=1,
        notes="num.standby.replicas=1; s1 SIGKILLed when idle after a commit; s2's standbys take over.",
    )


@scenario("streams_thread_handover_eos", CLIENTS)
def thread_handover_eos(run_dir: Path, client: str, version: str) -> dict:
    """Exactly-once v2, one instance with two threads: one thread removed at runtime
    (removeStreamThread), so its tasks move to the other thread of the same instance, then a
    thread added back. KAFKA-7672's second half (1.1-2.1): the new thread read the checkpoint
    before the old one wrote it and restored in full; this run shows how a fixed Streams hands over."""

    def steps(lab: StreamsLab) -> str:
        lab.start("s1", threads=2)
        lab.wait_state(["s1"])
        lab.produce(RECORDS)
        lab.wait_processed()
        removed = lab.command("s1", "remove-thread")
        lab.wait_state(["s1"])
        lab.produce(RECORDS // 2)
        lab.wait_processed()
        added = lab.command("s1", "add-thread")
        lab.wait_state(["s1"])
        lab.produce(RECORDS // 2)
        lab.wait_processed()
        return f"removeStreamThread removed {removed}; addStreamThread added {added}."

    # a needless full restore (redundant_restore, verdict delay) must not be reported: none happened
    return _run(
        run_dir,
        version,
        "streams_thread_handover_eos",
        steps,
        guarantee="exactly_once_v2",
        forbid_verdicts=("loss", "duplication", "delay"),
        notes="Tasks handed between threads of one instance under exactly_once_v2 (the checkpoint race's setting).",
    )


@scenario("streams_zombie_task_eos", CLIENTS)
def zombie_task_eos(run_dir: Path, client: str, version: str) -> dict:
    """Exactly-once v2, two instances: s1 is frozen (SIGSTOP) while records flow, its transaction
    open, until the coordinator has expired its session and given its tasks to s2; thawed
    (SIGCONT), s1 goes on with the tasks it no longer owns, and its commit (or its producer) is
    fenced: TaskMigratedException, the zombie's transaction aborted, s1 rejoins. What took effect
    (read_committed) is each record once: nothing lost, nothing twice."""

    def steps(lab: StreamsLab) -> str:
        lab.start("s1")
        lab.start("s2")
        lab.wait_state(["s1", "s2"])
        lab.produce(RECORDS)
        lab.wait_processed()
        flowing = threading.Thread(target=lab.produce, args=(RECORDS,), kwargs={"pause_ms": 50})
        flowing.start()
        time.sleep(1.5)
        before = max(broker_generations(lab.broker.server_log), default=0)
        frozen = time.monotonic()
        lab.freeze("s1")
        lab.wait_gone("s1")
        lab.expired.append("s1")
        deadline = time.monotonic() + 30
        while max(broker_generations(lab.broker.server_log), default=0) <= before:
            if time.monotonic() > deadline:
                raise RuntimeError("the group did not move s1's tasks within 30 s of its expiry")
            time.sleep(0.2)
        time.sleep(1)
        lab.thaw("s1")
        stalled = time.monotonic() - frozen
        flowing.join()
        lab.wait_state(["s1", "s2"])
        lab.produce(RECORDS // 2)
        lab.wait_processed()
        return f"s1 frozen {stalled:.1f} s."

    return _run(
        run_dir,
        version,
        "streams_zombie_task_eos",
        steps,
        guarantee="exactly_once_v2",
        expect_findings=[{"detector": "fenced", "group": APP, "host": "s1"}],
        complete=True,
        notes="s1 frozen (SIGSTOP) with its transaction open until s2 owns its tasks, then thawed (SIGCONT): a zombie.",
    )
