"""Redaction of an analysis result: keyed, consistent pseudonyms, and no identifier left."""

from __future__ import annotations

import json

from forensics.redact import IP, UUID, identifiers, redactor_for


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
