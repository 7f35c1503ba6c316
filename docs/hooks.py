"""mkdocs hook: the reference pages made from the code, so they cannot drift from it.

``reference/catalogue.md`` lists every template of ``forensics/catalogue/*.yaml`` (id, event
type, versions, level, loggers, example); ``reference/detectors.md`` gives each detector's
docstring. Both are generated at build time (``mkdocs build``), never committed."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE_FILES = {
    "templates.yaml": "Java clients and Kafka Streams",
    "clients.yaml": "Other clients (librdkafka, kafka-python, aiokafka, KafkaJS, Go, ...)",
    "broker.yaml": "The group coordinator (broker)",
    "kafka4.yaml": "Kafka 4.x rebalance protocols (KIP-848, KIP-1071)",
}


def on_files(files, config):
    sys.path.insert(0, str(ROOT))
    files.append(File.generated(config, "reference/catalogue.md", content=catalogue_page()))
    files.append(File.generated(config, "reference/detectors.md", content=detectors_page()))
    return files


def catalogue_page() -> str:
    from forensics.catalogue import catalogue_entries

    out = [
        "# Catalogue reference",
        "",
        "Every log template the toolkit reads, by catalogue file, generated from `forensics/catalogue/`.",
        "The pattern is applied to the message after the log-context prefix; the example is a whole line.",
        "",
    ]
    for name, title in CATALOGUE_FILES.items():
        entries = catalogue_entries([ROOT / "forensics" / "catalogue" / name])
        out += [f"## {title}", "", f"`{name}`: {len(entries)} templates.", ""]
        for entry in entries:
            loggers = ", ".join(f"`{logger}`" for logger in entry.get("loggers") or []) or "any"
            out += [
                f"### {entry['id']}: `{entry['event_type']}`",
                "",
                f"Versions {entry.get('versions', '?')} · level {entry.get('level', '?')} · loggers {loggers}",
                "",
                "```text",
                str(entry.get("example", "")),
                "```",
                "",
            ]
            if entry.get("notes"):
                out += [_plain(str(entry["notes"])), ""]
    return "\n".join(out)


def detectors_page() -> str:
    from forensics.detect import DETECTORS

    out = ["# Detector reference", "", "Each detector's own description, from its docstring in `forensics/detect/`.", ""]
    for name, detector in DETECTORS.items():
        out += [f"## `{name}`", "", inspect.cleandoc(detector.__doc__ or "(no description)"), ""]
    return "\n".join(out)


def _plain(text: str) -> str:
    """Notes as text: no markdown or HTML read into them."""
    return text.replace("\\", "\\\\").replace("<", "&lt;").replace("*", "\\*").replace("_", "\\_").replace("`", "\\`")
