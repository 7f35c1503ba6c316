"""One JSON object per line: logstash-logback-encoder, ECS, log4j2 JSON layouts, GCP, Bunyan / pino,
Serilog's compact JSON (CLEF: ``CompactJsonFormatter``'s message template and properties, or
``RenderedCompactJsonFormatter``'s rendered message; what Seq exports),
.NET's Microsoft.Extensions.Logging ``json`` console (``Timestamp``, ``LogLevel``, ``Category``, ``Message``, ``Exception``).

One ``from_json`` with one schema reads every family; each field is the first one present:

- timestamp: ``@timestamp`` (logstash, ECS / log4j2 EcsLayout), ``timestamp`` (text, or GCP's
  ``{seconds, nanos}``), ``time`` (GCP, Bunyan ISO text; pino epoch millis), log4j2 JsonLayout's
  ``instant: {epochSecond, nanoOfSecond}`` or ``timeMillis``, GCP's ``timestampSeconds`` /
  ``timestampNanos``, python-json-logger's ``asctime``, Serilog's ``@t``, .NET's ``Timestamp``,
  ``ts`` (Spark's structured logging: ISO text; zap: epoch seconds);
- level: ``level`` (names, or Bunyan / pino numbers 10-60), ``log.level`` / ``log: {level}``,
  ``severity`` / ``logging.googleapis.com/severity`` (GCP; ``DEFAULT`` is no level,
  ``ALERT``/``EMERGENCY`` are FATAL), ``levelname``, Serilog's ``@l`` (none: Information), .NET's ``LogLevel``;
- logger: ``logger_name``, ``loggerName``, ``log.logger`` / ``log: {logger}``, ``logger``, GCP's
  ``logging.googleapis.com/labels`` / ``labels`` ``loggerName``, ``jsonPayload.logger``, ``name``,
  Serilog's ``SourceContext``, .NET's ``Category``;
- thread: ``thread_name``, ``process.thread.name`` / ``process: {thread: {name}}``, ``thread``,
  ``jsonPayload.thread``, ``threadName``;
- message: ``message``, ``msg``, GCP's ``textPayload`` / ``jsonPayload.message``, Serilog's ``@m``, or
  its template ``@mt`` rendered with the record's properties (``rendered``), .NET's ``Message``;
- stack trace, appended to the message: ``stack_trace``, ``error.stack_trace`` / ``error:
  {stack_trace}``, log4j2's ``thrown`` (``extendedStackTrace`` as text, or its frames as JSON,
  after ``name: message``), Bunyan / pino ``err.stack``, ECS ``error.type: error.message``,
  Serilog's ``@x``, .NET's ``Exception``, ``exception`` (text, or Spark's ``{class, msg,
  stacktrace}`` with its frames as JSON);
- a Kafka client's context in fields beside the message (KafkaJS's ``groupId``, ``memberId``,
  ``generationId``, ``memberAssignment``, ...): appended to the message's first line as written,
  `` {"groupId":"g","memberId":"m",...}``, so templates read them. KafkaJS's own log creator writes
  them after the message; a custom one (``logCreator``) may write them in any order, before it
  (winston's ``json`` format sorts the keys), or nested in a field of their own (KafkaJS's
  documented winston example, ``{"extra":{..},"level":"info","message":"..."}``), so the templates
  read them in any order. The logger is then ``extra.logger``, or, where no field names one, KafkaJS
  (``kafkajs``) when the message opens with one of KafkaJS's namespaces and the record names a
  group, member or client (``_common.KAFKAJS_NAMESPACE``);
- a record nested as the one field of an envelope (``{"applicationLog":{..}}``): the inner record
  (``unwrapped``);
- a franz-go group record (zap through ``kzap``, ``log/slog``'s JSON through ``kslog``: ``"msg":"synced",
  "group":"g","assigned":{"t":[0,1]}``): franz-go's fields follow its message in ``kgo.BasicLogger``'s
  form, ``synced; group: g, assigned: {"t":[0,1]}`` (``_common.franz_go_text``), a field that is no
  text as its JSON.
"""

from __future__ import annotations

import json
from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from . import _common as c

NAME = "json_lines"
DESCRIPTION = "JSON lines (logstash, ECS, log4j2 JsonLayout / JsonTemplateLayout, GCP, Bunyan / pino)"
EXAMPLE = (
    '{"@timestamp":"2024-03-11T14:02:17.418Z","level":"INFO","thread_name":"main",'
    '"logger_name":"org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",'
    '"message":"[Consumer clientId=consumer-orders-app-1, groupId=orders-app] (Re-)joining group"}'
)
FIRST_CHARS = "{"

