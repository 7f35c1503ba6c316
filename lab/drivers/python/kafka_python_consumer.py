"""A kafka-python consumer that journals every record it processes, with the group generation
it was fetched under (the coordinator's own, a private attribute in every release).

Logs through Python's logging as an application that calls basicConfig(level=...) does.
"""

from __future__ import annotations

from _common import Journal, Slowness, Stop, basic_logging, consumer_arguments
from kafka import KafkaConsumer


def generation(consumer: KafkaConsumer) -> int | None:
    """The generation kafka-python's coordinator holds, None before its first join."""
    state = getattr(consumer._coordinator, "_generation", None)
    number = getattr(state, "generation_id", None)
    return number if isinstance(number, int) and number >= 0 else None


def main() -> None:
    args = consumer_arguments(__doc__)
    basic_logging(args.log_level, args.log_format)
    stop = Stop()
    consumer = KafkaConsumer(
        *args.topic,
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        auto_offset_reset=args.offset_reset,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        max_poll_interval_ms=args.max_poll_interval_ms,
        metadata_max_age_ms=args.metadata_max_age_ms,
        auto_commit_interval_ms=args.auto_commit_interval_ms,
    )
    journal = Journal(args.journal, args.member)
    slowness = Slowness(args.slow_after, args.slow_ms)
    try:
        while not stop.requested:
            batches = consumer.poll(timeout_ms=500)
            for records in batches.values():
                for record in records:
                    journal.processed(record.topic, record.partition, record.offset, generation(consumer))
                    slowness.step(journal.count)
    finally:
        consumer.close()


if __name__ == "__main__":
    main()
