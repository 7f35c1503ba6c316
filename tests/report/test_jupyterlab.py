"""The explorer notebook live in JupyterLab: a real ``jupyter lab`` server on 127.0.0.1 (no token),
the notebook opened in headless Chromium, Run > Run All Cells, then the widgets driven as a
reader drives them. Screenshots go to test-artifacts/jupyterlab/.

Fails (does not skip) in CI when the server or Chromium cannot start; skips elsewhere."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from forensics.report.publish import NOTEBOOKS

from .conftest import ARTIFACTS
from .test_html_report import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.jupyterlab

SHOTS = ARTIFACTS / "jupyterlab"
START_TIMEOUT_S = 90
RUN_TIMEOUT_MS = 120_000
CHANGE_TIMEOUT_MS = 60_000
WINDOW_LABEL = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d to (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC$")

FIGURES = "[...document.querySelectorAll('.js-plotly-plot')].map(d => JSON.stringify((d.data || []).map(t => [t.name, t.y]))).join('\\n')"
STDERR = (
    "[...document.querySelectorAll('.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]')].map(e => e.textContent)"
)
FINDINGS = "[...document.querySelectorAll('.widget-tab .jp-OutputArea-output table')].map(t => t.textContent).join('\\n')"
STARTED = "[...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].some(p => /^\\[(\\*|\\d+)\\]:$/.test(p.textContent.trim()))"
KERNEL_READY = """() => {
  const status = [...document.querySelectorAll('.jp-StatusBar-TextItem')].map(e => e.textContent.trim());
  return status.some(t => t.endsWith('| Idle') && !t.startsWith('No Kernel'))
    && document.querySelector('.jp-Notebook-ExecutionIndicator[data-status="idle"]') !== null;
}"""
"""The kernel started and answered (the execution indicator alone reads idle before a kernel exists)."""
CELLS_DONE = """() => {
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim());
  const indicator = document.querySelector('.jp-Notebook-ExecutionIndicator');
  return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p)) && indicator && indicator.dataset.status === 'idle';
}"""


def unavailable(message: str):
    """CI must run this test: there a missing server or browser is a failure."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def lab_root(analysis_json, tmp_path_factory):
    """The explorer notebook with papermill's injected parameters cell pointing at the shared
    analysis (several groups, one with injection canaries): the kernel starts no Spark."""
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    root = tmp_path_factory.mktemp("lab")
    shutil.copy(analysis_json, root / "incident.json")
    notebook = parameterize_notebook(load_notebook_node(str(NOTEBOOKS / "rebalance_explorer.ipynb")), {"analysis_json": "incident.json"})
    nbformat.write(notebook, str(root / "rebalance_explorer.ipynb"))
    return root


@pytest.fixture(scope="module")
def lab_url(lab_root, tmp_path_factory):
    """``jupyter lab`` on 127.0.0.1 with no token, its configuration, settings and runtime files
    in a temporary directory (no news or update checks); stopped after the module."""
    home = tmp_path_factory.mktemp("lab-home")
    for extension, name, values in (
        ("apputils-extension", "notification", {"fetchNews": "false", "checkForUpdates": False}),
        ("notebook-extension", "tracker", {"autoStartDefaultKernel": True}),  # no "Select Kernel" dialog on a slow start
    ):
        (home / "settings" / "@jupyterlab" / extension).mkdir(parents=True, exist_ok=True)
        (home / "settings" / "@jupyterlab" / extension / f"{name}.jupyterlab-settings").write_text(json.dumps(values))
    (home / "config").mkdir()
    (home / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"LabApp": {"check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}})
    )
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),  # the kernel is this venv's Python
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={lab_root}",
        f"--LabApp.user_settings_dir={home / 'settings'}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
        *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
    ]
    log = home / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    unavailable(f"jupyter lab did not start: {log.read_text(errors='replace')[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.fixture(scope="module")
def lab(lab_url):
    """The explorer notebook opened in headless Chromium and run with Run > Run All Cells.
    Every request not to the server is blocked and recorded."""
    if not os.path.exists(CHROMIUM):
        unavailable("headless Chromium missing: apt-get install -y chromium (.ci/run does it)")
    from playwright.sync_api import sync_playwright

    seen = {"outside": [], "errors": [], "dialogs": []}

    def route(r):
        if r.request.url.startswith(lab_url):
            r.continue_()
        else:
            seen["outside"].append(r.request.url)
            r.abort()

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("pageerror", lambda e: seen["errors"].append(str(e)))
        page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        page.route("**/*", route)
        page.goto(f"{lab_url}/lab/tree/rebalance_explorer.ipynb")
        wait(page, KERNEL_READY, "the notebook's kernel to start", RUN_TIMEOUT_MS)
        run_all_cells(page)
        wait(page, CELLS_DONE, "all cells run and the kernel idle", RUN_TIMEOUT_MS)
        wait(page, "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 4", "the explorer's figures drawn", RUN_TIMEOUT_MS)
        explorer(page).scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "01-run-all.png"))
        yield page, seen
        browser.close()


