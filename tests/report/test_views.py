"""Views, filters, escaping and errors on the JSON result only (no Spark, no kernel)."""

from __future__ import annotations

import gzip
import json

import pytest

from forensics.errors import ForensicsError
from forensics.report import load_incident
from forensics.report.data import redact, select, time_span, to_time
from forensics.report.escape import esc, script_json
from forensics.report.evidence import cited_lines
from forensics.report.publish import REPORT_NOTEBOOK, check_parameters, content_security_policy, index_html

from .conftest import CANARY_CLIENT, SCRIPT_CANARY


def test_esc_and_script_json_make_markup_inert():
    assert esc('<img src=x onerror="a()">&\'') == "&lt;img src=x onerror=&quot;a()&quot;&gt;&amp;&#x27;"
    assert esc(None) == ""
    text = script_json({"t": "</script><!--\u2028"})
    assert "<" not in text and ">" not in text and json.loads(text) == {"t": "</script><!--\u2028"}


def test_evidence_lines_from_plain_and_gzip_files_with_cr_crlf_lf(tmp_path):
    plain, packed = tmp_path / "a.log", tmp_path / "b.log.gz"
    plain.write_bytes(b"one\r\ntwo\rthree\nfour\n")
    with gzip.open(packed, "wb") as handle:
        handle.write(b"x\ny\nz\n")
    found = cited_lines(
        [
            {"file": str(plain), "line": 3},
            {"file": str(plain), "line": 4},
            {"file": str(packed), "line": 2},
            {"file": str(tmp_path / "missing"), "line": 1},
        ]
    )
    assert found == {(str(plain), 3): "three", (str(plain), 4): "four", (str(packed), 2): "y", (str(tmp_path / "missing"), 1): None}


def test_views_escape_log_text(analysis_json):
    incident = load_incident(analysis_json=str(analysis_json), title=SCRIPT_CANARY)
    pages = [
        incident.summary(),
        incident.findings_table(),
        incident.verdict_table(),
        incident.each_finding(),
        incident.each_rebalance(),
        incident.inputs(),
        incident.unparsed(),
        incident.rebalance_table(),
    ]
    html = "".join(p._repr_html_() for p in pages)
    assert "<script>" not in html and "<img" not in html and esc(SCRIPT_CANARY) in html
    assert esc(CANARY_CLIENT) in incident.each_finding()._repr_html_()


def test_figure_html_holds_json_only(analysis_json):
    incident = load_incident(analysis_json=str(analysis_json))
    for figure in (incident.timeline(), incident.rebalance_phases(), incident.committed_offsets(), incident.restore_progress()):
        bundle = figure._repr_mimebundle_()
        assert bundle["text/html"].count("<script") == 1 and 'type="application/json"' in bundle["text/html"]
        assert "<img" not in bundle["text/html"] and "<script>" not in bundle["text/html"]
        assert bundle["application/vnd.plotly.v1+json"]["data"]


def test_verdict_table_lists_lost_ranges_first(analysis_json):
    frame = load_incident(analysis_json=str(analysis_json)).verdict_table().frame
    assert list(frame["verdict"])[:2] == ["loss", "loss"]
    assert {(r.where, r.offsets, r.records) for r in frame.itertuples()} >= {
        ("AuditTrailBatch-store1-changelog-1", "[0, 55,872)", 55872),
        ("demo-topic-1", "[0, 5)", 5),
    }


def test_group_and_window_select_and_explorer_params_round_trip(analysis_json, result):
    incident = load_incident(analysis_json=str(analysis_json), group="demo-consumer")
    assert {f["group"] for f in incident.result["findings"]} == {"demo-consumer"}
    assert incident.result["inputs"] == result["inputs"]
    outside = select(result, window=("2030-01-01T00:00:00Z", None))
    assert outside["rebalances"] == [] and all(f["start"] is None for f in outside["findings"])  # undated stay
    explorer = incident.explorer()
    assert explorer.params["group"] == "demo-consumer" and explorer.params["window"] is None
    explorer.group.value = "AuditTrailBatch"
    narrowed = incident.select(**explorer.params)
    assert {f["group"] for f in narrowed.result["findings"]} == {"AuditTrailBatch"}


def test_redact_pseudonymises_hosts_groups_and_files(result):
    cleaned = json.dumps(redact(result))
    assert "audit-batch-1" not in cleaned and "/sample_logs/" not in cleaned and "AuditTrailBatch" not in cleaned
    assert "skipped_restore" in cleaned and "demo-topic" in cleaned  # detectors and (by default) topics stay


def test_bad_inputs_are_one_line_errors(tmp_path):
    with pytest.raises(ForensicsError, match="window"):
        load_incident(analysis_json="x.json", window=("2024-01-02", "2024-01-01"))
    with pytest.raises(ForensicsError, match="does not exist"):
        load_incident(analysis_json=str(tmp_path / "missing.json"))
    with pytest.raises(ForensicsError, match=r"Unknown report parameter\(s\) colour.*Use only: analysis_json"):
        check_parameters(REPORT_NOTEBOOK, {"colour": "red", "title": "x"})


def test_index_and_csp():
    h = {
        "by_verdict": {"loss": 1},
        "records_lost": 5,
        "records_duplicated": 0,
        "lost_is_bound": False,
        "duplicated_is_bound": False,
        "rebalances": 2,
        "first": "a",
        "last": "b",
    }
    page = index_html([("<b>x</b>", "x.html", h)])
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "script-src &#x27;none&#x27;" in page
    assert "unsafe-inline" not in content_security_policy(["x"]).split("style-src")[0]


def test_time_span_reads_each_time_as_to_time_does():
    """One vectorised parse: a time without an offset is UTC beside times with one; empty and
    missing times are left out."""
    times = ["2024-04-16T06:03:17.686Z", "2024-04-16T08:03:18+02:00", "2024-04-16T05:59:00", "2024-04-16T06:01:00.5+00:00"]
    result = {
        "rebalances": [{"start": times[0], "end": times[1]}, {"start": times[2], "end": ""}],
        "findings": [{"start": None}],
        "commits": [{"ts": times[3]}],
        "ownership": [],
    }
    assert time_span(result) == (to_time(times[2]), to_time(times[1]))
    assert str(time_span(result)[0]) == "2024-04-16 05:59:00+00:00"
    assert time_span({"rebalances": [{"start": None}]}) == (None, None)
