"""Container and shipper wrappers around an application's log line, peeled off and kept.

A wrapped line is an application line (any layout) behind a prefix or inside an envelope that
a container runtime, a shipper, a console or a command that tails many writers added. The
wrapper's time, host and stream are kept: the time dates a record whose own line has none or
only a time of day, the host names the writer when one file holds several (syslog, ``docker
compose logs``, ``kubectl logs --prefix``, stern, ``aws logs tail``, ``heroku logs``, logcli).

- ``docker_json``: Docker's json-file driver, ``{"log":"<line>\\n","stream":"stdout","time":"<RFC 3339>"}``;
  a ``log`` without its final newline is a piece of a longer line (Docker cuts lines at 16 KiB);
- ``cri``: the CRI log file that containerd and CRI-O write for each container (under
  ``/var/log/pods``, where log shippers tail it), ``2024-03-11T14:02:17.418123456Z stdout F <line>``;
  a line tagged ``P``, not ``F``, is a piece of a longer line (containerd cuts lines at 16 KiB,
  CRI-O's conmon where a read of the container's output ends);
- ``journald``: ``journalctl -o short-iso`` and rsyslog's ISO form, ``2024-03-11T14:02:17+0000 host java[4242]: <line>``;
- ``heroku``: ``heroku logs`` (and Heroku's log drains), ``2024-03-11T14:02:17.418123+00:00 app[worker.1]: <line>``
  (RFC 5424 time to the microsecond, the source ``app`` or ``heroku``; the dyno is the host);
- ``aws_tail``: ``aws logs tail`` (AWS CLI v2), ``2024-03-11T14:02:17.418000+00:00 <log stream> <line>``
  (Python's ``isoformat`` of a UTC time: microseconds or none, ``+00:00``; the stream is the
  host); ``aws_tail_short``, its ``--format short``, ``2024-03-11T14:02:17 <line>`` (UTC, no stream);
- ``logcli``: Loki's ``logcli query`` (default output), ``2024-03-11T14:02:17Z {pod="orders-0", stream="stdout"} <line>``:
  the time to the second in the zone of ``--timezone``, the labels that not every line shares
  (``{}`` where all do), padded to one width, and the line with its leading and trailing white
  space trimmed (a stack frame's tab too); newest first unless ``--forward``. The ``pod`` label
  (else ``pod_name``, ``host``, ``hostname``, ``instance``) is the host;
- ``kubectl``: ``kubectl logs --timestamps``, ``2024-03-11T14:02:17.418123456Z <line>``;
- ``jenkins``: a Jenkins pipeline's console log under ``timestamps {}`` (the Timestamper plugin),
  ``[2024-03-11T14:02:17.418Z] <line>``;
- ``grafana``: Grafana's "Download logs" as text (Loki's lines, under a few ``Common labels:``
  lines), ``1710165737418<TAB>2024-03-11T14:02:17.418Z<TAB><line>``; before Grafana 10, the
  browser's local time alone, ``2024-03-11 15:02:17.418<TAB><line>`` or ``2024-03-11T15:02:17+01:00<TAB><line>``;
- ``syslog``: RFC 3164, ``Mar 11 14:02:17 host java[4242]: <line>`` (no year: the time is not used);
- ``syslog_tag``: RFC 3164 with one name before the line, ``Mar 11 14:02:17 app-worker-3: <line>``
  (a host or a program tag, which names the writer: the host);
- ``kibana_paste``: a row copied out of Kibana's Discover, ``Mar 11, 2024 @ 14:02:17.418<TAB><line>``
  (after a tab where the copy took the empty first column too);
- ``tanuki``: the Java Service Wrapper (Tanuki; Mule, Nexus, ActiveMQ and other services run by it),
  the JVM's console lines in its log file, ``INFO   | jvm 1    | 2024/03/11 14:02:17 | <line>``
  (``wrapper.logfile.format``'s default ``LPTM``), with or without the level, thread and time
  (to the millisecond with ``Z``) columns, down to its console's default ``jvm 1    | <line>``;
  the time is the machine's;
- ``compose``: ``docker compose logs``, ``service-1  | <line>`` (the service is the host), with
  ``--timestamps`` ``service-1  | 2024-03-11T14:02:17.418123456Z <line>``;
- ``kubectl_prefix``: ``kubectl logs --prefix`` of several pods (``-l app=orders``),
  ``[pod/<pod>/<container>] <line>``, with ``--timestamps`` ``[pod/<pod>/<container>] <RFC 3339> <line>``
  (the pod is the host);
- ``stern``: stern's default output, ``<pod> <container> <line>``, ``<namespace> <pod> <container> <line>``
  for several namespaces; with ``--timestamps`` the line follows ``2024-03-11T14:02:17.418123456Z``
  (or ``03-11 14:02:17``, ``--timestamps=short``: no year, the time is not used). Names are
  Kubernetes' lower-case DNS labels, each taken to open with a letter, so that an inner line's
  own date is never read as a container (the pod is the host);
- ``grep``: the output of ``grep -r`` / ``-H`` / ``zgrep`` over several log files, ``server.log.2023-12-09-08:<line>``,
  with ``-n`` ``server.log:1234:<line>`` (``-`` for context lines): the file names the host
  (``host-a.log:<line>``), or, where its name says only what it is, its directory does
  (``broker-1/server.log:<line>``), unless that too (``logs/``);
- ``json_message``: a shipper's JSON (Vector, Fluent Bit, Filebeat to a file) whose ``message``
  holds the application's line as it was written, ``{"host":..,"message":"<line>","timestamp":..}``;
  peeled only where that line is a record head or a continuation (else it is a JSON log record).
  stern's ``--output json`` too, ``{"message":"<line>","nodeName":..,"namespace":..,"podName":..,"containerName":..}``
  (the pod is the host), where ``--timestamps`` puts the kubelet's RFC 3339 time before the line
  (an envelope with no time of its own: that time is the wrapper's);
- ``name``: a name and a colon before each line, ``orders-1: <line>`` (a tool that tags the lines
  it merges, a paste's own labels; the name is the host), not an exception's ``a.b.Class: message``
  nor ``CamelCase: ..``;
- ``host``: a host's name before a line that opens with a date, a bracket or a JSON record,
  ``orders-1 {"@timestamp":..}``, ``orders-1 2024-03-11 14:02:17 ..`` (a shipper's or a
  terminal's prefix; a level word is no host);
- ``lost_brace``: a JSON record whose opening ``{`` was lost in a paste.

ANSI colour codes (consoles, ``docker compose``) are removed before and after peeling. A piece
of a line is peeled as its wrapper's ``_partial`` (``PIECES``: ``cri_partial``,
``docker_json_partial``): the next line of its file continues it without a line break.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..layouts._common import ANY_TIME_OF_DAY, EXCEPTION_LINE, KIBANA_TIME, SEP
from .paths import GENERIC_DIRS, GENERIC_FILES

ANSI = r"\x1b\[[0-9;?]*[A-Za-z]"
_ISO_ZONED = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)"
_PROGRAM = rf"(?!{EXCEPTION_LINE})[\w.@/-]+(?:\[\d+\])?: "
"""syslog's and journald's program and pid (``java[4242]: ``); not an exception class, which a
stack trace's first line opens with behind a wrapper that names a host or stream first."""
_CRI_TAG = r"(?:stdout|stderr) [FP](?: |$)"
CRI_ONLY = rf"^({_ISO_ZONED}) {_CRI_TAG}"
"""A line in the CRI shape, read by its first words: the time, the stream and the tag."""
_GRAFANA_TIME = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
_AWS_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{6})?\+00:00"
"""``aws logs tail``'s time: Python's ``isoformat`` of a UTC ``datetime`` (kubectl writes ``Z``)."""
_DYNO = r"(?:app|heroku)\[([\w.-]+)\]: "
"""Heroku's source and dyno (``app[worker.1]: ``): the dyno, ``worker.3`` or ``web-123-456``, is group 1."""
_LOKI_LABELS = r'\{(?:[A-Za-z_]\w*="(?:[^"\\]|\\.)*"(?:, |(?=\})))*\}'
"""Loki's labels as Go prints them, ``{app="orders", pod="orders-0"}`` (``{}``: none)."""
_GREP_PATH = r"(?:\.?/)?(?:[\w.@+-]+/)*?((?:[\w.@+-]+/)?[\w.@+-]*?)\.(?:log|out|txt)(?:\.[\w-]+)*"
"""The file name ``grep`` puts before a line it found in one of several files (``-r``, ``-H``,
``zgrep``): a log file's name, perhaps rotated (``server.log.2023-12-09-08``, ``app.log.1.gz``),
after its directories; group 1 is the directory it is in and its name up to ``.log``
(``broker-1/server``), which name the host (``_grep_host``)."""
_TANUKI = (
    r"(?:(?:DEBUG|INFO|STATUS|WARN|ERROR|FATAL|ADVICE|NOTICE) *\| )?(?:[a-z][\w-]* *\| )?(?:jvm \d+|wrapper) *\| "
    r"(?:(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d{3})?) \| )?"
)
"""The Java Service Wrapper's columns before a line, in the order it writes them, each padded and
closed by `` | ``: the level (its own include ``STATUS``, ``ADVICE`` and ``NOTICE``), the thread,
the prefix (``jvm <n>``, or ``wrapper`` for its own lines), the time (group 1). Its other columns
(quiet time, uptime, process ids) are not read."""
_LEVEL_WORD = r"(?i:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|SEVERE|FATAL|CRITICAL)(?![\w.-])"
"""A level, which a ``name`` or ``host`` prefix never is (``INFO: ..``, java.util.logging's second line)."""
_LABEL = r"[a-z][a-z0-9-]*"
"""A namespace's or container's name as stern prints it (a DNS label, here opening with a letter)."""
SHAPES = {
    "cri": (rf"(?s){CRI_ONLY}(.*)$", "$1", "", "$2"),
    "journald": (rf"(?s)^({_ISO_ZONED}) (?!{ANY_TIME_OF_DAY} )(\S+) {_PROGRAM}(.*)$", "$1", "$2", "$3"),  # a host is no time of day
    "heroku": (rf"(?s)^({_ISO_ZONED}) {_DYNO}(.*)$", "$1", "$2", "$3"),
    "aws_tail": (rf"(?s)^({_AWS_TIME}) (\S+) (.*)$", "$1", "$2", "$3"),
    "aws_tail_short": (r"(?s)^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d) (.*)$", "$1Z", "", "$2"),  # UTC, not the log's zone
    "logcli": (rf"(?s)^({_ISO_ZONED}) ({_LOKI_LABELS}) +(.*)$", "$1", "$2", "$3"),  # $2: the labels (``HOST_LABELS``)
    "kubectl": (rf"(?s)^({_ISO_ZONED}) (.*)$", "$1", "", "$2"),
    "jenkins": (rf"(?s)^\[({_ISO_ZONED})\] (.*)$", "$1", "", "$2"),
    "grafana": (rf"(?s)^(?:(\d{{10,16}})\t)?({_GRAFANA_TIME})\t(.*)$", "$2", "", "$3"),  # $1: the epoch milliseconds
    "syslog": (rf"(?s)^([A-Z][a-z]{{2}} [ \d]\d {ANY_TIME_OF_DAY}) (\S+) {_PROGRAM}(.*)$", "", "$2", "$3"),
    "syslog_tag": (rf"(?s)^[A-Z][a-z]{{2}} [ \d]\d {ANY_TIME_OF_DAY} (?!{EXCEPTION_LINE})([\w.@/-]+)(?:\[\d+\])?: (.*)$", "", "$1", "$2"),
    "kibana_paste": (rf"(?s)^\t?({KIBANA_TIME})\t(.*)$", "$1", "", "$2"),  # a row copied with its empty first column: a tab
    "tanuki": (rf"(?s)^{_TANUKI}(.*)$", "$1", "", "$2"),
    "compose": (rf"(?s)^(?!\d{{4}}-\d\d-\d\d\s)([A-Za-z0-9][\w.-]*?)\s+\| ?(?:({_ISO_ZONED}) )?(.*)$", "$2", "$1", "$3"),
    "kubectl_prefix": (rf"(?s)^\[pod/([^/\]\s]+)/[^\]\s]+\] (?:({_ISO_ZONED}) )?(.*)$", "$2", "$1", "$3"),
    "stern": (rf"(?s)^(?:{_LABEL} )?([a-z][a-z0-9.-]*) {_LABEL} (?:({_ISO_ZONED}) |\d\d-\d\d \d\d:\d\d:\d\d )?(.*)$", "$2", "$1", "$3"),
    "grep": (rf"(?s)^{_GREP_PATH}(?:[:-]\d+(?=[:-](?!\d\d[:-]\d\d)))?[:-](.*)$", "", "$1", "$2"),  # $1: dir/name
    "name": (
        rf"(?s)^(?!{_LEVEL_WORD}:|[A-Z][a-z]+[A-Z][A-Za-z]*: )([A-Za-z0-9][\w@-]{{0,62}}(?:\.[a-z0-9][\w@-]{{0,62}})*): (.*)$",
        "",
        "$1",
        "$2",
    ),
    "host": (rf"(?s)^(?!{_LEVEL_WORD} )([A-Za-z0-9][\w.@-]{{0,62}}) (?=[\[{{\t]|\d{{4}}-\d\d-\d\d)(.*)$", "", "$1", "$2"),
}
"""Wrapper -> (regex, then the time, host and inner-line groups): one regex extracts all three.
The inner line is any text (``(?s)``): Java's ``.`` stops at U+0085, U+2028 and U+2029, which
a line may hold (Hadoop's line reader breaks at LF and CR only)."""
WRAPPERS = ("docker_json", *SHAPES, "json_message", "lost_brace", "ansi")
"""``ansi``: colour codes alone, around an otherwise plain line."""
ENVELOPES = ("docker_json", "cri")
"""Wrappers in a shape no application writes: always peeled, and they may cut a line in pieces."""
NAMING_HOSTS = (
    "journald",
    "heroku",
    "aws_tail",
    "logcli",
    "syslog",
    "syslog_tag",
    "compose",
    "kubectl_prefix",
    "stern",
    "json_message",
    "grep",
    "name",
    "host",
)
"""Wrappers that name the writer of each line, so that one file may hold several writers' lines."""
PIECES = tuple(f"{name}_partial" for name in ENVELOPES)
"""Wrappers of a piece of a line, which the next line of the file continues."""


