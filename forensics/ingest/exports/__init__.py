"""Log-platform exports: recognise a download from a log platform and read one row per entry.

Analysts get production logs as downloads: Kibana Discover CSV, Splunk CSV or JSON results,
CloudWatch Logs Insights CSV/JSON, Datadog CSV, Grafana/Loki JSON or CSV, GCP Cloud Logging
JSON, Elasticsearch hits. ``sniff_export(head)`` tells such a file from an ordinary log file by
its first ``SNIFF_CHARS`` characters and maps its columns to the ``ROLES`` (``sniff``, with
what each platform is known by in ``platforms``); ``read_exports(spark, shapes)`` reads the
exports with Spark into one row per entry with the physical lines the entry spans
(``reading``); ``export_line_counts`` accounts for every physical line of each file (entries'
lines + lines outside any entry == lines of the file; ``line_counts``). Both run a fixed
number of Spark jobs however many exports an incident has. An entry a cut download ended
inside is read as far as it goes (``salvage``).

Column names: for csv/tsv the header cell as written in the file; for JSON a dotted path from
the entry's root, a key that itself holds a dot written in double quotes:
``_source.host.name``, ``_source."log.level"``, ``labels."compute.googleapis.com/resource_name"``.
Matching of the usual names is case-insensitive and finds a dotted name nested or flattened.
"""

from .columns_option import parse_columns_option
from .json_scan import element_spans
from .line_counts import export_line_count, export_line_counts
from .reading import read_export, read_exports
from .salvage import cut_elements
from .shape import ROLES, ExportLines, ExportShape
from .sniff import SNIFF_CHARS, sniff_export

__all__ = [
    "ROLES",
    "SNIFF_CHARS",
    "ExportLines",
    "ExportShape",
    "cut_elements",
    "element_spans",
    "export_line_count",
    "export_line_counts",
    "parse_columns_option",
    "read_export",
    "read_exports",
    "sniff_export",
]