_S = StringType()
GCP = "logging.googleapis.com/"


def _struct(*names: str, **nested: StructType) -> StructType:
    return StructType([StructField(name, _S) for name in names] + [StructField(k, v) for k, v in nested.items()])


AROUND_MESSAGE = r'^\{\s*(.*?),?\s*"(?:message|msg)"\s*:\s*"(?:[^"\\]|\\.)*"\s*,?\s*(.*?)\s*\}[\s.]*$'
"""A record's fields before its message (group 1) and after it (group 2), as written (a paste's
full stop after the record aside). KafkaJS's own log creator writes ``level``, ``timestamp``,
``logger``, ``message``, then the line's fields."""
CLIENT_KEYS = ('"groupId"', '"memberId"')
"""The fields that make a record's other fields its client's context (``client_context``)."""
_FLAT = [
    "@timestamp",
    "timestamp",
    "time",
    "ts",
    "timeMillis",
    "timestampSeconds",
    "timestampNanos",
    "asctime",
    "@t",
    "level",
    "log.level",
    "severity",
    f"{GCP}severity",
    "levelname",
    "@l",
    "logger_name",
    "loggerName",
    "log.logger",
    "logger",
    "name",
    "SourceContext",
    "thread_name",
    "process.thread.name",
    "thread",
    "threadName",
    "message",
    "msg",
    "textPayload",
    "@m",
    "@mt",
    "stack_trace",
    "error.stack_trace",
    "error.type",
    "error.message",
    "@x",
    "exception",
]
SCHEMA = StructType(
    [StructField(name, _S) for name in _FLAT]
    + [
        StructField("log", _struct("level", "logger")),
        StructField("process", _struct(thread=_struct("name"))),
        StructField("error", _struct("stack_trace")),
        StructField("instant", _struct("epochSecond", "nanoOfSecond")),
        StructField("thrown", _struct("name", "message", "extendedStackTrace")),
        StructField("err", _struct("stack")),
        StructField(f"{GCP}labels", _struct("loggerName")),
        StructField("labels", _struct("loggerName")),
        StructField("jsonPayload", _struct("message", "logger", "thread")),
        StructField("extra", _struct("timestamp", "logger")),
    ]
)
"""A field holding another JSON type than declared (GCP's ``timestamp`` object, log4j2's
``extendedStackTrace`` array, pino's numeric ``level``) is read as its JSON text."""
DOTNET = _struct("Timestamp", "LogLevel", "Category", "Message", "Exception")
""".NET's ``json`` console's fields, read by a schema of their own: Spark resolves a field's name
regardless of case, and ``Message`` and ``Timestamp`` would be ambiguous beside ``message`` and
``timestamp``. Only lines holding ``"LogLevel"`` are parsed with it."""
_MESSAGE_FIELDS = ("message", "msg", "textPayload", "@m", "@mt", "Message")
"""The fields that hold a record's message (``jsonPayload.message`` aside)."""
_MESSAGE_KEYS = tuple(f'"{name}"' for name in _MESSAGE_FIELDS)
LEVEL_NAMES = {
    "10": "TRACE",
    "20": "DEBUG",
    "30": "INFO",
    "40": "WARN",
    "50": "ERROR",
    "60": "FATAL",
    "DEFAULT": "",
    "ALERT": "FATAL",
    "EMERGENCY": "FATAL",
}
"""Bunyan / pino level numbers and GCP severities that log4j has no name for."""
FRAME = r'\{"class":"([^"]*)","method":"([^"]*)"(?:,"file":"([^"]*)")?(?:,"line":(-?\d+))?[^{}]*\},?'
"""One frame of log4j2 JsonLayout's ``extendedStackTrace`` array (its keys in the order it writes them)."""


def sniff(sample_lines) -> bool:
    lines = [line for line in sample_lines if line.strip()]
    return bool(lines) and sum(_is_record(line) for line in lines) >= max(1, 0.3 * len(lines))


