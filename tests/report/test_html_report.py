"""The shared HTML report in real headless Chromium: figures render, nothing leaves the machine,
no console errors, and injected log text stays text."""

from __future__ import annotations

import html
import json
import os
import re

import pytest

from forensics.report.publish import focusable

from .conftest import ARTIFACTS, CANARY_CLIENT, CANARY_TOPIC, FILE_CANARY, SCRIPT_CANARY, UNPARSED_CANARY

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser

SHOW_GROUP = """group => {
  const div = document.querySelector('.forensics-plot');
  const button = div.layout.updatemenus[0].buttons.find(b => b.label === group);
  return window.Plotly.update(div, button.args[0], button.args[1]);
}"""


@pytest.fixture(scope="module")
def page_report(report_files):
    """The report opened in Chromium; every request not to file: or data: is blocked and recorded."""
    if not os.path.exists(CHROMIUM):
        pytest.fail("headless Chromium missing: apt-get install -y chromium (.ci/run does it)")
    from playwright.sync_api import sync_playwright

    seen = {"console": [], "errors": [], "dialogs": [], "outside": []}

    def route(r):
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            seen["outside"].append(r.request.url)
            r.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: seen["console"].append((m.type, m.text)))
        page.on("pageerror", lambda e: seen["errors"].append(str(e)))
        page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        page.route("**/*", route)
        page.goto(report_files.html.as_uri())
        page.wait_for_function("document.querySelectorAll('.forensics-plot .main-svg').length >= 4", timeout=30000)
        # Hover a finding marker so its (escaped) hover text with the log line is drawn too.
        page.wait_for_timeout(300)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        yield page, seen
        browser.close()


def test_plotly_figures_render_with_traces(page_report):
    page, _ = page_report
    traces = page.evaluate("Array.from(document.querySelectorAll('.forensics-plot')).map(d => d.data ? d.data.length : -1)")
    assert len(traces) == 4 and all(n > 0 for n in traces), traces
    assert page.evaluate("document.querySelectorAll('.forensics-plot g.trace').length") > 10
    assert page.evaluate("typeof window.Plotly") == "object"


def test_no_console_errors_and_no_request_leaves_the_machine(page_report):
    _, seen = page_report
    assert seen["errors"] == []
    assert [m for m in seen["console"] if m[0] in ("error", "warning")] == []
    assert seen["outside"] == []


def test_canaries_are_text_and_never_run(page_report, report_files):
    page, seen = page_report
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert seen["dialogs"] == []
    text = page.inner_text("body")
    for canary in (SCRIPT_CANARY, CANARY_TOPIC, CANARY_CLIENT, FILE_CANARY, UNPARSED_CANARY):
        assert canary in text, canary
    assert page.evaluate("document.querySelectorAll('img[src=x], a[href^=javascript]').length") == 0
    # Pick the canary group in the timeline's dropdown (what a click does): plotly draws the
    # canary topic as tick text, characters and not elements; hovering its finding runs nothing.
    page.evaluate(SHOW_GROUP, "orders-enricher-a6b24e")
    page.wait_for_timeout(300)
    svg_text = page.evaluate("Array.from(document.querySelectorAll('.forensics-plot text')).map(t => t.textContent).join('\\n')")
    assert CANARY_TOPIC in svg_text
    page.hover(".forensics-plot .scatterlayer .point", force=True)
    page.wait_for_timeout(200)
    assert page.evaluate("typeof window.__pwned") == "undefined" and seen["dialogs"] == []
    page.screenshot(path=str(ARTIFACTS / "report-canary-group.png"))


def test_one_plotly_bundle_no_external_reference_and_a_strict_csp(report_files):
    page = report_files.html.read_text(encoding="utf-8")
    assert len(re.findall(r"<script>", page)) == 2  # plotly.js and the bootstrap; figures are JSON
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=["']?(https?:)?//""", page)
    meta = re.search(r"<meta[^>]+Content-Security-Policy[^>]*>", page).group(0)
    csp = html.unescape(re.search(r'content="([^"]+)"', meta).group(1))  # as the browser reads the attribute
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "unsafe-inline' " not in csp.split("style-src")[0]
    assert page.index("Content-Security-Policy") < page.index("<script")
    manifest = json.loads(report_files.manifest.read_text())
    assert manifest["tool_version"] and manifest["parameters"]["analysis_json"].endswith("report.json")
    assert all(e["sha256"] and len(e["sha256"]) == 64 for e in manifest["inputs"] if e["kind"] == "log" and not e["problem"])
    assert report_files.notebook.exists() and report_files.json.exists()


def test_every_cell_area_is_focusable_as_nbconvert_makes_it(report_files):
    """The report skips nbconvert's BeautifulSoup pass; ``focusable`` gives each cell's input and
    output area the ``tabindex`` that pass gave, and leaves escaped text alone."""
    page = report_files.html.read_text(encoding="utf-8")
    areas = re.findall(r'<div class="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*"[^>]*>', page)
    assert len(areas) > 10 and all('tabindex="0"' in tag for tag in areas)
    written = (
        '<div class="jp-Cell-inputWrapper">',
        '<div class="jp-RenderedHTML jp-OutputArea-output jp-OutputArea-executeResult" data-mime-type="text/html">',
        '<div class="jp-OutputArea-output" tabindex="0">',
        '<div class="jp-OutputArea-outputs">',
        '&lt;div class="jp-OutputArea-output"&gt;',
        '<img src="data:image/png;base64,AA==">',
        '<img alt="a plot" src="data:image/png;base64,AA==">',
    )
    assert focusable("".join(written)) == "".join(
        (
            '<div class="jp-Cell-inputWrapper" tabindex="0">',
            '<div class="jp-RenderedHTML jp-OutputArea-output jp-OutputArea-executeResult" tabindex="0" data-mime-type="text/html">',
            '<div class="jp-OutputArea-output" tabindex="0">',
            '<div class="jp-OutputArea-outputs">',
            '&lt;div class="jp-OutputArea-output"&gt;',
            '<img alt="No description has been provided for this image" src="data:image/png;base64,AA==">',
            '<img alt="a plot" src="data:image/png;base64,AA==">',
        )
    )


def test_every_loss_and_duplication_has_its_recovery_plan_in_the_report(report_files, result):
    """Issue 17: under "What to do now", each lost or duplicated range of the sample incidents
    has its plan, with the reset rows of a lost range."""
    text = html.unescape(report_files.html.read_text(encoding="utf-8"))  # as the reader sees it
    planned = [f for f in result["findings"] if f["verdict"] in ("loss", "duplication")]
    assert planned and "What to do now" in text
    for finding in planned:
        recovery = finding["recovery"]
        assert recovery["summary"] in text, recovery["summary"]
        if recovery.get("reset_rows"):
            assert recovery["csv_file"] in text
