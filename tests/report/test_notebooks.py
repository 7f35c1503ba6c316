"""Both notebooks run headless under papermill on the shared analysis (no Spark in the kernel)."""

from __future__ import annotations

import nbformat
import papermill
import pytest

from forensics.report.publish import NOTEBOOKS, _kernel_path

EXPECTED_PARAMETERS = {"paths", "offsets", "tz", "group", "window", "title", "redact", "layout", "columns", "analysis_json"}


def run(name: str, tmp_path, timeout: int = 120, **parameters) -> nbformat.NotebookNode:
    out = tmp_path / f"{name}.out.ipynb"
    with _kernel_path():
        papermill.execute_notebook(
            str(NOTEBOOKS / f"{name}.ipynb"),
            str(out),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(NOTEBOOKS),
            progress_bar=False,
            log_output=False,
            execution_timeout=timeout,
        )
    return nbformat.read(str(out), as_version=4)


def outputs_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", f"error cell: {output.get('ename')}: {output.get('evalue')}"
            data = output.get("data", {})
            parts.append(str(data.get("text/html", "")) + str(data.get("text/plain", "")) + str(output.get("text", "")))
    return "\n".join(parts)


@pytest.mark.parametrize("name", ["incident_report", "rebalance_explorer"])
def test_one_parameters_cell_with_literals_only(name):
    nb = nbformat.read(str(NOTEBOOKS / f"{name}.ipynb"), as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert set(papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb"))) == EXPECTED_PARAMETERS
    assert "import" not in tagged[0].source and "(" not in tagged[0].source.split("#")[0]


def test_incident_report_runs_headless(analysis_json, tmp_path):
    nb = run("incident_report", tmp_path, analysis_json=str(analysis_json), title="Papermill run")
    text = outputs_text(nb)
    for expected in (
        "Papermill run",
        "Records lost: 55,877",
        "Lost and duplicated offset ranges",
        "[0, 55,872)",
        "[0, 5)",
        "Line accounting",
        "Rebalances",
        "Remedy.",
        "skipped_restore",
        "forensics-plot-data",
    ):
        assert expected in text, expected


def test_explorer_runs_headless_on_a_group_and_window(analysis_json, tmp_path):
    # On a loaded machine nbclient may miss the reply to the cell that displays the widgets and
    # find it only when its wait times out (jupyter/nbclient#312): 120 s in CI runs. The cell
    # takes under a second, so a short timeout bounds that wait without failing the run.
    nb = run(
        "rebalance_explorer",
        tmp_path,
        timeout=20,
        analysis_json=str(analysis_json),
        group="demo-consumer",
        window=["2021-02-10T15:00:00Z", "2021-02-10T16:00:00Z"],
    )
    text = outputs_text(nb)
    assert "'group': 'demo-consumer'" in text and "reset_to_latest_gap" in text
    assert "application/vnd.jupyter.widget-view+json" in str(nb.cells)


def test_a_failing_report_cell_is_one_line_and_its_notebook_is_kept_executed_to_it(tmp_path, capfd):
    """``publish.execute`` writes the notebook once, at the end; a failing cell still leaves it
    written, run up to that cell, and the error comes as one line naming the cell. The kernel's
    own warnings stay off stderr (``KERNEL_ARGUMENTS``)."""
    from forensics.errors import ForensicsError
    from forensics.report.publish import execute

    notebook = tmp_path / "failing.ipynb"
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        nbformat.v4.new_code_cell("title = 'x'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("print('ran', title)"),
        nbformat.v4.new_code_cell("raise ValueError('a broken cell')"),
        nbformat.v4.new_code_cell("print('never')"),
    ]
    nbformat.write(nb, str(notebook))
    executed = tmp_path / "out" / "failing.out.ipynb"
    executed.parent.mkdir()
    with pytest.raises(ForensicsError, match=r"failed in cell 4: ValueError: a broken cell"):
        execute(notebook, executed, {"title": "given"}, cwd=executed.parent)
    kept = nbformat.read(str(executed), as_version=4)
    code = [cell for cell in kept.cells if cell.cell_type == "code"]
    assert [o.get("text") for o in code[2]["outputs"] if o.get("name") == "stdout"] == ["ran given\n"]
    assert code[3]["outputs"][0]["ename"] == "ValueError" and not code[4]["outputs"]
    assert "IPKernelApp" not in capfd.readouterr().err


@pytest.mark.parametrize("interrupted", [False, True], ids=["report kernel manager", "jupyter_client's, for contrast"])
def test_the_report_kernel_is_not_interrupted_as_it_shuts_down(tmp_path, interrupted):
    """jupyter_client sends a SIGINT before the shutdown request; arriving while the kernel still
    answers papermill's last ``kernel_info`` request, it put "KeyboardInterrupt caught in kernel."
    on ``forensics report``'s stderr (a CI run). Here a kernel records the SIGINTs it gets."""
    import asyncio

    from jupyter_client.manager import AsyncKernelManager

    from forensics.report.publish import KERNEL, KERNEL_ARGUMENTS, report_kernel_manager

    mark = tmp_path / "interrupted"

    async def shut_down_after_one_cell(manager_class: type) -> None:
        km = manager_class(kernel_name=KERNEL)
        await km.start_kernel(extra_arguments=KERNEL_ARGUMENTS)
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            # ipykernel restores the SIGINT handler it saved before each cell once the cell ends.
            record = f"get_ipython().kernel.saved_sigint_handler = lambda *_: open({str(mark)!r}, 'w').close()"
            reply = await kc.execute_interactive(record, timeout=60)
            assert reply["content"]["status"] == "ok"
        finally:
            kc.stop_channels()
            await km.shutdown_kernel()

    with _kernel_path():
        asyncio.run(shut_down_after_one_cell(AsyncKernelManager if interrupted else report_kernel_manager()))
    assert mark.exists() == interrupted


def test_a_report_kernel_boots_in_its_directory_and_is_killed_on_leaving(tmp_path):
    """``report_kernel`` starts the kernel at once, to boot while the analysis runs, in the
    report's directory (made if missing: the notebook reads the analysis beside it); the kernel
    is gone once the block is left, here by a failure (an analysis that fails)."""
    import asyncio

    from forensics.report.publish import report_kernel

    async def working_directory(km) -> str:
        seen: list = []
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            reply = await kc.execute_interactive(
                "import os; print(os.getcwd(), end='')", output_hook=lambda msg: seen.append(msg), timeout=60
            )
            assert reply["content"]["status"] == "ok"
        finally:
            kc.stop_channels()
        return "".join(msg["content"].get("text", "") for msg in seen if msg["msg_type"] == "stream")

    directory = tmp_path / "out" / "report"
    with pytest.raises(RuntimeError, match="the analysis failed"):
        with report_kernel(directory) as km:
            process = km.provisioner.process
            assert asyncio.run(working_directory(km)) == str(directory)
            raise RuntimeError("the analysis failed")
    assert process.poll() is not None and not km.has_kernel
