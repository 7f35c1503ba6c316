"""The report's views of a saved analysis: seconds and HTML size of each, as the report notebook
renders them (no Spark).

    .venv/bin/python benchmarks/report_views.py [ANALYSIS_JSON]

The default is the analysis of the 4M-line corpus that ``performance.py`` leaves beside it
(``/tmp/forensics-bench/4M.analysis.json``: 1,833 consumer groups, 6,382 rebalances, 45,285
ownership intervals, 2,330 findings). Each view runs once, in the report notebook's order.
Then the whole report of that analysis is written (``publish.write_report``: its JSON, the
notebook run by papermill, the HTML page), in a temporary directory: its seconds and the page's
size (``--no-report`` skips it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from forensics.report import load_incident  # noqa: E402

VIEWS = (
    "summary",
    "verdict_table",
    "timeline",
    "inputs",
    "accounting",
    "rebalance_table",
    "rebalance_phases",
    "each_rebalance",
    "findings_table",
    "each_finding",
    "committed_offsets",
    "restore_progress",
    "unparsed",
)
"""The incident's views, in the report notebook's order."""


def rendered(view) -> str:
    """The HTML a view shows in the report."""
    return view.html() if hasattr(view, "html") else view._repr_html_()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("analysis", nargs="?", type=Path, default=Path("/tmp/forensics-bench/4M.analysis.json"))
    parser.add_argument("--no-report", action="store_true", help="only the views, not the whole report")
    args = parser.parse_args()
    if not args.analysis.is_file():
        raise SystemExit(f"{args.analysis}: no such analysis; run benchmarks/performance.py --sizes 4M first, or give a --json result.")
    started = time.perf_counter()
    incident = load_incident(analysis_json=str(args.analysis))
    print(f"{'load':18s} {time.perf_counter() - started:7.2f} s")
    total, size = time.perf_counter() - started, 0
    for name in VIEWS:
        started = time.perf_counter()
        html = rendered(getattr(incident, name)())
        seconds = time.perf_counter() - started
        total, size = total + seconds, size + len(html)
        print(f"{name:18s} {seconds:7.2f} s  {len(html) / 1e6:7.2f} MB of HTML")
    print(f"{'all':18s} {total:7.2f} s  {size / 1e6:7.2f} MB of HTML")
    if not args.no_report:
        whole_report(args.analysis)


def whole_report(analysis: Path) -> None:
    """``publish.write_report`` of ``analysis`` in a temporary directory: seconds, page size."""
    import json
    import tempfile

    from forensics.report.publish import write_report

    result = json.loads(analysis.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="report-views-") as out:
        started = time.perf_counter()
        files = write_report(result, Path(out) / "report.html", analysis.stem)
        seconds = time.perf_counter() - started
        print(f"{'whole report':18s} {seconds:7.2f} s  {files.html.stat().st_size / 1e6:7.2f} MB of HTML (JSON, notebook and page)")


if __name__ == "__main__":
    main()