_SHIPPED = "timestamp string, `@timestamp` string, time string, host string, hostname string, podName string, message string, msg string"
"""The fields of a shipper's envelope (a ``host`` that is an object reads as null), and of
stern's ``--output json`` (``podName``, the host)."""


def strip_ansi(value: Column) -> Column:
    """``value`` without ANSI escape sequences (only lines holding an ESC pay for the regex)."""
    return F.when(value.contains("\x1b"), F.regexp_replace(value, ANSI, "")).otherwise(value)


def kibana_row(value: Column) -> Column:
    """Whether ``value`` may be a Kibana Discover row copied with its first column, the empty one
    of the expand toggle: a tab, then a month's name (``<TAB>Apr 3, 2023 @ ..``). No stack frame
    opens so (``<TAB>at ..``, ``<TAB>... 12 more``): character tests only."""
    return value.startswith("\t") & F.substring(value, 2, 1).between("A", "Z") & (F.substring(value, 5, 1) == " ")


def wrapper_of(value: Column) -> Column:
    """Name of the wrapper around ``value``, else null; cheap character tests guard each regex."""
    first = F.substring(value, 1, 1)
    digit = first.between("0", "9")
    iso_t = digit & (F.substring(value, 11, 1) == "T")
    upper = first.between("A", "Z")
    first_alnum = digit | upper | first.between("a", "z")
    kind = F.when(value.startswith('{"log":'), F.lit("docker_json"))
    for name in SHAPES:
        gate = {
            "syslog": upper,
            "syslog_tag": upper,
            "kibana_paste": upper | kibana_row(value),
            "compose": value.contains("|"),
            "tanuki": value.contains(" | "),
            "grafana": digit & value.contains("\t"),
            "logcli": iso_t & value.contains(" {"),
            "kubectl_prefix": value.startswith("[pod/"),
            "stern": first.between("a", "z"),
            "grep": value.contains(".log") | value.contains(".out") | value.contains(".txt"),
            "jenkins": value.startswith("[") & (F.substring(value, 12, 1) == "T"),
            "name": value.contains(": "),
            "host": first_alnum & value.contains(" "),
        }.get(name, iso_t)
        kind = kind.when(gate & value.rlike(SHAPES[name][0]), F.lit(name))
    kind = kind.when(value.startswith("{") & (value.contains('"message"') | value.contains('"msg"')), F.lit("json_message"))
    return kind.when(value.startswith('"') & value.rlike(r'^"[\w@.]+"\s*:.*\}\s*$'), F.lit("lost_brace"))


