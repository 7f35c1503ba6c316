"""logback / log4j2 / log4j 1 ``PatternLayout`` patterns: parsed into conversion nodes
(modifiers, options, composite words), then turned into the pieces of a line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import ForensicsError
from .dates import DEFAULT_DATE, compile_date, date_piece, split_zone
from .pieces import (
    ANSI,
    DIGITS,
    JAVA_LEVELS,
    LOWER,
    NAME_CHARS,
    SAMPLE,
    UPPER,
    Piece,
    cut_at_newline,
    free_text,
    level_piece,
    literal,
    loose,
    padded,
    pattern_error,
    truncated,
)


@dataclass(frozen=True)
class Modifier:
    left: bool = False
    width: int = 0
    keep: int | None = None
    from_end: bool = False  # ``.-N``: keep the first N characters


@dataclass
class Node:
    """A parsed conversion: ``word`` (``""`` for literal text or an anonymous ``%(..)`` group)."""

    word: str
    text: str = ""
    modifier: Modifier = field(default_factory=Modifier)
    options: list[str] = field(default_factory=list)
    children: list[Node] | None = None


_MODIFIER = re.compile(r"(-?)(\d*)(?:\.(-?)(\d+))?")
_WORD = re.compile(r"[A-Za-z]+")

COLOURS = (
    "highlight",
    "style",
    "clr",
    "black",
    "red",
    "green",
    "yellow",
    "blue",
    "magenta",
    "cyan",
    "white",
    "gray",
    "boldRed",
    "boldGreen",
    "boldYellow",
    "boldBlue",
    "boldMagenta",
    "boldCyan",
    "boldWhite",
)
JAVA_WORDS: dict[str, tuple[str, ...]] = {
    "date": ("d", "date"),
    "level": ("p", "le", "level"),
    "logger": ("c", "lo", "logger"),
    "thread": ("t", "thread", "tn", "threadName"),
    "message": ("m", "msg", "message"),
    "newline": ("n",),
    "class": ("C", "class"),
    "method": ("M", "method"),
    "line": ("L", "line"),
    "file": ("F", "file"),
    "location": ("l", "location"),
    "number": ("pid", "processId", "r", "relative", "tid", "threadId", "T", "tp", "threadPriority", "sn", "sequenceNumber", "N", "nano"),
    "uuid": ("u", "uuid"),
    "text": (
        "X",
        "mdc",
        "MDC",
        "K",
        "map",
        "MAP",
        "x",
        "ndc",
        "NDC",
        "marker",
        "markerSimpleName",
        "property",
        "cn",
        "contextName",
        "kvp",
        "fqcn",
    ),
    "throwable": (
        "ex",
        "exception",
        "throwable",
        "xEx",
        "xException",
        "xThrowable",
        "rEx",
        "rException",
        "rThrowable",
        "rootException",
        "wEx",
        "wex",
        "nopex",
        "nopexception",
    ),
    "colour": COLOURS,
    "group": ("enc", "encode", "maxLen", "maxLength"),
    "loose": ("replace", "equals", "equalsIgnoreCase", "notEmpty", "varsNotEmpty", "variablesNotEmpty"),
}
WORD_KINDS = {word: kind for kind, words in JAVA_WORDS.items() for word in words}
COMPOSITE = {"colour", "group", "loose"}


def _unknown_word(pattern: str, word: str) -> ForensicsError:
    supported = "; ".join(f"{kind} " + " ".join(f"%{w}" for w in words) for kind, words in JAVA_WORDS.items())
    return pattern_error(pattern, f"unknown conversion word %{word}", f"Supported conversion words: {supported}. %% is a percent sign.")


def _braced(pattern: str, i: int) -> tuple[str, int]:
    """The text inside the balanced braces opening at ``pattern[i]``, and the index after them."""
    depth, j = 0, i
    while j < len(pattern):
        depth += {"{": 1, "}": -1}.get(pattern[j], 0)
        if depth == 0:
            return pattern[i + 1 : j], j + 1
        j += 1
    raise pattern_error(pattern, f"the brace at position {i} is not closed")


def substitute_properties(pattern: str) -> str:
    """Replace ``${NAME:-default}`` by its default (logback / Spring Boot property syntax)."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("${", i):
            body, i = _braced(pattern, i + 1)
            name, sep, default = body.partition(":-")
            if not sep:
                raise pattern_error(
                    pattern, f"${{{name}}} is a property reference", "Put its value into the pattern (as your logs show it)."
                )
            out += substitute_properties(default)
        else:
            out, i = out + pattern[i], i + 1
    return out


def parse_java(pattern: str, i: int = 0, closing: str | None = None) -> tuple[list[Node], int]:
    """Nodes of a PatternLayout from ``pattern[i]`` up to ``closing`` (``)`` in a composite)."""
    nodes: list[Node] = []
    while i < len(pattern):
        ch = pattern[i]
        if closing and ch == closing:
            return nodes, i
        if ch == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "(){}%\\nt":
            escaped = pattern[i + 1]
            nodes.append(Node("n") if escaped == "n" else Node("", text="\t" if escaped == "t" else escaped))
            i += 2
        elif ch == "%" and pattern.startswith("%%", i):
            nodes.append(Node("", text="%"))
            i += 2
        elif ch == "%":
            node, i = _conversion(pattern, i + 1)
            nodes.append(node)
        else:
            nodes.append(Node("", text=ch))
            i += 1
    if closing:
        raise pattern_error(pattern, "a parenthesis is not closed")
    return nodes, i


def _conversion(pattern: str, i: int) -> tuple[Node, int]:
    """The conversion after a ``%`` at ``pattern[i]``: modifier, word, options, children."""
    m = _MODIFIER.match(pattern, i)
    modifier = Modifier(
        left=m.group(1) == "-", width=int(m.group(2) or 0), keep=int(m.group(4)) if m.group(4) else None, from_end=m.group(3) == "-"
    )
    i = m.end()
    w = _WORD.match(pattern, i)
    word = w.group(0) if w else ""
    i = w.end() if w else i
    if word and word not in WORD_KINDS:
        raise _unknown_word(pattern, word)
    if not word and not pattern.startswith("(", i):
        raise pattern_error(pattern, f"a % at position {i - 1} has no conversion word", "Write %% for a percent sign.")
    node = Node(word, modifier=modifier)
    if pattern.startswith("(", i) and (not word or WORD_KINDS[word] in COMPOSITE):
        node.children, i = parse_java(pattern, i + 1, ")")
        i += 1
    while pattern.startswith("{", i):
        option, i = _braced(pattern, i)
        node.options.append(option)
    if word and WORD_KINDS[word] in COMPOSITE and node.children is None:
        if not node.options:
            raise pattern_error(pattern, f"%{word} needs a sub-pattern in (..) or {{..}}")
        node.children, _ = parse_java(node.options.pop(0))
    return node, i


def _java_level(node: Node) -> Piece:
    """``%level`` with log4j2's options: ``{length=1}``, ``{lowerCase=true}``, ``{WARN=Warning}``."""
    shown: dict[str, str] = {}
    keep, lower = node.modifier.keep, False
    for option in ",".join(node.options).split(","):
        key, _, value = (part.strip() for part in option.partition("="))
        if key == "length" and value.isdigit():
            keep = int(value)
        elif key == "lowerCase":
            lower = value.lower() == "true"
        elif key.upper() in JAVA_LEVELS and value:
            shown[key.upper()] = value
    from_end = node.modifier.from_end or (keep is not None and node.modifier.keep is None)
    return level_piece(JAVA_LEVELS, shown, keep, from_end, lower)


def _java_date(node: Node) -> Piece:
    option = node.options[0] if node.options else DEFAULT_DATE
    fmt, zone = split_zone(option)
    if len(node.options) > 1 and node.options[1].strip():
        zone = node.options[1].strip()
    return date_piece(compile_date(fmt or DEFAULT_DATE, zone))


def _java_simple(kind: str, node: Node) -> list[Piece]:
    """Pieces of a conversion that is not composite."""
    if kind == "date":
        return [_java_date(node)]
    if kind == "level":
        return [_java_level(node)]
    if kind in ("logger", "class"):
        first = None if node.modifier.keep else UPPER + LOWER + "_$"
        return [Piece(NAME_CHARS, field=kind, first=first, sample=SAMPLE["logger"])]
    if kind == "thread":
        return [free_text("thread", SAMPLE["thread"])]
    if kind == "message":
        return [Piece(".*", field="message", empty=True, sample=SAMPLE["message"])]
    if kind == "newline":
        return [Piece("", newline=True)]
    if kind == "number":
        return [Piece(r"-?\d+", first=DIGITS + "-", sample="4242")]
    if kind == "line":
        return [Piece(r"(?:\d+|\?)", first=DIGITS + "?", sample="42")]
    if kind == "file":
        return [Piece(r"[^\s\x01:()]*", empty=True, sample=SAMPLE["file"])]
    if kind == "method":
        return [Piece(r"[^\s\x01()]*", empty=True, sample=SAMPLE["method"])]
    if kind == "location":
        return [Piece(r"[^\s\x01]*", empty=True, sample=f"{SAMPLE['logger']}.{SAMPLE['method']}({SAMPLE['file']}:42)")]
    if kind == "uuid":
        return [Piece(r"[0-9a-fA-F-]{36}", first=DIGITS + "abcdefABCDEF", sample="0" * 8 + "-0000" * 3 + "-" + "0" * 12)]
    if kind == "throwable":
        return []
    return [free_text()]


def java_pieces(nodes: list[Node]) -> list[Piece]:
    """The pieces of parsed PatternLayout nodes, in line order."""
    pieces: list[Piece] = []
    for node in nodes:
        if not node.word and node.children is None:
            pieces.append(literal(node.text))
            continue
        kind = WORD_KINDS.get(node.word, "group")
        if node.children is not None:
            inner = java_pieces(node.children)
            if kind == "loose":
                inner = loose(cut_at_newline(inner))
            elif kind == "colour":
                ansi = Piece(ANSI, first="\x1b", empty=True)
                inner = [ansi, *inner, ansi]
        else:
            inner = _java_simple(kind, node)
        mod = node.modifier
        pieces += padded(truncated(inner, mod.keep, mod.from_end), mod.left, mod.width)
    return pieces