def _is_record(line: str) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    if isinstance(obj, dict) and len(obj) == 1 and isinstance(next(iter(obj.values())), dict):
        obj = next(iter(obj.values()))  # a record in an envelope of one field (``unwrapped``)
    if not isinstance(obj, dict):
        return False
    payload = obj.get("jsonPayload")
    return any(k in obj for k in _MESSAGE_FIELDS) or (isinstance(payload, dict) and "message" in payload)


ENVELOPE = r'^\{\s*"[^"\\]*"\s*:\s*\{'
"""A JSON line whose first field is an object: perhaps a record in an envelope (``unwrapped``)."""


def unwrapped(value: Column) -> Column:
    """A record nested as the one field of an envelope (``{"applicationLog":{..,"message":".."}}``,
    a sidecar's or shipper's wrapping of the application's JSON) as the inner record; any other
    line as it is. Its fields are then read by what they hold, as a top-level record's."""
    fields = F.from_json(value, "map<string,string>", {"mode": "PERMISSIVE"})
    inner = F.map_values(fields)[0]
    return F.when(value.rlike(ENVELOPE) & (F.size(fields) == 1) & F.ltrim(inner).startswith("{"), inner).otherwise(value)


def _parsed(value: Column) -> Column:
    return F.from_json(value, SCHEMA, {"mode": "PERMISSIVE"})


def _dotnet(value: Column) -> Column:
    """.NET's fields (``DOTNET``) where the line holds ``"LogLevel"``, else null. Its own column, not
    a field of ``_parsed``'s struct: where queries run interpreted (a small incident's), a struct
    rebuilt around that one is evaluated again for each of its fields."""
    return F.when(value.contains('"LogLevel"'), F.from_json(value, DOTNET, {"mode": "PERMISSIVE"}))


HOLE = r"\{[@$]?(\w+)(?:[,:][^{}]*)?\}"
"""A hole of a Serilog / Microsoft.Extensions.Logging message template: ``{Name}``, ``{@Name}``
(destructured), ``{$Name}`` (stringified), ``{Name,width:format}``, ``{0}``."""
TEMPLATE_PIECE = rf"\{{\{{|\}}\}}|{HOLE}|[^{{}}]+|[{{}}]"
"""A template's pieces, left to right: ``{{`` or ``}}`` (a brace written as text), a hole, text."""
_PROPERTIES = "map<string,string>"
"""A CLEF record's top-level fields by name; a number, object or array as its JSON text."""


def rendered(template: Column, value: Column) -> Column:
    """``template`` (Serilog's ``@mt``) with each hole replaced by the property it names in the
    record ``value``, as text (Serilog quotes strings; the Kafka client's own text is wanted
    here, as it logged it); a hole naming no property is left as written. Serilog's
    ``CompactJsonFormatter``, its console default for JSON, writes only the template: KafkaFlow,
    for one, logs librdkafka's lines as ``"librdkafka {Message}"``."""
    properties = F.from_json(value, _PROPERTIES)

    def piece(text: Column) -> Column:
        name = F.regexp_extract(text, f"^{HOLE}$", 1)
        return (
            F.when(text == "{{", F.lit("{"))
            .when(text == "}}", F.lit("}"))
            .when(name != "", F.coalesce(properties[name], text))
            .otherwise(text)
        )

    return F.when(
        template.isNotNull(), F.array_join(F.transform(F.regexp_extract_all(template, F.lit(TEMPLATE_PIECE), F.lit(0)), piece), "")
    )


def _message(r: Column, dotnet: Column, value: Column) -> Column:
    return F.coalesce(
        r["message"],
        r["msg"],
        r["textPayload"],
        r["jsonPayload"]["message"],
        r.getField("@m"),
        rendered(r.getField("@mt"), value),
        dotnet["Message"],
    )


def head(value: Column) -> Column:
    """A JSON object line with a message field (checked without a full parse first)."""
    cheap = value.startswith("{")
    cheap = cheap & F.reduce(F.array(*[value.contains(key) for key in _MESSAGE_KEYS]), F.lit(False), lambda a, b: a | b)
    record = unwrapped(value)
    return cheap & _message(_parsed(record), _dotnet(record), record).isNotNull()


def _seconds(seconds: Column, nanos: Column) -> Column:
    """``seconds.nanos`` text (epoch seconds with a 9-digit fraction); null without seconds."""
    return F.when(seconds.isNotNull() & (seconds != ""), F.concat(seconds, F.lit("."), F.lpad(F.coalesce(nanos, F.lit("0")), 9, "0")))


