"""Redaction of an analysis result: keyed, consistent pseudonyms, and no identifier left."""

from __future__ import annotations

import json
import os
import re

import pytest

from forensics.redact import IP, UUID, Redactor, identifiers, path_names, redactor_for


def rendered_text(html) -> str:
    """The text a reader sees of a report in headless Chromium, hover texts of the figures included."""
    from playwright.sync_api import sync_playwright

    from tests.report.test_html_report import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort())
        page.goto(html.as_uri())
        page.wait_for_function("document.querySelectorAll('.forensics-plot .main-svg').length >= 1", timeout=30000)
        text = page.evaluate("document.body.innerText + JSON.stringify([...document.querySelectorAll('.forensics-plot')].map(d => d.data))")
        browser.close()
    return text


def strings(value) -> str:
    """Every string value (not key) of a JSON-like value, one per line."""
    if isinstance(value, dict):
        return "\n".join(strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(strings(v) for v in value)
    return value if isinstance(value, str) else ""


def test_no_identifier_ip_or_uuid_is_left(result):
    names = identifiers(result, topics=True)
    assert {"host", "client", "member", "group", "topic"} <= set(names.values())
    redacted = strings(redactor_for(result, key="k", topics=True).apply(result))
    assert [name for name in names if name in redacted] == []
    assert not IP.search(redacted) and not UUID.search(redacted)


def test_the_same_identifier_gets_the_same_pseudonym_everywhere(result):
    redacted = redactor_for(result, key="k").apply(result)
    groups_of_findings = {f["group"] for f in redacted["findings"] if f["group"]}
    groups_of_rebalances = {r["group"] for r in redacted["rebalances"]}
    assert groups_of_findings and groups_of_findings <= groups_of_rebalances
    assert all(g.startswith("group-") for g in groups_of_rebalances)
    hosts = {entry["host"] for entry in redacted["inputs"]}
    assert {o["host"] for o in redacted["ownership"]} <= hosts


def test_pseudonyms_depend_on_the_key_only(result):
    first, again = redactor_for(result, key="k"), redactor_for(result, key="k")
    other = redactor_for(result, key="other")
    assert first.apply(result) == again.apply(result) != other.apply(result)
    assert set(first.summary()) >= {"host", "client", "group"}


def test_topics_are_kept_unless_asked(result):
    topic = next(f["topic"] for f in result["findings"] if f["topic"])
    assert topic in json.dumps(redactor_for(result, key="k").apply(result)["findings"])
    assert topic not in json.dumps(redactor_for(result, key="k", topics=True).apply(result)["findings"])


def test_a_redacted_report_and_its_manifest_hold_no_original_identifier(result, tmp_path):
    from forensics.report.data import redact_with
    from forensics.report.publish import write_report

    names = identifiers(result, topics=True)
    original = json.dumps(result)
    names.update({found: "ip" for found in IP.findall(original)} | {found: "id" for found in UUID.findall(original)})
    redacted, redactor = redact_with({**result, "inputs": [{**e, "sha256": "0" * 64} for e in result["inputs"]]}, topics=True, key="k")
    files = write_report(redacted, tmp_path / "shared.html", redactor.text("Incident on " + result["inputs"][0]["host"]), {"redact": True})
    page_text = rendered_text(files.html)
    assert "identifiers pseudonymised" in page_text
    assert [name for name in names if name in page_text] == []
    for path in (files.html, files.manifest, files.notebook, files.json):
        text = path.read_text(encoding="utf-8")
        leaked = [name for name in names if name in text or json.dumps(name)[1:-1] in text]
        assert leaked == [], f"{path.name} still names {leaked[:5]}"
    assert redacted["redaction"]["masked"]["host"] >= 2 and redacted["redaction"]["topics"] is True


# --- names of the inputs: directories, files, titles, parameters, file names ------------------


def test_path_names_are_the_named_paths_and_what_lies_below_them_generic_names_left_out():
    files = [
        "/srv/cases/case-okapi/node-kestrel/app.log",
        "/srv/cases/case-okapi/node-quokka/2024-03-11/svc-narwhal.log.1.gz",
        "/srv/cases/case-okapi/offsets/dump-axolotl.txt",
    ]
    named = ["/srv/cases/case-okapi/node-kestrel", "/srv/cases/case-okapi/node-quokka", "/srv/cases/case-okapi/offsets/dump-axolotl.txt"]
    assert path_names(files, named) == {"node-kestrel", "node-quokka", "svc-narwhal.log.1.gz", "dump-axolotl.txt"}
    # Without the named paths: below the directory all files share, and that directory's own name.
    assert path_names(files) == {"case-okapi", "node-kestrel", "node-quokka", "svc-narwhal.log.1.gz", "dump-axolotl.txt"}
    # A generic directory named walks up to its identifying parent (as a host is inferred); a glob keeps its fixed part.
    assert path_names(["/srv/okapi/logs/app.log"], ["/srv/okapi/logs"]) == {"okapi"}
    assert path_names(["/srv/cases/okapi/kafka/app.log"], ["/srv/cases/*"]) == {"cases", "okapi"}
    assert path_names(["s3a://bucket/okapi/h-kestrel/app.log"], ["s3a://bucket/okapi"]) == {"okapi", "h-kestrel"}


def test_a_learned_name_is_masked_with_the_kind_it_already_has():
    redactor = Redactor({"node-kestrel": "host"}, b"k")
    host = redactor.text("node-kestrel")
    redactor.learn({"node-kestrel", "case-okapi"})
    assert redactor.text("node-kestrel") == host and redactor.text("case-okapi").startswith("path-")
    assert redactor.text(None) is None and redactor.name("group", None) is None
    assert redactor.name("group", "orders") == redactor.pseudonym("group", "orders")


def test_titles_default_to_pseudonyms_and_a_given_title_is_masked():
    from forensics.report.publish import report_title

    redactor = Redactor({"node-kestrel": "host"}, b"k").learn({"incident", "node-quokka"})
    title = report_title(None, ["cases/incident", "cases/node-kestrel", "x/node-quokka/"], redactor)
    assert (
        title == f"Kafka rebalance incident: {redactor.text('incident')}, {redactor.text('node-kestrel')}, {redactor.text('node-quokka')}"
    )
    assert "kestrel" not in title and "quokka" not in title and title.count("incident") == 1  # the title's own words stay
    assert report_title("Outage on node-quokka", [], redactor) == f"Outage on {redactor.text('node-quokka')}"
    assert report_title(None, ["cases/node-kestrel"]) == "Kafka rebalance incident: node-kestrel"


def test_log_text_and_broker_hosts_are_not_kept():
    result = {
        "inputs": [
            {"path": "/x/h/app.log", "host": "h-kestrel", "first_record": {"line": 1, "message": "Subscribed to topic(s): secret-pangolin"}}
        ],
        "config": [{"settings": {"bootstrap.servers": "[SASL_SSL://kafka-1.f316ce.internal:9093, kafka-2.f316ce.internal:9093]"}}],
        "unparsed_samples": [{"file": "/x/h/app.log", "line": 2, "text": "password=hunter2"}],
    }
    redacted = json.dumps(redactor_for(result, key="k").apply(result))
    assert "pangolin" not in redacted and "hunter2" not in redacted and "f316ce" not in redacted
    assert '"message": "(redacted)"' in redacted and '"text": "(redacted)"' in redacted


def test_a_notebook_redacting_masks_its_title_and_still_selects_the_group_it_names(analysis_json):
    from forensics.report import load_incident

    incident = load_incident(analysis_json=str(analysis_json), redact=True, group="demo-consumer", title="demo-consumer on demo-consumer-1")
    assert incident.params["group"].startswith("group-") and "demo-consumer" not in incident.title
    assert {f["detector"] for f in incident.result["findings"]} == {"reset_to_latest_gap", "risky_config"}
    assert "demo-consumer" not in str(incident.summary()._repr_html_())


# --- the whole way, as a user runs it: report, plan and batch with --redact ---------------------

DISGUISES = {"demo-topic": "ledger-pangolin"}
"""The sample's topic, renamed so that the topic too is a name only this test uses."""
TOKENS = ("okapi", "kestrel", "quokka", "narwhal", "axolotl", "pangolin", "demo-consumer", "f316ce")
"""Parts of every identifier of the disguised incident: its directory, host directory, file,
dump and topic names, its group (and client ids), and its brokers (in log text only)."""


def disguise(target):
    """``reset_to_latest_gap`` (a loss, an offset dump, two hosts) where every name is one of ``TOKENS``:
    ``case-okapi/node-kestrel/app.log`` (host from the directory), ``case-okapi/node-quokka/svc-narwhal.log``
    (host from the file name: the directory is only a directory) and ``case-okapi/dump-axolotl.txt``."""
    from .conftest import SAMPLES

    source = SAMPLES / "reset_to_latest_gap"
    layout = {
        "node-kestrel/app.log": "demo-consumer-1/app.log",
        "node-quokka/svc-narwhal.log": "demo-producer-1/app.log",
        "dump-axolotl.txt": "offsets/dump-log-demo-topic-1.txt",
    }
    for name, original in layout.items():
        text = (source / original).read_text(encoding="utf-8")
        for old, new in DISGUISES.items():
            text = text.replace(old, new)
        (target / "case-okapi" / name).parent.mkdir(parents=True, exist_ok=True)
        (target / "case-okapi" / name).write_text(text, encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def shared(spark, tmp_path_factory):
    """The disguised incident through ``forensics report --redact --redact-topics --group`` (the
    issue's command, default title), ``forensics plan --analysis`` on the report's JSON and
    ``forensics batch --redact --redact-topics``; outputs in directories whose absolute paths
    name the incident too. In this process, on the suite's session, with no redaction key set."""
    from click.testing import CliRunner

    from forensics.cli import main

    root = disguise(tmp_path_factory.mktemp("redact"))
    before = os.getcwd()
    os.chdir(root)
    try:

        def run(*args):
            done = CliRunner().invoke(main, list(args), env={"FORENSICS_REDACT_KEY": None})
            assert done.exit_code == 0, done.output
            return done

        run(
            "report",
            "case-okapi/node-kestrel",
            "case-okapi/node-quokka",
            "--offsets",
            "case-okapi/dump-axolotl.txt",
            "--group",
            "demo-consumer",
            "--redact",
            "--redact-topics",
            "-o",
            "okapi-shared/r.html",
        )
        if "plan" in main.commands:  # the recovery plan of the redacted analysis (`forensics plan` came with another change)
            os.chdir(root / "okapi-shared")
            run("plan", "--analysis", "r.json", "-o", "plan")
            os.chdir(root)
        run("batch", "case-okapi", "-o", "okapi-batch", "--redact", "--redact-topics")
    finally:
        os.chdir(before)
    return root


def test_no_file_written_names_an_input(shared):
    from forensics.cli import main

    written = sorted(p for d in ("okapi-shared", "okapi-batch") for p in (shared / d).rglob("*") if p.is_file())
    kinds = {p.suffix for p in written} | {p.name for p in written if p.name == "plan.md"}
    assert {".html", ".ipynb", ".json"} | ({".csv", "plan.md"} if "plan" in main.commands else set()) <= kinds, kinds
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace").lower()
        leaked = [token for token in TOKENS if token in text]
        assert leaked == [], f"{path.relative_to(shared)} names {leaked}"
        if path.suffix == ".json":
            values = strings(json.loads(text))
            assert not IP.search(values) and not UUID.search(values), path.name


def test_the_redacted_report_still_selects_the_group_and_shows_its_loss(shared):
    manifest = json.loads((shared / "okapi-shared" / "r.manifest.json").read_text(encoding="utf-8"))
    parameters = manifest["parameters"]
    assert parameters["analysis_json"] == "r.json" and parameters["group"].startswith("group-")
    assert [p.split("-")[0] for p in parameters["paths"] + parameters["offsets"]] == ["path"] * 3
    assert re.fullmatch(r"Kafka rebalance incident: host-[0-9a-f]{8}, path-[0-9a-f]{8}", parameters["title"]), parameters["title"]
    assert all(e["path"].startswith("file-") and len(e["sha256"]) == 64 for e in manifest["inputs"])
    html = (shared / "okapi-shared" / "r.html").read_text(encoding="utf-8")
    assert "[0, 5)" in html and "identifiers pseudonymised" in html and f"<title>{parameters['title']}</title>" in html
    recorded = json.loads((shared / "okapi-shared" / "r.ipynb").read_text(encoding="utf-8"))["metadata"]["papermill"]
    assert (recorded["input_path"], recorded["output_path"]) == ("incident_report.ipynb", "r.ipynb")


def test_a_redacted_batch_names_each_incident_by_a_pseudonym(shared):
    out = shared / "okapi-batch"
    index = (out / "index.html").read_text(encoding="utf-8")
    reports = sorted(p.name for p in out.glob("*.html") if p.name != "index.html")
    assert len(reports) == 1 and re.fullmatch(r"path-[0-9a-f]{8}\.html", reports[0])
    assert f'href="{reports[0]}"' in index and f">{reports[0][:-5]}</a>" in index
    assert f"Kafka rebalance incident: {reports[0][:-5]}" in (out / reports[0]).read_text(encoding="utf-8")