KUBECTL_ONLY = (
    rf"^\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{{1,9}})?(?:Z|(?!\+00:00 \S+ )[+-]\d\d:?\d\d) "
    rf"(?!{_CRI_TAG}|\S+ {_PROGRAM}|{_DYNO}|{_LOKI_LABELS} |\S*\x1b|\S+ \S*\x1b)"
)
"""A line that ``wrapper_of`` finds in ``kubectl``'s shape: its time (``_ISO_ZONED``) and a
space, and not in the CRI, journald, Heroku, ``aws logs tail`` or logcli shapes, which
``wrapper_of`` tries first, nor colour codes in the two words journald's shape reads
(``wrapper_of`` reads the line without them). A ``+00:00`` time before two more words is left
to ``wrapper_of`` (``aws logs tail``'s shape, told by its fraction; kubectl writes ``Z``, which
costs no second look). Anchored, it reads the line's first words only, where ``SHAPES``'
regexes read to the end of the line."""
PREFIXED = {"cri": CRI_ONLY, "kubectl": KUBECTL_ONLY}
"""Wrappers whose prefix alone, the line's first words, tells them (``prefixed_wrapper``)."""
_WORDS_BEFORE = {"cri": 3, "kubectl": 1}
"""Words of a ``PREFIXED`` wrapper's prefix, before its inner line (``peel`` splits them off)."""


