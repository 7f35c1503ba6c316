"""The lab: a real Kafka and real clients on 127.0.0.1, faults injected, logs and truth kept as fixtures."""
