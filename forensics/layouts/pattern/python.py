"""Python ``logging`` format strings (``%(asctime)s %(levelname)-8s %(name)s: %(message)s``)
turned into the pieces of a line; ``datefmt`` (strftime) read as a Java date pattern."""

from __future__ import annotations

import re

from ...errors import ForensicsError
from .dates import DateSpec, compile_date, date_piece, spark_literal
from .pieces import DIGITS, LOWER, NAME_CHARS, PYTHON_LEVELS, SAMPLE, UPPER, Piece, free_text, level_piece, literal, padded, pattern_error

PY_CONVERSION = re.compile(r"%\((?P<key>[^)]*)\)(?P<flags>[#0\- +]*)(?P<width>\d+)?(?:\.(?P<prec>\d+))?(?P<type>[diouxXeEfFgGcrsa])")
PYTHON_ATTRIBUTES = (
    "asctime",
    "created",
    "msecs",
    "relativeCreated",
    "levelname",
    "levelno",
    "name",
    "threadName",
    "thread",
    "process",
    "processName",
    "taskName",
    "module",
    "funcName",
    "filename",
    "pathname",
    "lineno",
    "message",
)
PYTHON_LEVEL_NUMBERS = {"10": "DEBUG", "20": "INFO", "30": "WARN", "40": "ERROR", "50": "FATAL"}
ASCTIME_DEFAULT = "yyyy-MM-dd HH:mm:ss,SSS"
"""logging's default ``asctime``: ``2021-03-01 10:00:00,515`` (``%Y-%m-%d %H:%M:%S`` + ``,msecs``)."""
STRFTIME = {
    "Y": "yyyy",
    "y": "yy",
    "m": "MM",
    "d": "dd",
    "H": "HH",
    "I": "hh",
    "M": "mm",
    "S": "ss",
    "b": "MMM",
    "h": "MMM",
    "B": "MMMM",
    "a": "EEE",
    "A": "EEEE",
    "p": "a",
    "j": "DDD",
    "z": "Z",
    "Z": "z",
    "F": "yyyy-MM-dd",
    "T": "HH:mm:ss",
}


def strftime_to_java(datefmt: str) -> str:
    """A ``time.strftime`` format (logging's ``datefmt``) as a Java date pattern."""
    out, i = "", 0
    while i < len(datefmt):
        if datefmt[i] == "%" and i + 1 < len(datefmt):
            code = datefmt[i + 1]
            if code == "%":
                out += "'%'"
            elif code in STRFTIME:
                out += STRFTIME[code]
            else:
                raise ForensicsError(
                    f"Cannot read the date format {datefmt!r}: %{code} is not supported.",
                    f"Supported: {', '.join('%' + k for k in STRFTIME)}, %%.",
                )
            i += 2
        else:
            ch = datefmt[i]
            out += ch if ch in " -:/.," else spark_literal(ch)
            i += 1
    return out


def _py_piece(pattern: str, m: re.Match, datefmt: str | None) -> list[Piece]:
    key, kind = m.group("key"), m.group("type")
    if key == "asctime":
        return [date_piece(compile_date(strftime_to_java(datefmt) if datefmt else ASCTIME_DEFAULT))]
    if key == "created":
        float_ = kind in "fFeEgG"
        return [
            date_piece(
                DateSpec(r"\d{9,11}(?:\.\d+)?" if float_ else r"\d{9,11}", "epoch_s", sample="1710165737.418" if float_ else "1710165737")
            )
        ]
    if key == "msecs":
        padded = "0" in m.group("flags") and m.group("width") == "3"
        return [Piece(r"\d{3}" if padded else r"\d{1,3}", field="msecs", first=DIGITS, sample="418")]
    if key == "levelname":
        prec = m.group("prec")
        return [level_piece(PYTHON_LEVELS, keep=int(prec) if prec else None)]
    if key == "levelno":
        return [Piece(r"\d+", field="level", first=DIGITS, sample="20", levels=tuple(PYTHON_LEVEL_NUMBERS.items()))]
    if key == "name":
        return [Piece(NAME_CHARS, field="logger", first=UPPER + LOWER + "_", sample="kafka.consumer.group")]
    if key == "threadName":
        return [free_text("thread", "MainThread")]
    if key in ("thread", "process", "lineno", "relativeCreated"):
        regex = r"-?\d+(?:\.\d+)?" if kind in "fFeEgG" else r"-?\d+"
        return [Piece(regex, field="thread_id" if key == "thread" else None, first=DIGITS + "-", sample="4242")]
    if key in ("module", "funcName", "filename"):
        return [Piece(r"[^\s\x01:]+", first=None, sample="consumer")]
    if key in ("processName", "taskName", "pathname"):
        return [free_text(sample="MainProcess")]
    if key == "message":
        return [Piece(".*", field="message", empty=True, sample=SAMPLE["message"])]
    raise pattern_error(pattern, f"unknown logging attribute %({key})", f"Supported attributes: {', '.join(PYTHON_ATTRIBUTES)}.")


def python_pieces(pattern: str, datefmt: str | None = None) -> list[Piece]:
    """The pieces of a ``logging`` format string, in line order."""
    pieces: list[Piece] = []
    i = 0
    for m in PY_CONVERSION.finditer(pattern):
        pieces += _py_literals(pattern, pattern[i : m.start()])
        left, width = "-" in m.group("flags"), int(m.group("width") or 0)
        inner = _py_piece(pattern, m, datefmt)
        if "0" not in m.group("flags"):
            inner = padded(inner, left, width)
        pieces += inner
        i = m.end()
    return pieces + _py_literals(pattern, pattern[i:])


def _py_literals(pattern: str, text: str) -> list[Piece]:
    if re.search(r"%(?!%)", text.replace("%%", "")):
        raise pattern_error(pattern, f"{text!r} has a % that is not a %(name)s conversion", "Write %% for a percent sign.")
    return [literal(text.replace("%%", "%"))] if text else []
