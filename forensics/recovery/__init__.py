"""Recovery plans: what to run after a loss or a duplication is found.

Pure functions on the analysis JSON (``forensics analyze --json``), no Spark: ``attach_recovery``
gives every finding a ``recovery`` object (None unless its verdict is ``loss`` or ``duplication``);
``reset_rows_by_group`` and ``csv_text`` make the ``--from-file`` CSV of each consumer group
(``forensics.report.recovery_plans`` renders the plans: the report's "What to do now", and the
files ``forensics plan`` writes). Nothing here runs a command. ``facts`` reads what the rest of
the result holds, ``commands`` writes the Kafka commands, ``planning`` makes each finding's plan.
"""

from .commands import csv_file_name
from .facts import facts_of
from .planning import FIELDS, KINDS, attach_recovery, csv_text, plan_items, recovery_for, reset_rows_by_group, retention

__all__ = [
    "FIELDS",
    "KINDS",
    "attach_recovery",
    "csv_file_name",
    "csv_text",
    "facts_of",
    "plan_items",
    "recovery_for",
    "reset_rows_by_group",
    "retention",
]