def run_all_cells(page, attempts: int = 3) -> None:
    """Run > Run All Cells, as a reader does it; again when no cell started (the command is
    ignored while JupyterLab is still attaching the kernel to the notebook)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(attempts):
        page.locator("#jp-MainMenu .lm-MenuBar-item", has_text="Run").first.click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(STARTED, timeout=20_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    wait(page, STARTED, "Run All Cells to start a cell", 1)


def wait(page, condition: str, what: str, timeout_ms: int = CHANGE_TIMEOUT_MS, arg=None) -> None:
    """Wait for a JavaScript condition; on timeout fail with the cells' prompts, their error
    outputs and a screenshot, not just a timeout."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(condition, arg=arg, timeout=timeout_ms)
    except PlaywrightTimeout:
        shot = SHOTS / f"timeout-{re.sub(r'[^a-z]+', '-', what)}.png"
        page.screenshot(path=str(shot))
        state = page.evaluate(f"[[...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent), {STDERR}]")
        pytest.fail(f"timed out waiting for {what}: prompts {state[0]}, stderr {state[1]}; screenshot {shot}")


def explorer(page):
    return page.locator(".jp-OutputArea-output .widget-vbox").first


def dropdown(page, description: str):
    return page.locator(".widget-dropdown", has_text=description).locator("select")


def pick(page, description: str, label: str) -> None:
    """Choose ``label`` in a dropdown and wait until the explorer's figures were redrawn."""
    before = page.evaluate(FIGURES)
    dropdown(page, description).select_option(label=label)
    wait(
        page,
        f"before => ({FIGURES}) !== before && document.querySelectorAll('.js-plotly-plot .main-svg').length >= 4",
        f"the figures redrawn for {description} {label}",
        arg=before,
    )


def show_findings(page) -> str:
    page.locator(".widget-tab .lm-TabBar-tab", has_text="findings").click()
    wait(page, f"({FINDINGS}).length > 0", "the findings table")
    return page.evaluate(FINDINGS)


def show_figures(page) -> None:
    page.locator(".widget-tab .lm-TabBar-tab", has_text="figures").click()


def test_all_cells_run_without_error_and_render_figures_and_widgets(lab):
    page, seen = lab
    assert page.evaluate(STDERR) == []
    assert page.locator(".js-plotly-plot").count() >= 4
    assert page.evaluate("[...document.querySelectorAll('.js-plotly-plot')].every(d => d.data && d.layout)")
    assert dropdown(page, "group").count() == 1 and dropdown(page, "partition").count() == 1
    assert dropdown(page, "group").evaluate("s => s.options[s.selectedIndex].text") == "(all)"
    assert dropdown(page, "partition").evaluate("s => s.options[s.selectedIndex] && s.options[s.selectedIndex].text") == "(all)"
    assert page.locator(".widget-tab").count() == 1
    assert seen["outside"] == [] and seen["dialogs"] == [] and seen["errors"] == []
    assert page.evaluate("typeof window.__pwned") == "undefined"  # the canary incident's topic and client id stay text


def test_time_window_reads_as_times_and_fits(lab):
    page, _ = lab
    label = explorer(page).locator(".forensics-window")
    assert WINDOW_LABEL.match(label.inner_text().strip()), label.inner_text()
    assert label.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the window text is clipped"
    assert explorer(page).locator(".widget-readout:visible").count() == 0  # the slider's own readout clipped the times


def test_picking_a_group_then_a_partition_changes_figures_and_findings(lab):
    page, _ = lab
    everything = show_findings(page)
    assert "skipped_restore" in everything and "reset_to_latest_gap" in everything
    show_figures(page)

    pick(page, "group", "demo-consumer")
    explorer(page).scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "02-group.png"))
    rows = page.evaluate("document.querySelector('.js-plotly-plot').layout.yaxis.categoryarray")
    assert rows and all(row.startswith("demo-topic") for row in rows), rows
    partitions = dropdown(page, "partition").evaluate("s => [...s.options].map(o => o.text)")
    assert partitions == ["(all)", "demo-topic-0", "demo-topic-1"]  # the group's own partitions
    of_group = show_findings(page)
    assert "reset_to_latest_gap" in of_group and "skipped_restore" not in of_group
    show_figures(page)

    pick(page, "partition", "demo-topic-0")
    rows = page.evaluate("document.querySelector('.js-plotly-plot').layout.yaxis.categoryarray")
    assert "demo-topic-0" in rows and "demo-topic-1" not in rows, rows
    page.screenshot(path=str(SHOTS / "03-partition.png"))
    of_partition = show_findings(page)
    assert "reset_to_latest_gap" not in of_partition and "risky_config" in of_partition  # the loss was on demo-topic-1
    page.screenshot(path=str(SHOTS / "04-findings.png"))
