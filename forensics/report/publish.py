"""Shared HTML writeups: analysis JSON -> papermill -> nbconvert -> one self-contained HTML file.

Files written for ``-o report.html``: ``report.json`` (the analysis), ``report.ipynb`` (the
executed notebook, the record), ``report.html`` and ``report.manifest.json`` (inputs with
sha256, tool version, parameters).

Content-Security-Policy: ``default-src 'none'``; scripts only by sha256 hash of the two scripts
the report itself inlines (plotly.js and the figure bootstrap, both constant, so the hashes do
not depend on any log text); no ``'unsafe-inline'`` or ``'unsafe-eval'`` for scripts, hence no
inline event handler or ``javascript:`` URL can run; styles ``'unsafe-inline'`` (nbconvert's CSS
and plotly's computed styles); images and fonts only ``data:``; no connections, forms or base.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import re
import secrets
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Iterable, Iterator

from ..contract import write_json
from ..errors import ForensicsError
from ..ingest.paths import sha256_file
from ..package import NOTEBOOKS, __version__
from .escape import esc
from .plotting import BOOTSTRAP_JS
from .tables import damage_text, headline
from .views import STYLE

REPORT_NOTEBOOK = NOTEBOOKS / "incident_report.ipynb"
TEMPLATES = Path(__file__).resolve().parent / "templates"
KERNEL = "python3"
CELL_TIMEOUT_S = 600
RENDERING_MODULES = ("papermill", "nbconvert")
"""What ``execute`` and ``to_html`` import: slow to import in a new process, so the CLI imports
them while the driver JVM starts (``cli.imported_meanwhile``)."""
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR"]
"""The report kernel's command line: its own warnings off the command's stderr (ipykernel 7
warns at every start that its local TCP sockets are not encrypted)."""


@cache
def report_kernel_manager() -> type:
    """jupyter_client's kernel manager, without the SIGINT it sends a kernel just before it shuts
    it down, a kill included. papermill asks for ``kernel_info`` after the last cell, and the
    kernel is shut down as soon as the reply arrives; a loaded machine can deliver that SIGINT
    while the kernel is still inside the request's handler, which then logs "KeyboardInterrupt
    caught in kernel." on the command's stderr (1 of 5 reports under load, none of 15 without the
    SIGINT). The interrupt only stops a cell still running: a report's kernel is killed after
    its last cell, or after a failure (a cell timeout, the command interrupted), which ends a
    cell still running too (``report_kernel``)."""
    from jupyter_client.manager import AsyncKernelManager

    class ReportKernelManager(AsyncKernelManager):
        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return ReportKernelManager


@dataclass(frozen=True)
class ReportFiles:
    html: Path
    notebook: Path
    json: Path
    manifest: Path
    headline: dict


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def script_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(scripts: Iterable[str] = ()) -> str:
    """The report's CSP: only the given inline scripts (by hash) may run."""
    allowed = " ".join(script_hash(s) for s in scripts) or "'none'"
    return (
        f"default-src 'none'; script-src {allowed}; style-src 'unsafe-inline'; img-src data:; font-src data:; "
        "connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; worker-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


@contextmanager
def _kernel_path():
    """Put this interpreter's bin first on PATH so the ``python3`` kernel is this venv's Python."""
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + old
    try:
        yield
    finally:
        os.environ["PATH"] = old


def check_parameters(notebook: Path, parameters: dict) -> None:
    """Fail in one line on a parameter the notebook's ``parameters`` cell does not declare."""
    import papermill

    declared = papermill.inspect_notebook(str(notebook))
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise ForensicsError(
            f"Unknown report parameter(s) {', '.join(unknown)} for {notebook.name}.", f"Use only: {', '.join(sorted(declared))}."
        )


@contextmanager
def report_kernel(cwd: Path) -> Iterator[object]:
    """A report kernel started in ``cwd`` now, to boot while the caller works on
    (``report_incident`` analyses meanwhile); killed on leaving: ``execute`` has had the reply of
    every cell by then, outputs included, and nothing is left for a clean shutdown to wait for.
    A kernel that papermill starts when the notebook's run begins, and shuts down after it, adds
    its start and its shutdown to every report. ``forensics.report`` is not imported into the
    kernel as it boots: that moves the import's time into the analysis running beside it."""
    from jupyter_core.utils import run_sync

    cwd.mkdir(parents=True, exist_ok=True)
    km = report_kernel_manager()(kernel_name=KERNEL)
    with _kernel_path():
        run_sync(km.start_kernel)(extra_arguments=KERNEL_ARGUMENTS, cwd=str(cwd))
    try:
        yield km
    finally:
        run_sync(km.shutdown_kernel)(now=True)


def execute(notebook: Path, output: Path, parameters: dict, cwd: Path, kernel=None):
    """Run ``notebook`` headless with papermill into ``output`` (one line on failure), written
    once at the end (or at the failing cell), not at the start and end of every cell; on
    ``kernel`` (``report_kernel``, started in ``cwd``), else on one started here. Returns the
    executed notebook (an ``nbformat`` node), as written."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    check_parameters(notebook, parameters)
    if kernel is None:
        with report_kernel(cwd) as kernel:
            return execute(notebook, output, parameters, cwd, kernel)
    try:
        executed = papermill.execute_notebook(
            str(notebook),
            str(output),
            parameters=parameters,
            kernel_name=KERNEL,
            cwd=str(cwd),
            km=kernel,
            progress_bar=False,
            log_output=False,
            report_mode=True,
            execution_timeout=CELL_TIMEOUT_S,
            request_save_on_cell_execute=False,
        )
        return _record_names_only(executed, output)
    except PapermillExecutionError as exc:
        raise ForensicsError(
            f"The report notebook failed in cell {exc.exec_count}: {exc.ename}: {str(exc.evalue).splitlines()[0] if exc.evalue else ''}",
            f"Check the parameters; the executed notebook is {output}.",
        ) from None
    except FileNotFoundError as exc:
        raise ForensicsError(
            f"Report notebook missing: {exc}.", "Reinstall the toolkit: its package carries the notebooks (forensics/notebooks/)."
        ) from None


def _record_names_only(nb, path: Path):
    """``nb``, written to ``path`` with only the names of the notebook run and written in its
    papermill metadata: their absolute paths can name an incident, and the record travels with
    the report."""
    import nbformat

    recorded = nb.metadata.get("papermill") or {}
    for key in ("input_path", "output_path"):
        if recorded.get(key):
            recorded[key] = Path(recorded[key]).name
    nbformat.write(nb, str(path))
    return nb


def to_html(executed, title: str) -> str:
    """The executed notebook (the node ``execute`` returns) as one self-contained HTML page
    (inputs hidden, plotly.js once, no widget state)."""
    import nbformat

    nb = nbformat.NotebookNode(
        {**executed, "metadata": nbformat.NotebookNode({k: v for k, v in executed.metadata.items() if k != "widgets"})}
    )
    exporter = _report_exporter()(
        template_name="forensics_report",
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    plotly = plotly_js()
    if "</script" in plotly.lower():
        raise ForensicsError("The installed plotly.js cannot be inlined safely.", "Reinstall plotly.")
    resources = {
        "forensics": {
            "csp": esc(content_security_policy([plotly, BOOTSTRAP_JS])),
            "title_html": esc(title),
            "generator": esc(f"kafka-rebalance-forensics {__version__}"),
            "plotly_js": plotly,
            "bootstrap_js": BOOTSTRAP_JS,
        }
    }
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body


FOCUSABLE = re.compile(r'<div class="((?:[^"]* )?(?:jp-Cell-inputWrapper|jp-OutputArea-output)(?: [^"]*)?)"(?![^>]*\stabindex=)')
"""The opening tag of a cell's input or output area, as nbconvert's ``lab`` template writes it
(its class first). Log text cannot forge one: the views escape it, and figure data is JSON
with ``<`` escaped (``escape.script_json``)."""
NO_ALT = re.compile(r"<img(?![^>]*\salt=)")


def focusable(html: str) -> str:
    """``html`` with ``tabindex="0"`` on every cell's input and output area, and alternative text
    on every image without one: what nbconvert's ``HTMLExporter`` adds after rendering."""
    html = FOCUSABLE.sub(lambda m: f'<div class="{m.group(1)}" tabindex="0"', html)
    return NO_ALT.sub('<img alt="No description has been provided for this image"', html)


@cache
def _report_exporter():
    """nbconvert's ``HTMLExporter`` without its last step, which parses the whole page with
    BeautifulSoup and prints it again to add the attributes ``focusable`` adds: on a large
    report, most of the page's time. Registers the two filters ``HTMLExporter`` registers before
    rendering, then renders as its base class does."""
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    class ReportExporter(HTMLExporter):
        def from_notebook_node(self, nb, resources=None, **kw):
            language = nb.metadata.get("language_info", {})
            lexer = language.get("pygments_lexer", language.get("name"))
            self.register_filter("highlight_code", self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
            resources = self._init_resources(resources)
            self.register_filter(
                "filter_data_type", WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
            )
            html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            return focusable(html), resources

    return ReportExporter


def manifest(result: dict, parameters: dict, files: dict, numbers: dict) -> dict:
    """What the report was made from: inputs with sha256, tool version, parameters; and its
    ``headline`` numbers."""
    import plotly

    return {
        "tool": "kafka-rebalance-forensics",
        "tool_version": __version__,
        "plotly_version": plotly.__version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "spark": result.get("spark"),
        "parameters": parameters,
        "inputs": [
            {
                "path": e.get("path"),
                "kind": e.get("kind"),
                "host": e.get("host"),
                "lines": e.get("lines"),
                "sha256": e.get("sha256") or (sha256_file(e["path"]) if e.get("path") else None),
                "problem": e.get("problem"),
            }
            for e in result.get("inputs") or []
        ],
        "files": files,
        "headline": numbers,
    }


def write_report(
    result: dict, out_html: str | os.PathLike, title: str, parameters: dict | None = None, notebook: Path = REPORT_NOTEBOOK, kernel=None
) -> ReportFiles:
    """Write ``result`` beside ``out_html`` and render the report notebook from it (no Spark), on
    ``kernel`` if one was started for it (``report_kernel`` in ``out_html``'s directory)."""
    out_html = Path(out_html).resolve()
    if out_html.suffix.lower() not in (".html", ".htm"):
        raise ForensicsError(f"Report file {out_html.name!r} does not end in .html.", "Give -o NAME.html.")
    out_html.parent.mkdir(parents=True, exist_ok=True)
    stem = out_html.with_suffix("")
    json_path, executed, manifest_path = stem.with_suffix(".json"), stem.with_suffix(".ipynb"), Path(f"{stem}.manifest.json")
    with open(json_path, "w", encoding="utf-8") as handle:
        write_json(result.items(), handle)  # as ``forensics analyze --json`` writes it
    params = {**(parameters or {}), "title": title, "analysis_json": json_path.name}  # beside the notebook, its cwd
    out_html.write_text(to_html(execute(notebook, executed, params, cwd=out_html.parent, kernel=kernel), title), encoding="utf-8")
    files = {"html": out_html.name, "notebook": executed.name, "json": json_path.name}
    numbers = headline(result)
    manifest_path.write_text(json.dumps(manifest(result, params, files, numbers), indent=2, default=str) + "\n", encoding="utf-8")
    return ReportFiles(out_html, executed, json_path, manifest_path, numbers)


def index_html(entries: list[tuple[str, str, dict]], title: str = "Kafka rebalance incidents") -> str:
    """``index.html`` for a batch: one row per incident (name, report link, headline numbers)."""
    rows = []
    for name, href, h in entries:
        if "failed" in h:
            rows.append(f'<tr class="loss"><td>{esc(name)}</td><td colspan="5">report failed: {esc(h["failed"])}</td></tr>')
            continue
        verdicts = ", ".join(f"{n} {v}" for v, n in h["by_verdict"].items() if n) or "no findings"
        lost = damage_text(h, "lost")
        dup = damage_text(h, "duplicated")
        css = (
            "loss"
            if h["records_lost"] or h.get("lost_unmeasured")
            else "duplication"
            if h["records_duplicated"] or h.get("duplicated_unmeasured")
            else ""
        )
        rows.append(
            f'<tr class="{css}"><td><a href="{esc(href)}">{esc(name)}</a></td><td>{esc(verdicts)}</td>'
            f'<td class="num">{esc(lost)}</td><td class="num">{esc(dup)}</td><td class="num">{esc(h["rebalances"])}</td>'
            f"<td>{esc(h['first'])} to {esc(h['last'])}</td></tr>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(content_security_policy())}">'
        f'<meta name="referrer" content="no-referrer"><title>{esc(title)}</title>{STYLE}'
        "<style>body{font-family:system-ui,sans-serif;margin:24px}</style></head><body>"
        f'<h1>{esc(title)}</h1><p class="forensics-caption">{esc(len(entries))} incident(s); ranges are half-open; records lost / processed twice summed over findings.</p>'
        '<table class="forensics-table"><thead><tr><th>incident</th><th>findings by verdict</th><th>records lost</th>'
        "<th>records processed twice</th><th>rebalances</th><th>time span (UTC)</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></body></html>\n"
    )


def report_title(title: str | None, paths, redactor=None) -> str:
    """The title given, else one naming the first inputs; with a ``redactor`` every name it
    knows is masked, and a default title is made of the inputs' pseudonyms (so that a directory
    called like a word of the title does not mask the word)."""
    if title:
        return redactor.text(title) if redactor else title
    names = [os.path.basename(os.path.normpath(str(p))) for p in paths][:3]
    if redactor:
        names = [redactor.text(name) for name in names]
    return "Kafka rebalance incident" + (f": {', '.join(names)}" if names else "")


def redact_parameters(parameters: dict, redactor) -> dict:
    """The notebook's parameters with the paths and the group pseudonymised (the group as it is
    in the redacted result, so that the notebook still selects it)."""
    return {
        **parameters,
        **{name: [redactor.pseudonym("path", str(p)) for p in parameters.get(name) or []] for name in ("paths", "offsets")},
        "group": redactor.name("group", parameters.get("group")),
    }


def check_output(out_html: str | os.PathLike) -> None:
    """Fail before any work when the report name cannot be used."""
    if Path(out_html).suffix.lower() not in (".html", ".htm"):
        raise ForensicsError(f"Report file {str(out_html)!r} does not end in .html.", "Give -o NAME.html.")


def report_incident(
    spark,
    paths,
    offsets,
    out_html,
    tz: str = "UTC",
    title: str | None = None,
    group: str | None = None,
    redact: bool = False,
    redact_topics: bool = False,
    layout: str | None = None,
    columns=None,
    redact_key: str | None = None,
    inputs=None,
) -> ReportFiles:
    """Analyse on ``spark`` (in this process) and write the report files for ``out_html``.

    With ``redact`` the inputs' sha256 are taken first, then the result is pseudonymised, and
    the redactor learns the names of the directories and files read (``path_names``) before it
    masks the title, the parameters' paths and group: neither the report, its notebook nor its
    manifest holds an identifier from the inputs. Names given with ``-o`` are kept as given.
    ``inputs``: ``paths`` and ``offsets`` already routed (``ingest.route_inputs``)."""
    from ..redact import path_names
    from .data import analyse, redact_with

    check_output(out_html)
    with report_kernel(Path(out_html).resolve().parent) as kernel:  # it boots while the analysis runs
        result = analyse(list(paths), list(offsets), tz=tz, spark=spark, layout=layout, columns=columns, inputs=inputs)
        result["inputs"] = [{**e, "sha256": sha256_file(e["path"]) if e.get("path") else None} for e in result.get("inputs") or []]
        parameters = {"paths": [str(p) for p in paths], "offsets": [str(p) for p in offsets], "tz": tz, "group": group, "redact": redact}
        redactor = None
        if redact:
            files = [e.get("path") for e in result["inputs"]]
            result, redactor = redact_with(result, topics=redact_topics, key=redact_key)
            redactor.learn(path_names(files, [*paths, *offsets]))
            parameters = redact_parameters(parameters, redactor)
        return write_report(result, out_html, report_title(title, paths, redactor), parameters, kernel=kernel)


def batch_reports(
    spark, dirs, outdir, tz: str = "UTC", redact: bool = False, redact_topics: bool = False, inputs: dict | None = None
) -> tuple[Path, list[str]]:
    """One report per incident directory (one Spark session for all) and ``index.html``.
    ``inputs``: each directory's files already routed (``ingest.route_inputs``), by directory.

    With ``redact`` an incident is named by the pseudonym of its directory's name in the index
    and its file names, as in its title, under one key for the whole batch (``FORENSICS_REDACT_KEY``,
    else a random one), and a failure's message (which may quote paths) is left out of the index."""
    from ..redact import redactor_for
    from .data import REDACT_KEY_ENV

    outdir = Path(outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    key = (os.environ.get(REDACT_KEY_ENV) or secrets.token_hex(32)) if redact else None
    naming = redactor_for({}, key) if redact else None
    entries, failures, used = [], [], set()
    for directory in dirs:
        name = os.path.basename(os.path.normpath(str(directory))) or "incident"
        shown = naming.pseudonym("path", name) if naming else name
        stem, n = shown, 1
        while stem in used:
            n += 1
            stem = f"{shown}-{n}"
        used.add(stem)
        try:
            files = report_incident(
                spark,
                [str(directory)],
                [],
                outdir / f"{stem}.html",
                tz=tz,
                redact=redact,
                redact_topics=redact_topics,
                redact_key=key,
                inputs=(inputs or {}).get(directory),
            )
            entries.append((shown, files.html.name, files.headline))
        except ForensicsError as exc:
            failures.append(f"{name}: {exc}")
            entries.append((shown, "", {"failed": "message left out of a redacted index" if redact else str(exc)}))
    index = outdir / "index.html"
    index.write_text(index_html(entries), encoding="utf-8")
    return index, failures