HOST_LABELS = {"logcli": ("pod", "pod_name", "host", "hostname", "instance")}
"""Wrapper -> the labels that name the host, the first present taken (Loki's labels as logcli
prints them, ``{app="orders", pod="orders-0"}``, sorted by name, values quoted)."""


def _labelled_host(labels: Column, names: tuple[str, ...]) -> Column:
    """The value of the first of ``names`` among Loki's ``labels`` text, else empty."""
    return F.coalesce(*[F.nullif(F.regexp_extract(labels, rf'[{{ ]{name}="([^"]*)"', 1), F.lit("")) for name in names], F.lit(""))


def _grep_host(place: Column) -> Column:
    """The host a ``grep`` output names, from ``dir/name`` (``_GREP_PATH``'s group 1): the file's
    name, as ``paths.infer_host`` reads it, unless it says only what the file is (``server``,
    ``app``); then its directory, unless that too (``logs``); else none (the output file's host)."""
    name, folder = F.substring_index(place, "/", -1), F.substring_index(place, "/", 1)
    generic = rf"(?i){GENERIC_FILES.pattern}"
    folder_host = F.when(place.contains("/") & ~folder.rlike(rf"(?i){GENERIC_DIRS.pattern}|{GENERIC_FILES.pattern}"), folder)
    return F.when(~name.rlike(generic) & (name != ""), name).otherwise(F.coalesce(folder_host, F.lit("")))


