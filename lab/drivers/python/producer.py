"""The lab's Python producer (confluent-kafka): sends numbered records round-robin over every
partition of its topics and journals each acknowledged one to journal/produced.jsonl.

It re-reads the topics' partition counts every second, so records reach partitions added while it
runs before a consumer's slower metadata refresh sees them (the auto.offset.reset=latest loss).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from _common import Stop
from confluent_kafka import KafkaException, Producer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", action="append", required=True)
    parser.add_argument("--journal", required=True)
    parser.add_argument("--count", type=int, required=True, help="records to send in all")
    parser.add_argument("--rate", type=float, default=100.0, help="records per second")
    args = parser.parse_args()
    stop = Stop()
    os.makedirs(args.journal, exist_ok=True)
    journal = open(os.path.join(args.journal, "produced.jsonl"), "a", encoding="utf-8")
    failures = []

    def acked(err, msg):
        if err is not None:
            failures.append(str(err))
            return
        journal.write(json.dumps({"topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset()}) + "\n")
        journal.flush()

    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "linger.ms": 5, "topic.metadata.refresh.interval.ms": 1000})
    counts: dict[str, int] = {}
    refreshed = 0.0
    start = time.monotonic()
    for n in range(args.count):
        if stop.requested:
            break
        now = time.monotonic()
        if now - refreshed >= 1.0:
            metadata = producer.list_topics(timeout=10)
            for topic in args.topic:
                if topic in metadata.topics and metadata.topics[topic].partitions:
                    counts[topic] = len(metadata.topics[topic].partitions)
            refreshed = now
        topic = args.topic[n % len(args.topic)]
        partition = (n // len(args.topic)) % counts[topic]
        producer.produce(topic, value=f"record-{n}".encode(), key=str(n).encode(), partition=partition, on_delivery=acked)
        producer.poll(0)
        delay = start + (n + 1) / args.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    if producer.flush(30) != 0:
        raise KafkaException("records left unacknowledged after 30 s")
    journal.close()
    if failures:
        raise SystemExit(f"{len(failures)} records failed: {failures[0]}")


if __name__ == "__main__":
    main()
