"""The options several commands share, each declared once, and how repeated ``GLOB=VALUE``
options are read."""

from __future__ import annotations

from typing import Callable

import click


def pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    """``("GLOB=VALUE", ...)`` -> dict; a value without ``=`` is a usage error."""
    found = {}
    for value in values:
        key, sep, target = value.partition("=")
        if not sep or not key or not target:
            raise click.BadParameter(f"expected PATTERN=VALUE, got {value!r}", param_hint=option)
        found[key] = target
    return found


OFFSETS = click.option(
    "--offsets",
    "offsets",
    multiple=True,
    metavar="PATH",
    help="Offset dump file (kafka-consumer-groups.sh, kafka-dump-log.sh, ...); repeatable.",
)
TZ = click.option("--tz", default="UTC", show_default=True, help="Time zone of timestamps that carry none.")
HOSTS = click.option("--host", "hosts", multiple=True, metavar="GLOB=HOST", help="Host name for the files matching GLOB; repeatable.")
LAYOUT = click.option(
    "--layout",
    default=None,
    metavar="PATTERN",
    help="The logs' layout as a logback / log4j2 pattern or a Python logging format, for layouts not recognised.",
)
COLUMNS = click.option(
    "--columns",
    default=None,
    metavar="ROLE=COLUMN,...",
    help="An export's columns by role (time, host, source, level, logger, thread, message) where their names do not "
    "tell; a column by its name or its position (1 the first, also in a CSV without a header), e.g. time=1,host=3,message=5.",
)
MASTER = click.option(
    "--master", default=None, metavar="URL", help="Spark master or Spark Connect URL [env FORENSICS_SPARK_MASTER; default local[*]]."
)


def debug(shows: str = "") -> Callable:
    """``--debug``: a failure's full traceback instead of its one line (``running.run``), with
    ``shows``, what else the command prints with it."""
    return click.option("--debug", is_flag=True, help=f"Show full tracebacks on errors{shows}.")


DEBUG = debug(" and Spark's start-up output")
REDACT = click.option(
    "--redact",
    is_flag=True,
    help="Pseudonymise hosts, IPs, client/member/instance/group ids and file paths; hide log text [key: env FORENSICS_REDACT_KEY].",
)
REDACT_TOPICS = click.option("--redact-topics", is_flag=True, help="With --redact, pseudonymise topic names too.")
