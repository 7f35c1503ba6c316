"""``forensics``: the command line. Errors print one line on stderr; ``--debug`` shows the trace.

One module per group of commands (``analysis``, ``reports``, ``tools``), the options they share
in ``options``, how a command runs in ``running`` and what it prints in ``text``."""

from __future__ import annotations

import click

from ..package import __version__
from .analysis import analyze, layouts, plan
from .reports import batch, report
from .running import imported_meanwhile, session_jvm_options
from .text import format_findings, format_findings_headline, format_layouts, format_summary
from .tools import WARM_UP_BUNDLES, schema, warm_up

__all__ = [
    "WARM_UP_BUNDLES",
    "format_findings",
    "format_findings_headline",
    "format_layouts",
    "format_summary",
    "imported_meanwhile",
    "main",
    "session_jvm_options",
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="forensics")
def main() -> None:
    """Kafka consumer-group rebalance forensics on Spark."""


for _command in (analyze, batch, layouts, plan, report, schema, warm_up):
    main.add_command(_command)
