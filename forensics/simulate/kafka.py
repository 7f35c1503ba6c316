"""Kafka client and Kafka Streams log wordings per version, as the catalogue lists them.

Every method returns ``(level, logger, message)`` for one Kafka line of this client version;
the ids in the comments are the ``templates.yaml`` entries the wording belongs to. Only
wordings in the catalogue are produced, so the parser recognises every generated Kafka line.
"""

from __future__ import annotations

from .versions import Version

PKG = "org.apache.kafka.clients.consumer.internals."
STREAMS = "org.apache.kafka.streams.processor.internals."
Msg = tuple[str, str, str]


def tps(partitions) -> list[str]:
    return [f"{t}-{p}" for t, p in partitions]


class Kafka:
    """Log wordings of one Kafka client version (classic consumer protocol, Kafka Streams)."""

    def __init__(self, version: str):
        self.v = Version(version)
        self.version = version

    # -- loggers -------------------------------------------------------------------------
    @property
    def coordinator(self) -> str:
        """Join/sync/heartbeat/leave lines: AbstractCoordinator up to 2.8, ConsumerCoordinator from 3.0."""
        return PKG + ("ConsumerCoordinator" if self.v.at_least("3.0") else "AbstractCoordinator")

    @property
    def listener(self) -> str:
        return PKG + ("ConsumerRebalanceListenerInvoker" if self.v.at_least("3.7") else "ConsumerCoordinator")

    @property
    def fetcher(self) -> str:
        if self.v.at_least("3.7"):
            return PKG + "FetchCollector"
        return PKG + ("AbstractFetch" if self.v.at_least("3.5") else "Fetcher")

    @property
    def resetter(self) -> str:
        return PKG + ("SubscriptionState" if self.v.at_least("2.3") else "Fetcher")

    # -- client start ----------------------------------------------------------------------
    def banner(self) -> list[Msg]:
        """``Kafka version`` (G101 ``version : `` up to 2.1, G102/G103 from 2.2)."""
        parser = "org.apache.kafka.common.utils.AppInfoParser"
        if self.v.below("2.2"):
            return [("INFO", parser, f"Kafka version : {self.version}")]
        commit = {"2": "66563e712b0b9f84", "3": "c97b88d5db4de28d"}.get(self.version[0], "3402a8361b734732")
        return [("INFO", parser, f"Kafka version: {self.version}"), ("INFO", parser, f"Kafka commitId: {commit}")]

    def config(self, kind: str, settings: dict) -> Msg:
        """``<Kind>Config values:`` block (CFG01): one tab-indented ``key = value`` line per setting, sorted."""
        logger = {
            "Consumer": "org.apache.kafka.clients.consumer.ConsumerConfig",
            "Producer": "org.apache.kafka.clients.producer.ProducerConfig",
            "Streams": "org.apache.kafka.streams.StreamsConfig",
        }[kind]
        body = "".join(f"\t{k} = {settings[k]}\n" for k in sorted(settings))
        return ("INFO", logger, f"{kind}Config values: \n{body}")

    def subscribed(self, topics: list[str]) -> Msg:  # G96
        return ("INFO", "org.apache.kafka.clients.consumer.KafkaConsumer", f"Subscribed to topic(s): {', '.join(topics)}")

    def streams_version(self) -> list[Msg]:  # S84
        if self.v.at_least("2.4"):
            return [("INFO", "org.apache.kafka.streams.KafkaStreams", f"Kafka Streams version: {self.version}")]
        return []

    # -- group membership ------------------------------------------------------------------
    def discovered(self, coordinator: str) -> Msg:  # G63 (1.1+)
        return ("INFO", self.coordinator, f"Discovered group coordinator {coordinator}")

    def joining(self) -> Msg:  # G02
        return ("INFO", self.coordinator, "(Re-)joining group")

    def generation(self, gen: int, member_id: str, protocol: str) -> str:
        return f"Generation{{generationId={gen}, memberId='{member_id}', protocol='{protocol}'}}"

    def joined(self, gen: int, member_id: str, protocol: str) -> Msg:  # G04 / G05
        if self.v.at_least("2.7"):
            return ("INFO", self.coordinator, f"Successfully joined group with generation {self.generation(gen, member_id, protocol)}")
        return ("INFO", self.coordinator, f"Successfully joined group with generation {gen}")

    def synced(self, gen: int, member_id: str, protocol: str) -> list[Msg]:  # G06 (2.7+)
        if self.v.at_least("2.7"):
            return [("INFO", self.coordinator, f"Successfully synced group in generation {self.generation(gen, member_id, protocol)}")]
        return []

    def finished_assignment(self, gen: int, assignment: dict[str, list[str]]) -> Msg:  # G26 / G27
        if self.v.at_least("2.4"):
            body = ", ".join(f"{m}=Assignment(partitions=[{', '.join(p)}])" for m, p in assignment.items())
            return ("INFO", PKG + "ConsumerCoordinator", f"Finished assignment for group at generation {gen}: {{{body}}}")
        body = ", ".join(f"{m}=Assignment(partitions=[{', '.join(p)}])" for m, p in assignment.items())
        return ("DEBUG", PKG + "ConsumerCoordinator", f"Finished assignment for group: {{{body}}}")

    def notifying(self, partitions: list[str]) -> list[Msg]:  # G22 (2.6+)
        if self.v.at_least("2.6"):
            return [
                ("INFO", PKG + "ConsumerCoordinator", f"Notifying assignor about the new Assignment(partitions=[{', '.join(partitions)}])")
            ]
        return []

    def assigned(self, partitions: list[str]) -> Msg:  # G08 / G10 / G11
        if self.v.at_least("2.4"):
            text = "Adding newly assigned partitions:" + (f" {', '.join(partitions)}" if partitions else "")
            return ("INFO", self.listener, text)
        if self.v.at_least("2.2"):
            text = "Setting newly assigned partitions:" + (f" {', '.join(partitions)}" if partitions else "")
            return ("INFO", PKG + "ConsumerCoordinator", text)
        return ("INFO", PKG + "ConsumerCoordinator", f"Setting newly assigned partitions [{', '.join(partitions)}]")

    def revoked(self, partitions: list[str]) -> Msg:  # G15 / G16
        if self.v.at_least("2.4"):
            text = "Revoke previously assigned partitions" + (f" {', '.join(partitions)}" if partitions else "")
            return ("INFO", self.listener, text)
        return ("INFO", PKG + "ConsumerCoordinator", f"Revoking previously assigned partitions [{', '.join(partitions)}]")

    def lost(self, partitions: list[str]) -> list[Msg]:  # G33/G34 + G19 (2.4+)
        if self.v.below("2.4"):
            return []
        if self.v.at_least("3.2"):
            give = (
                "Giving away all assigned partitions as lost since generation/memberID has been reset,"
                "indicating that consumer is in old state or no longer part of the group"
            )
        else:
            give = (
                "Giving away all assigned partitions as lost since generation has been reset,"
                "indicating that consumer is no longer part of the group"
            )
        return [
            ("INFO", PKG + "ConsumerCoordinator", give),
            ("INFO", self.listener, "Lost previously assigned partitions " + ", ".join(partitions)),
        ]

    def rebalancing_heartbeat(self) -> Msg:  # G45 (<=2.8) / G29 (3.0+)
        if self.v.at_least("3.0"):
            return ("INFO", PKG + "ConsumerCoordinator", "Request joining group due to: group is already rebalancing")
        return ("INFO", self.coordinator, "Attempt to heartbeat failed since group is rebalancing")

    def leave(self, member_id: str, coordinator: str, reason: str = "the consumer is being closed") -> Msg:
        """LeaveGroup: G36 (1.0-2.1, DEBUG before 2.1), G38 (2.2-2.3), G39 (2.4+)."""
        if self.v.at_least("2.4"):
            return ("INFO", self.coordinator, f"Member {member_id} sending LeaveGroup request to coordinator {coordinator} due to {reason}")
        if self.v.at_least("2.2"):
            return ("INFO", self.coordinator, f"Member {member_id} sending LeaveGroup request to coordinator {coordinator}")
        level = "INFO" if self.v.at_least("2.1") else "DEBUG"
        return (level, self.coordinator, f"Sending LeaveGroup request to coordinator {coordinator}")

    POLL_TEXT = (
        "consumer poll timeout has expired. This means the time between subsequent calls to poll() was "
        "longer than the configured max.poll.interval.ms, which typically implies that the poll loop is "
        "spending too much time processing messages. You can address this either by increasing "
        "max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records."
    )

    def poll_timeout(self, member_id: str, coordinator: str) -> list[Msg]:
        """The poll-timeout warning and LeaveGroup: G40 (2.1-2.3), G39 (2.4-2.8), G41 + G39 (3.0+).
        The first message is the timeout line (the evidence)."""
        if self.v.at_least("3.0"):
            return [
                ("WARN", PKG + "ConsumerCoordinator", self.POLL_TEXT),
                self.leave(member_id, coordinator, "consumer poll timeout has expired."),
            ]
        if self.v.at_least("2.4"):
            return [
                (
                    "INFO",
                    self.coordinator,
                    f"Member {member_id} sending LeaveGroup request to coordinator {coordinator} due to {self.POLL_TEXT}",
                )
            ]
        if self.v.at_least("2.1"):
            return [
                ("WARN", self.coordinator, "This member will leave the group because " + self.POLL_TEXT),
                self.leave(member_id, coordinator),
            ]
        raise ValueError(f"Kafka {self.version} logs no poll timeout")

    def heartbeat_unknown_member(self, gen: int, member_id: str, protocol: str) -> Msg:  # G48 / G49
        if self.v.at_least("2.6"):
            return (
                "INFO",
                self.coordinator,
                f"Attempt to heartbeat with {self.generation(gen, member_id, protocol)} and group instance id "
                "Optional.empty failed due to UNKNOWN_MEMBER_ID, resetting generation",
            )
        if self.v.at_least("2.0"):
            return ("INFO", self.coordinator, f"Attempt to heartbeat failed for since member id {member_id} is not valid.")
        raise ValueError(f"Kafka {self.version}: no heartbeat UNKNOWN_MEMBER_ID wording in the catalogue")

    def generation_reset(self, reason: str, error: str = "UNKNOWN_MEMBER_ID", api: str = "HEARTBEAT") -> list[Msg]:
        """G32 (2.5-2.8 DEBUG), G31 (3.2+), G30 (3.0-3.1)."""
        if self.v.at_least("3.2"):
            return [("INFO", PKG + "ConsumerCoordinator", f"Resetting generation and member id due to: {reason}")]
        if self.v.at_least("3.0"):
            return [("INFO", PKG + "ConsumerCoordinator", f"Resetting generation due to: {reason}")]
        if self.v.at_least("2.5"):
            return [
                ("DEBUG", self.coordinator, f"Resetting generation after encountering {error} from {api} response and requesting re-join")
            ]
        return []

    def rejoin_metadata(self, old: str, new: str) -> list[Msg]:  # G94 (2.7-2.8)
        if self.v.within("2.7-2.8"):
            return [
                (
                    "INFO",
                    PKG + "ConsumerCoordinator",
                    f"Requesting to re-join the group and trigger rebalance since the assignment metadata has changed from {old} to {new}",
                )
            ]
        return []

    # -- offsets ---------------------------------------------------------------------------
    def position(self, offset: int, epoch: int, leader: str) -> str:
        return (
            f"FetchPosition{{offset={offset}, offsetEpoch=Optional[{epoch}], currentLeader=LeaderAndEpoch"
            f"{{leader=Optional[{leader}], epoch={epoch}}}}}"
        )

    def committed(self, offset: int, tp: str) -> Msg:  # O02
        return ("DEBUG", PKG + "ConsumerCoordinator", f"Committed offset {offset} for partition {tp}")

    def commit_failed(self, tp: str, offset: int, error: str) -> Msg:  # O03
        return ("ERROR", PKG + "ConsumerCoordinator", f"Offset commit failed on partition {tp} at offset {offset}: {error}")

    def auto_commit_failed(self, offsets: dict[str, int], epoch: int, error: str) -> Msg:  # O06
        body = ", ".join(f"{tp}=OffsetAndMetadata{{offset={o}, leaderEpoch={epoch}, metadata=''}}" for tp, o in offsets.items())
        return ("WARN", PKG + "ConsumerCoordinator", f"Asynchronous auto-commit of offsets {{{body}}} failed: {error}")

    def set_committed(self, tp: str, offset: int, epoch: int, leader: str) -> Msg:  # O15 / O16
        if self.v.at_least("2.3"):
            return (
                "INFO",
                PKG + "ConsumerCoordinator",
                f"Setting offset for partition {tp} to the committed offset {self.position(offset, epoch, leader)}",
            )
        return ("DEBUG", PKG + "ConsumerCoordinator", f"Setting offset for partition {tp} to the committed offset {offset}")

    def no_committed(self, tp: str) -> Msg:  # O11
        return ("INFO", PKG + "ConsumerCoordinator", f"Found no committed offset for partition {tp}")

    def seek_strategy(self, strategy: str, tp: str) -> list[Msg]:  # O25 (2.3+)
        if self.v.at_least("4.0"):
            return [("INFO", PKG + "SubscriptionState", f"Seeking to AutoOffsetResetStrategy{{type={strategy}}} offset of partition {tp}")]
        if self.v.at_least("3.3"):
            return [("INFO", PKG + "SubscriptionState", f"Seeking to {strategy} offset of partition {tp}")]
        if self.v.at_least("2.3"):
            return [("INFO", PKG + "SubscriptionState", f"Seeking to {strategy.upper()} offset of partition {tp}")]
        return []

    def reset(self, tp: str, offset: int, epoch: int = 0, leader: str = "", restore: bool = False) -> Msg:  # O21 / O24
        if self.v.at_least("2.7"):
            return (
                "INFO",
                PKG + "SubscriptionState",
                f"Resetting offset for partition {tp} to position {self.position(offset, epoch, leader)}.",
            )
        return ("INFO", self.resetter, f"Resetting offset for partition {tp} to offset {offset}.")

    def out_of_range(self, tp: str, offset: int, epoch: int, leader: str) -> Msg:  # O26 / O27
        if self.v.at_least("2.6"):
            return (
                "INFO",
                self.fetcher,
                f"Fetch position {self.position(offset, epoch, leader)} is out of range for partition {tp}, resetting offset",
            )
        return ("INFO", PKG + "Fetcher", f"Fetch offset {offset} is out of range for partition {tp}, resetting offset")

    # -- Kafka Streams ---------------------------------------------------------------------
    def client_state(self, frm: str, to: str) -> Msg:  # S02
        return ("INFO", "org.apache.kafka.streams.KafkaStreams", f"State transition from {frm} to {to}")

    def thread_state(self, frm: str, to: str) -> Msg:  # S04
        return ("INFO", STREAMS + "StreamThread", f"State transition from {frm} to {to}")

    def producer_for_task(self, task: str) -> Msg:  # CFG02 (1.0-3.9)
        return ("INFO", STREAMS + "StreamThread", f"Creating producer client for task {task}")

    def producer_id(self, producer_id: int, epoch: int) -> Msg:  # P02
        return (
            "INFO",
            "org.apache.kafka.clients.producer.internals.TransactionManager",
            f"ProducerId set to {producer_id} with epoch {epoch}",
        )

    def assignment_took(self, ms: int, active: list[str], previous: list[str]) -> Msg:  # S09 (1.0-2.3)
        return (
            "INFO",
            STREAMS + "StreamThread",
            f"partition assignment took {ms} ms.\n\tcurrent active tasks: [{', '.join(active)}]\n"
            f"\tcurrent standby tasks: []\n\tprevious active tasks: [{', '.join(previous)}]\n",
        )

    def revocation_took(self, ms: int, suspended: list[str]) -> Msg:  # S11 (1.0-2.3)
        return (
            "INFO",
            STREAMS + "StreamThread",
            f"partition revocation took {ms} ms.\n\tsuspended active tasks: [{', '.join(suspended)}]\n\tsuspended standby tasks: []",
        )

    def checkpoint_missing_eos(self, task: str, store: str, changelog: str) -> Msg:  # S33
        if self.v.at_least("2.1"):
            text = (
                f"No checkpoint found for task {task} state store {store} changelog {changelog} with EOS turned on. "
                "Reinitializing the task and restore its state from the beginning."
            )
        else:
            text = (
                f"No checkpoint found for task {task} state store {changelog} with EOS turned on. "
                "Reinitializing the task and restore its state from the beginning."
            )
        return ("INFO", STREAMS + "StoreChangelogReader", text)

    def reinitializing(self, task: str) -> Msg:  # S36 (1.1-2.0)
        return ("INFO", STREAMS + "StoreChangelogReader", f"Reinitializing StreamTask StreamsTask taskId: {task}")

    def to_restoring(self, task: str) -> Msg:  # S31 (1.0-2.5, DEBUG)
        word = "Transitioning" if self.v.at_least("2.2") else "transitioning"
        return ("DEBUG", STREAMS + "AssignedStreamsTasks", f"{word} stream task {task} to restoring")

    def to_running(self, task: str) -> Msg:  # S29 (1.0-2.1) / S30 (2.2-2.5), DEBUG
        word = "Transitioning" if self.v.at_least("2.2") else "transitioning"
        return ("DEBUG", STREAMS + "AssignedStreamsTasks", f"{word} stream task {task} to running")

    def restoring_partition(self, changelog: str, start: int, end: int) -> Msg:  # S37 (1.0-2.5, DEBUG)
        return ("DEBUG", STREAMS + "StoreChangelogReader", f"Restoring partition {changelog} from offset {start} to endOffset {end}")

    def completed_restoring(self, changelog: str, start: int, end: int) -> Msg:  # S38 (1.0-1.1, DEBUG)
        return (
            "DEBUG",
            STREAMS + "StoreChangelogReader",
            f"Completed restoring state from changelog {changelog} with {end - start} records ranging from offset {start} to {end}",
        )

    # 2.6+ task lifecycle
    def new_assignment(self, active: list[str]) -> Msg:  # S16
        return (
            "INFO",
            STREAMS + "TaskManager",
            f"Handle new assignment with:\n\tNew active tasks: [{', '.join(active)}]\n\tNew standby tasks: []\n"
            f"\tExisting active tasks: []\n\tExisting standby tasks: []",
        )

    def task_initialized(self) -> Msg:  # S17
        return ("INFO", STREAMS + "StreamTask", "Initialized")

    def checkpoint_loaded(self, store: str, offset: int, changelog: str) -> Msg:  # S49
        return (
            "INFO",
            STREAMS + "ProcessorStateManager",
            f"State store {store} initialized from checkpoint with offset {offset} at changelog {changelog}",
        )

    def checkpoint_not_found(self, store: str, changelog: str) -> Msg:  # S47
        return (
            "INFO",
            STREAMS + "ProcessorStateManager",
            f"State store {store} did not find checkpoint offset, hence would default to the starting offset at changelog {changelog}",
        )

    def start_restoring(self, changelog: str, start: int | None, end: int) -> Msg:  # S41 / S42 (DEBUG)
        if start is None:
            return (
                "DEBUG",
                STREAMS + "StoreChangelogReader",
                f"Start restoring changelog partition {changelog} from the beginning offset to end offset {end} since we cannot find current offset.",
            )
        return (
            "DEBUG",
            STREAMS + "StoreChangelogReader",
            f"Start restoring changelog partition {changelog} from current offset {start} to end offset {end}.",
        )

    def finished_restoring(self, changelog: str, store: str, records: int) -> Msg:  # S43
        return (
            "INFO",
            STREAMS + "StoreChangelogReader",
            f"Finished restoring changelog {changelog} to store {store} with a total number of {records} records",
        )

    def restored_ready(self) -> Msg:  # S19
        return ("INFO", STREAMS + "StreamTask", "Restored and ready to run")

    def restoration_took(self, ms: int, tasks: list[str]) -> list[Msg]:  # S77 (2.8-3.6) / S76 (3.7-4.2)
        if self.v.within("3.7-4.2"):
            return [("INFO", STREAMS + "StreamThread", f"Restoration took {ms} ms for all active tasks [{', '.join(tasks)}]")]
        if self.v.within("2.8-3.6"):
            return [("INFO", STREAMS + "StreamThread", f"Restoration took {ms} ms for all tasks [{', '.join(tasks)}]")]
        return []

    def suspended(self) -> Msg:  # S21 (2.6-3.3) / S24 (3.4+)
        if self.v.at_least("3.4"):
            return ("INFO", STREAMS + "StreamTask", "Suspended from RUNNING")
        if self.v.at_least("3.0"):
            return ("INFO", STREAMS + "StreamTask", "Suspended RUNNING")
        return ("INFO", STREAMS + "StreamTask", "Suspended running")

    def closed_clean(self) -> Msg:  # S25
        return ("INFO", STREAMS + "StreamTask", "Closed clean")

    def thread_fenced(self) -> Msg:  # S67 (2.6+)
        return (
            "WARN",
            STREAMS + "StreamThread",
            "Detected that the thread is being fenced. This implies that this thread missed a rebalance and "
            "dropped out of the consumer group. Will close out all assigned tasks and rejoin the consumer group.",
        )

    def partitions_lost(self, partitions: list[str], tasks: list[str]) -> Msg:  # S14 (2.4+)
        return (
            "INFO",
            STREAMS + "StreamThread",
            f"at state RUNNING: partitions [{', '.join(partitions)}] lost due to missed rebalance.\n"
            f"\tlost active tasks: [{', '.join(tasks)}]\n\tlost assigned standby tasks: []\n",
        )

    def commit_failed_generation(self, gen: int, member_id: str, protocol: str, error: str) -> Msg:  # O08 (2.6+)
        return ("INFO", PKG + "ConsumerCoordinator", f"OffsetCommit failed with {self.generation(gen, member_id, protocol)}: {error}")
