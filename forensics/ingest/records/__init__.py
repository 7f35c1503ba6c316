"""Lines -> Kafka log records, with every line accounted for.

One pass over all lines recognises record heads by layout (``recognition``) and folds
everything that cannot matter for Kafka (other applications' records, stack frames, binary
junk) into counts per file (``folding``). What remains (heads that may be Kafka records, and
lines that may continue them) is small, and only there are continuation lines stitched to their
record (``stitching``): a line continues the nearest head above it when every line in between is
also in that subset. A line that continues none but carries a Kafka mark becomes a head of its
own (``floor``). ``assembly`` parses the heads with their continuation text into records.
"""

from .assembly import LOGGER_IN_TEXT, assemble_records, classify_others, closing_fields, record_ts
from .export_entries import entry_continues, with_continuing_entries
from .floor import anchor_floor
from .folding import FOLD_BINARY, FOLD_FRAME, FOLD_IRRELEVANT, FOLD_UNDECODABLE, FOLDS, fold_lines, slashed_date_orders, split_facts
from .hard_wraps import WRAP_MIN_LINES, WRAP_WIDTHS, wrap_widths
from .kafka_filter import (
    CLIENT_WORDS,
    KAFKA_MARKERS,
    KAFKA_PREFIX,
    MULTI_LINE_MARKERS,
    OPENING_MARKERS,
    PYTHON_CLIENT_MESSAGE,
    is_kafka,
    kafka_marked,
    may_be_kafka_entry,
    may_be_kafka_line,
)
from .line_records import kafka_lines
from .pieces import continue_partials
from .recognition import recognise
from .stitching import BLOCK_LINES, in_time_order, stitch

__all__ = [
    "BLOCK_LINES",
    "CLIENT_WORDS",
    "FOLDS",
    "FOLD_BINARY",
    "FOLD_FRAME",
    "FOLD_IRRELEVANT",
    "FOLD_UNDECODABLE",
    "KAFKA_MARKERS",
    "LOGGER_IN_TEXT",
    "KAFKA_PREFIX",
    "MULTI_LINE_MARKERS",
    "OPENING_MARKERS",
    "PYTHON_CLIENT_MESSAGE",
    "WRAP_MIN_LINES",
    "WRAP_WIDTHS",
    "anchor_floor",
    "assemble_records",
    "classify_others",
    "closing_fields",
    "continue_partials",
    "entry_continues",
    "fold_lines",
    "in_time_order",
    "is_kafka",
    "kafka_lines",
    "kafka_marked",
    "may_be_kafka_entry",
    "may_be_kafka_line",
    "record_ts",
    "recognise",
    "slashed_date_orders",
    "split_facts",
    "stitch",
    "with_continuing_entries",
    "wrap_widths",
]