def _timestamp(r: Column, dotnet: Column) -> Column:
    """The record's time as text: ISO text, epoch millis, or epoch seconds with a fraction; a time
    field that holds no digit (a paste's ``"timestamp":"XXX"``, redacted) is none."""
    ts = r["timestamp"]
    gcp_object = _seconds(
        F.regexp_extract(ts, r'"seconds"\s*:\s*"?(\d+)', 1), F.nullif(F.regexp_extract(ts, r'"nanos"\s*:\s*(\d+)', 1), F.lit(""))
    )
    timed = [F.when(text.rlike(r"\d"), text) for text in (r.getField("@timestamp"), ts, r["time"], r["ts"])]
    return F.coalesce(
        timed[0],
        F.when(ts.startswith("{"), gcp_object).otherwise(timed[1]),
        timed[2],
        timed[3],
        _seconds(r["instant"]["epochSecond"], r["instant"]["nanoOfSecond"]),
        r["timeMillis"],
        _seconds(r["timestampSeconds"], r["timestampNanos"]),
        r["asctime"],
        r.getField("@t"),
        dotnet["Timestamp"],
        r["extra"]["timestamp"],
    )


def _level(r: Column, dotnet: Column) -> Column:
    level = F.coalesce(
        r["level"],
        r.getField("log.level"),
        r["log"]["level"],
        r["severity"],
        r.getField(f"{GCP}severity"),
        r["levelname"],
        r.getField("@l"),
        dotnet["LogLevel"],
        F.when(r.getField("@m").isNotNull() | r.getField("@mt").isNotNull(), F.lit("Information")),
    )  # Serilog leaves Information out
    names = F.create_map(*[F.lit(x) for pair in LEVEL_NAMES.items() for x in pair])
    return F.coalesce(names[F.upper(level)], level)


def _frames(trace: Column) -> Column:
    """A JSON array of frames (``FRAME``) as a Java stack trace's lines, ``at class.method(file:line)`` each."""
    return F.regexp_replace(F.regexp_replace(trace, FRAME, "\n\tat $1.$2($3:$4)"), r"^\[|\]$", "")


SPARK_EXCEPTION = _struct("class", "msg", "stacktrace")
"""Spark's structured logging (``SparkLayout.json``): ``exception: {class, msg, stacktrace: [frames]}``."""


def _exception(exception: Column) -> Column:
    """An ``exception`` field: Spark's object as ``class: msg`` and its frames, or the text itself."""
    spark = F.from_json(exception, SPARK_EXCEPTION)
    summary = F.concat_ws(": ", spark["class"], spark["msg"])
    return F.when(exception.startswith("{"), F.concat(summary, F.coalesce(_frames(spark["stacktrace"]), F.lit("")))).otherwise(exception)


def _stack(r: Column, dotnet: Column) -> Column:
    thrown = r["thrown"]
    trace = thrown["extendedStackTrace"]
    frames = _frames(trace)
    summary = F.concat_ws(": ", thrown["name"], thrown["message"])
    from_thrown = F.when(trace.startswith("["), F.concat(summary, frames)).otherwise(trace)
    return F.coalesce(
        r["stack_trace"],
        r.getField("error.stack_trace"),
        r["error"]["stack_trace"],
        from_thrown,
        F.when(thrown.isNotNull(), F.nullif(summary, F.lit(""))),
        r["err"]["stack"],
        F.when(r.getField("error.message").isNotNull(), F.concat_ws(": ", r.getField("error.type"), r.getField("error.message"))),
        r.getField("@x"),
        dotnet["Exception"],
        _exception(r["exception"]),
    )


def client_context(value: Column, message: Column) -> Column:
    """`` {"groupId":..}``: the fields beside the message, as written, of a record that names a
    consumer group or member, or a KafkaJS line naming only its client (``_kafkajs``: a
    connection's ``Response Heartbeat(..)`` and its ``error``); "" otherwise. The fields before
    the message are kept where they name one (KafkaJS's own order puts only the envelope there)."""
    before, after = F.regexp_extract(value, AROUND_MESSAGE, 1), F.regexp_extract(value, AROUND_MESSAGE, 2)
    keys = (*CLIENT_KEYS, '"clientId"')
    fields = F.concat_ws(",", F.when(c.contains_any(before, keys), before), F.nullif(after, F.lit("")))
    kafkajs = c.contains_any(value, CLIENT_KEYS) | _kafkajs(message, value).isNotNull()
    return F.when(kafkajs & (fields != ""), F.concat(F.lit(" {"), fields, F.lit("}"))).otherwise(F.lit(""))


