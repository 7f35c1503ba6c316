"""A librdkafka consumer (confluent-kafka) that journals every record it processes.

Logs as librdkafka does with debug=cgrp,topic,fetch: to stderr in its own `%7|epoch|FAC|handle|`
layout by default, or, with --log logger, through the application's Python logger (the `logger`
setting), whose basicConfig default layout then writes `DEBUG:consumer:FAC [handle] ...`.
"""

from __future__ import annotations

import logging

from _common import Journal, Slowness, Stop, basic_logging, consumer_arguments
from confluent_kafka import Consumer


def main() -> None:
    args = consumer_arguments(__doc__)
    stop = Stop()
    config = {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "auto.offset.reset": args.offset_reset,
        "session.timeout.ms": args.session_timeout_ms,
        "heartbeat.interval.ms": args.heartbeat_interval_ms,
        "max.poll.interval.ms": args.max_poll_interval_ms,
        "topic.metadata.refresh.interval.ms": args.metadata_max_age_ms,
        "auto.commit.interval.ms": args.auto_commit_interval_ms,
        "debug": "cgrp,topic,fetch",
    }
    if args.log == "logger":
        basic_logging("DEBUG", args.log_format)
        config["logger"] = logging.getLogger("consumer")
    consumer = Consumer(config)
    consumer.subscribe(args.topic)
    journal = Journal(args.journal, args.member)
    slowness = Slowness(args.slow_after, args.slow_ms)
    try:
        while not stop.requested:
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            journal.processed(message.topic(), message.partition(), message.offset(), None)
            slowness.step(journal.count)
    finally:
        consumer.close()


if __name__ == "__main__":
    main()