ESCAPED = {"syslog": {"#011": "\t", "#012": "\n"}, "syslog_tag": {"#011": "\t", "#012": "\n"}}
"""Wrapper -> the escapes it writes for control characters in its inner line: rsyslog's
``#`` and octal code (``$EscapeControlCharactersOnReceive``, on by default), a stack frame's
tab as ``#011``, and the line breaks of a message sent whole as ``#012``."""


def _unescaped(inner: Column, escapes: dict[str, str]) -> Column:
    for escape, character in escapes.items():
        inner = F.when(inner.contains(escape), F.regexp_replace(inner, escape, character)).otherwise(inner)
    return inner


def prefixed_wrapper(value: Column, prefix: str) -> Column:
    """``prefix`` (a ``PREFIXED`` wrapper) where ``wrapper_of`` finds it around ``value``,
    else null: one regex anchored on the line's first words."""
    return F.when(value.rlike(PREFIXED[prefix]), F.lit(prefix))


def _peel_words(value: Column, words: int, tagged: bool) -> Column:
    """``[ts, "", inner, piece]`` of a line whose inner line follows ``words`` words, the first
    its RFC 3339 time (which holds no space), the last, where ``tagged``, the CRI's tag: split
    at spaces, with no regex."""
    parts = F.split(value, " ", words + 1)
    inner = F.coalesce(F.try_element_at(parts, F.lit(words + 1)), F.lit(""))  # "<ts> stdout F": no inner line
    piece = F.when(parts[words - 1] == "P", F.lit("P")).otherwise(F.lit("")) if tagged else F.lit("")
    return F.array(parts[0], F.lit(""), inner, piece)


