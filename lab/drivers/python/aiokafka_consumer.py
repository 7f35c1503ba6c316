"""An aiokafka consumer that journals every record it processes, with the generation its group
coordinator holds. A stalled handler awaits (the event loop, and so the heartbeat, goes on), so
the fault it shows is the poll timeout, not the session timeout.

Logs through Python's logging as an application that calls basicConfig(level=...) does.
"""

from __future__ import annotations

import asyncio

from _common import Journal, Stop, basic_logging, consumer_arguments
from aiokafka import AIOKafkaConsumer


def generation(consumer: AIOKafkaConsumer) -> int | None:
    """The generation aiokafka's coordinator holds, None before its first join."""
    number = getattr(consumer._coordinator, "generation", None)
    return number if isinstance(number, int) and number >= 0 else None


async def consume(args, stop: Stop) -> None:
    consumer = AIOKafkaConsumer(
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
    await consumer.start()
    journal = Journal(args.journal, args.member)
    stalled = False
    try:
        while not stop.requested:
            batches = await consumer.getmany(timeout_ms=500)
            for records in batches.values():
                for record in records:
                    journal.processed(record.topic, record.partition, record.offset, generation(consumer))
                    if args.slow_ms and not stalled and journal.count >= args.slow_after:
                        stalled = True
                        await asyncio.sleep(args.slow_ms / 1000)
    finally:
        await consumer.stop()


def main() -> None:
    args = consumer_arguments(__doc__)
    basic_logging(args.log_level, args.log_format)
    asyncio.run(consume(args, Stop()))


if __name__ == "__main__":
    main()