def _kafkajs(message: Column, value: Column) -> Column:
    """``kafkajs`` for a record that names no logger but is KafkaJS's by its namespace and its
    fields (``_common.KAFKAJS_NAMESPACE``, a group, member or client)."""
    return F.when(c.contains_any(value, (*CLIENT_KEYS, '"clientId"')) & message.rlike(f"^{c.KAFKAJS_NAMESPACE}"), F.lit("kafkajs"))


def franz_go(text: Column, value: Column) -> Column:
    """``text`` with a franz-go record's fields after it (``_common.franz_go_text``), in franz-go's
    order; the line is read as a map of its top-level fields only where its ``msg`` is one of
    franz-go's messages and it has a ``group`` (or its ``why`` names one: ``_common.FRANZ_GO_FETCHED``)."""
    group_line = value.contains('"group"') & value.rlike(rf'"msg"\s*:\s*"{c.FRANZ_GO_WORDS}"')
    positions = value.contains(f'"why":"{c.FRANZ_GO_FETCHED}') & value.rlike(rf'"msg"\s*:\s*"{c.FRANZ_GO_POSITIONS}"')
    written = group_line | positions
    fields = F.map_entries(F.from_json(value, "map<string,string>", {"mode": "PERMISSIVE"}))
    return c.franz_go_text(
        written, text, F.transform(fields, lambda field: field["key"]), F.transform(fields, lambda field: field["value"])
    )


KAFKAJS_LEVELS = ("ERROR", "WARN", "INFO", "DEBUG")
"""The levels KafkaJS's text form opens a line with (its console log creator: ``ERROR [Runner] ..``)."""


def _without_kafkajs_level(text: Column) -> Column:
    """``text`` without the level that opens KafkaJS's text form where a log creator wrote that form
    into a JSON record's message (``{"msg":"ERROR [Runner] The group is rebalancing, .. {..}"}``)."""
    opened = reduce(lambda a, b: a | b, [text.startswith(f"{level} [") for level in KAFKAJS_LEVELS])
    return F.when(opened, F.regexp_replace(text, rf"^(?:{'|'.join(KAFKAJS_LEVELS)}) (?={c.KAFKAJS_NAMESPACE})", "")).otherwise(text)


def split(value: Column) -> Column:
    value = unwrapped(value)
    r, dotnet = _parsed(value), _dotnet(value)
    text, stack = _without_kafkajs_level(_message(r, dotnet, value)), _stack(r, dotnet)
    message = F.concat(franz_go(text, value), client_context(value, text))
    return F.array(
        _timestamp(r, dotnet),
        _level(r, dotnet),
        F.coalesce(
            r["logger_name"],
            r["loggerName"],
            r.getField("log.logger"),
            r["log"]["logger"],
            r["logger"],
            r.getField(f"{GCP}labels")["loggerName"],
            r["labels"]["loggerName"],
            r["jsonPayload"]["logger"],
            r["name"],
            r["SourceContext"],
            dotnet["Category"],
            r["extra"]["logger"],
            _kafkajs(text, value),
        ),
        F.coalesce(
            r["thread_name"],
            r.getField("process.thread.name"),
            r["process"]["thread"]["name"],
            r["thread"],
            r["jsonPayload"]["thread"],
            r["threadName"],
        ),
        F.lit(None).cast("string"),
        F.when(stack.isNull(), message).otherwise(F.concat_ws("\n", message, stack)),
    )


def to_utc(ts_text: Column, tz: Column) -> Column:
    """ISO text (zone-less read in ``tz``), epoch milliseconds, or epoch seconds with a fraction;
    seconds written as a JSON number with a fraction (zap's ``ts``) read as a double's text,
    ``1.614592800515E9``."""
    millis = F.timestamp_millis(ts_text.try_cast("long"))
    seconds = F.timestamp_micros(F.round(ts_text.try_cast("decimal(20,9)") * 1_000_000).cast("long"))
    return (
        F.when(ts_text.rlike(r"^\d{12,14}$"), millis)
        .when(ts_text.rlike(r"^\d{9,11}(\.\d{1,9})?$|^\d\.\d+E(?:8|9|10)$"), seconds)
        .otherwise(c.iso_to_utc(ts_text, tz))
    )