def peel(value: Column, wrapper: Column) -> Column:
    """Array ``[ts, host, inner, piece]`` of a line (ANSI codes removed) whose wrapper is
    ``wrapper`` (empty strings where the wrapper has no such part; ``piece`` is ``P`` where the
    line is a piece of a longer one, see ``ENVELOPES``). One CASE, so that callers can keep it
    in a column of its own and read its items without copying the expression."""
    whole = F.lit("")
    docker = F.from_json(value, "log string, stream string, time string")
    docker_piece = F.when(~docker["log"].endswith("\n"), F.lit("P")).otherwise(whole)  # an envelope read as no JSON is no piece
    fields = F.when(
        wrapper == "docker_json", F.array(docker["time"], F.lit(""), F.regexp_replace(docker["log"], r"\r?\n$", ""), docker_piece)
    )
    for name, (regex, ts, host, inner) in SHAPES.items():
        if name in _WORDS_BEFORE:
            parts = _peel_words(value, _WORDS_BEFORE[name], tagged=name == "cri")
        else:
            parts = F.concat(F.split(F.regexp_replace(value, regex, SEP.join((ts, host, inner))), SEP, 3), F.array(whole))
        if name in ESCAPED:
            parts = F.array(parts[0], parts[1], _unescaped(parts[2], ESCAPED[name]), parts[3])
        if name in HOST_LABELS:
            parts = F.array(parts[0], _labelled_host(parts[1], HOST_LABELS[name]), parts[2], parts[3])
        if name == "grep":
            parts = F.array(parts[0], _grep_host(parts[1]), parts[2], parts[3])
        fields = fields.when(wrapper == name, parts)
    shipped = F.from_json(value, _SHIPPED)
    message = F.regexp_replace(F.coalesce(shipped["message"], shipped["msg"]), r"\r?\n$", "")
    envelope_time = F.coalesce(shipped["timestamp"], shipped["@timestamp"], shipped["time"])
    stamped = envelope_time.isNull() & message.rlike(f"^{_ISO_ZONED} ")  # stern --output json --timestamps
    fields = fields.when(
        wrapper == "json_message",
        F.array(
            F.when(stamped, F.substring_index(message, " ", 1)).otherwise(F.coalesce(envelope_time, F.lit(""))),
            F.coalesce(shipped["host"], shipped["hostname"], shipped["podName"], F.lit("")),
            F.when(stamped, F.regexp_replace(message, f"^{_ISO_ZONED} ", "")).otherwise(message),
            whole,
        ),
    )
    fields = fields.when(wrapper == "lost_brace", F.array(F.lit(""), F.lit(""), F.concat(F.lit("{"), value), whole))
    return fields.when(wrapper == "ansi", F.array(F.lit(""), F.lit(""), value, whole))
