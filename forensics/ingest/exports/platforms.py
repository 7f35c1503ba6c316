"""What each log platform's export is known by: the usual names of its columns, its CSV header,
its JSON envelope."""

from __future__ import annotations

import re

from .json_fields import lookup

NAMES: dict[str, tuple[str, ...]] = {
    "time": ("@timestamp", "_time", "timestamp", "time", "date", "datetime", "ts", "tsns", "timegenerated"),
    "host": (
        "kubernetes.pod.name",
        "k8s.pod.name",
        "resource.labels.pod_name",
        "pod",
        "pod_name",
        "podname",
        "host.name",
        "host.hostname",
        "hostname",
        "host",
        "@logstream",
        "instance",
        "labels.compute.googleapis.com/resource_name",
        "resource.labels.instance_id",
        "agent.hostname",
        "computer",
    ),
    "source": ("log.file.path", "source", "@log", "logname", "file", "filename", "path", "service", "sourcetype", "containername"),
    "level": ("log.level", "level", "severity", "status", "loglevel", "log_level", "levelname", "detected_level"),
    "logger": ("log.logger", "logger_name", "loggername", "logger", "logger.name"),
    "thread": ("process.thread.name", "thread_name", "threadname", "thread", "thread.name", "logger.thread_name"),
    "message": (
        "_raw",
        "@message",
        "line",
        "textpayload",
        "event.original",
        "message",
        "msg",
        "content",
        "log",
        "body",
        "logmessage",
        "logentry",
    ),
}
"""Role -> usual column names (lowercase), best first. A pod name is preferred to a host name: on
Kubernetes ``host.name`` is the node, shared by every client pod on it (Azure's ``Computer``,
the node, comes last). The column holding the raw original line (``_raw``, ``@message``,
``Line``, ``textPayload``) is preferred as message. Azure Monitor's Container insights tables:
``ContainerLogV2`` (``PodName``, ``ContainerName``, ``LogMessage``) and ``ContainerLog``
(``LogEntry``)."""

_FORMULA_QUOTE = re.compile(r"^'(?=[=+\-@])")

_BEATS = ("filebeat", "elastic-agent", "winlogbeat", "journalbeat", "functionbeat")


def clean_name(cell: str) -> str:
    """A header cell as matched: lowercase, without Kibana's formula-escaping quote or the zone
    the Azure portal names after a time column (``TimeGenerated [UTC]``, ``[Local Time]``)."""
    return _AZURE_ZONE.sub("", _FORMULA_QUOTE.sub("", cell.strip())).lower()


_AZURE_ZONE = re.compile(r" \[(?:UTC|Local Time)\]$", re.IGNORECASE)
UTC_SUFFIX = " [UTC]"
"""The Azure portal's CSV export names a time column shown in UTC so; its times then carry no zone."""


def csv_platform(names: set[str]) -> str | None:
    """The platform whose export has these (lowercase) column names, else None."""
    if names & {"@message", "@logstream", "@log"}:
        return "cloudwatch"
    if "_raw" in names or ("_time" in names and names & {"sourcetype", "_serial", "splunk_server", "_indextime"}):
        return "splunk"
    if names & {"textpayload", "insertid", "logname"} or any(n.startswith(("jsonpayload.", "resource.labels.")) for n in names):
        return "gcp"
    if "tsns" in names or ("line" in names and names & {"time", "date"} and not names & {"message", "msg", "_raw"}):
        return "loki"
    if names & {"@timestamp", "_index"} or any(n.startswith(("host.", "log.", "kubernetes.", "agent.", "ecs.")) for n in names):
        return "kibana"
    if "service" in names and names & {"status", "content", "date"}:
        return "datadog"
    if "timegenerated" in names and names & {"logmessage", "logentry", "_resourceid", "tenantid"}:
        return "azure"
    return None


def platform_envelope(entry: dict) -> tuple[str, tuple[str, ...]] | None:
    """(platform, prefixes under which the entry's fields live) of a platform's JSON entry."""
    keys = {k.lower(): k for k in entry}

    def value(name: str):
        return entry.get(keys.get(name, ""))

    if isinstance(value("_source"), dict) and keys.keys() & {"_index", "_id"}:
        return "elasticsearch", ("_source",)
    if isinstance(value("result"), dict) and "preview" in keys:
        return "splunk", ("result",)
    if keys.keys() & {"insertid", "logname"} and keys.keys() & {"textpayload", "jsonpayload", "protopayload"}:
        return "gcp", ("", "jsonpayload")
    if keys.keys() & {"@message", "@logstream"}:
        return "cloudwatch", ("",)
    if isinstance(value("line"), str) and (isinstance(value("labels"), dict) or isinstance(value("fields"), dict)):
        return "loki", ("", "labels", "fields")
    if isinstance(value("attributes"), dict) and value("type") == "log":
        return "datadog", ("attributes", "attributes.attributes")
    if isinstance(value("content"), dict) and "id" in keys:
        return "datadog", ("content", "content.attributes")
    if _is_beats_event(entry):
        return "elasticsearch", ("",)
    return None


def _is_beats_event(entry: dict) -> bool:
    """A Filebeat / Elastic Agent event: ``@timestamp`` and ``message`` next to the shipper's own
    fields (``agent.type``, ``input.type``, ``log.file.path``), which an application's ECS JSON
    log line does not have."""

    def found(path: str) -> bool:
        return lookup(entry, path.split(".")) is not None

    agent = lookup(entry, ["agent", "type"])
    shipper = (agent is not None and str(agent[1]).lower() in _BEATS) or found("input.type") or found("log.file.path")
    return shipper and found("@timestamp") and found("message")
