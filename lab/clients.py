"""The lab's non-Java clients: their pinned versions, their environments and their drivers.

Each environment is made by the lab in its cache (`lab.maven.cache_dir()`): a venv per Python
client and version (`venv/<client>-<version>`, pip with the version pinned), KafkaJS installed
with `npm install --no-package-lock` (`node/kafkajs-<version>`), franz-go built with `go build`
from the committed go.mod/go.sum (`go/<source hash>/`). Idempotent: a ready one is reused.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from lab.maven import cache_dir

__all__ = ["Client", "CLIENTS", "EnvError", "consumer_command", "producer_command", "prepare"]

DRIVERS = Path(__file__).resolve().parent / "drivers"


class EnvError(RuntimeError):
    """A client's environment could not be made; the message carries the tool's output tail."""


@dataclass(frozen=True)
class Client:
    """A client as truth.json names it (`name`), at one pinned `version` of its `package`."""

    name: str
    version: str
    language: str
    package: str
    driver: str
    broker: str = "4.4.0"

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


CLIENTS: dict[str, Client] = {
    c.label: c
    for c in (
        Client("librdkafka", "2.16.2", "python", "confluent-kafka", "rdkafka_consumer.py"),
        Client("kafka-python", "2.3.3", "python", "kafka-python", "kafka_python_consumer.py"),
        # 1.4.7 speaks protocol versions Kafka 4.0 removed (KIP-896): it joins a 3.9 broker.
        Client("kafka-python", "1.4.7", "python", "kafka-python", "kafka_python_consumer.py", broker="3.9.1"),
        Client("aiokafka", "0.14.0", "python", "aiokafka", "aiokafka_consumer.py"),
        Client("kafkajs", "2.2.4", "node", "kafkajs", "consumer.js"),
        Client("franz-go", "1.22.3", "go", "github.com/twmb/franz-go", "franz"),
    )
}
"""Every client version the lab runs, by label; franz-go's version is the one go.mod requires."""

PRODUCER = CLIENTS["librdkafka-2.16.2"]
"""The producing side of every non-Java scenario: confluent-kafka, which reports each ack's offset."""


def _locked(target: Path, make) -> Path:
    """Run `make()` once for `target` across concurrent lab processes; `.ready` marks it done."""
    ready = target / ".ready"
    if ready.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
            make(target)
            ready.write_text("ok\n")
    return target


def _run(command: list[str], what: str, **kwargs) -> None:
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900, **kwargs)
    if proc.returncode != 0:
        raise EnvError(f"{what} failed ({' '.join(command[:4])} ...):\n{(proc.stdout + proc.stderr)[-3000:]}")


def _python_env(client: Client) -> Path:
    def make(target: Path) -> None:
        _run([sys.executable, "-m", "venv", str(target)], f"venv for {client.label}")
        _run(
            [
                str(target / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"{client.package}=={client.version}",
            ],
            f"pip install {client.package}=={client.version}",
        )

    return _locked(cache_dir() / "venv" / client.label, make) / "bin" / "python"


def _node_env(client: Client) -> Path:
    def make(target: Path) -> None:
        (target / "package.json").write_text('{"name": "forensics-lab-node", "private": true}\n')
        _run(
            ["npm", "install", "--no-package-lock", "--no-audit", "--no-fund", "--silent", f"{client.package}@{client.version}"],
            f"npm install {client.package}@{client.version}",
            cwd=target,
        )

    return _locked(cache_dir() / "node" / client.label, make) / "node_modules"


def _go_binary(client: Client) -> Path:
    module = DRIVERS / "go"
    digest = hashlib.sha256()
    for path in sorted(module.rglob("*")):
        if path.is_file() and (path.suffix == ".go" or path.name in ("go.mod", "go.sum")):
            digest.update(str(path.relative_to(module)).encode())
            digest.update(path.read_bytes())

    def make(target: Path) -> None:
        env = dict(os.environ, GOFLAGS="-mod=readonly")
        _run(["go", "build", "-o", str(target / client.driver), f"./{client.driver}"], f"go build of {client.driver}", cwd=module, env=env)

    return _locked(cache_dir() / "go" / f"{client.driver}-{digest.hexdigest()[:16]}", make) / client.driver


def prepare(client: Client) -> list[str]:
    """Make `client`'s environment if needed; return the command that runs its consumer driver."""
    if client.language == "python":
        return [str(_python_env(client)), "-u", str(DRIVERS / "python" / client.driver)]
    if client.language == "node":
        return ["node", str(DRIVERS / "node" / client.driver)]
    if client.language == "go":
        return [str(_go_binary(client))]
    raise EnvError(f"no environment for language {client.language!r}")


def node_path(client: Client) -> dict[str, str]:
    """The environment a node driver runs with: NODE_PATH at the client's cached node_modules."""
    return {"NODE_PATH": str(_node_env(client))} if client.language == "node" else {}


def consumer_command(client: Client, **options) -> tuple[list[str], dict[str, str]]:
    """The consumer driver's command line for `options` (bootstrap, group, topic (list), member,
    journal, offset_reset, session_timeout_ms, ...) and the extra environment it needs."""
    command = prepare(client)
    env = node_path(client)
    for key, value in options.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            flag = "-" + key.replace("_", "-") if client.language == "go" else "--" + key.replace("_", "-")
            command += [flag, str(item)]
    return command, env


def producer_command(bootstrap: str, topics: list[str], journal: Path, count: int, rate: float) -> list[str]:
    """The Python producer's command line (confluent-kafka in its venv)."""
    command = [
        str(_python_env(PRODUCER)),
        "-u",
        str(DRIVERS / "python" / "producer.py"),
        "--bootstrap",
        bootstrap,
        "--journal",
        str(journal),
        "--count",
        str(count),
        "--rate",
        str(rate),
    ]
    for topic in topics:
        command += ["--topic", topic]
    return command
