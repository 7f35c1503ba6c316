"""Figures of incidents with many consumer groups: at most ``MENU_GROUPS`` groups, listed worst
first, and each figure opens as its dropdown's entry for the first group shows it."""

from __future__ import annotations

from forensics.report import figures
from forensics.report.group_menu import MENU_GROUPS
from forensics.report.incident import Incident


def _group(i: int) -> str:
    return f"group-{i:03d}"


def many_groups(count: int, damaged: int) -> dict:
    """A result of ``count`` groups, each with one partition owned through two rebalances and an
    expected finding; group ``damaged`` alone also lost records. Its evidence lines name no file."""
    ownership, rebalances, findings = [], [], []
    for i in range(count):
        group = _group(i)
        ownership.append(
            {
                "group": group,
                "topic": f"t{i}",
                "partition": 0,
                "host": "h1",
                "client_id": "c1",
                "generation": 1,
                "from": "2024-01-01T00:00:05Z",
                "to": "2024-01-01T00:10:00Z",
                "ended": "revoked",
                "evidence": {},
            }
        )
        for generation, minute in ((1, 0), (2, 10)):
            rebalances.append(
                {
                    "group": group,
                    "generation": generation,
                    "start": f"2024-01-01T00:{minute:02d}:00Z",
                    "end": f"2024-01-01T00:{minute:02d}:05Z",
                    "joined": f"2024-01-01T00:{minute:02d}:03Z",
                    "trigger": "test",
                    "members": ["h1/c1"],
                    "assignments": [{"member": "h1/c1", "at": f"2024-01-01T00:{minute:02d}:05Z"}],
                }
            )
        findings.append(_finding(group, "expected", i))
    findings.append(_finding(_group(damaged), "loss", damaged))
    return {"ownership": ownership, "rebalances": rebalances, "findings": findings, "commits": [], "restores": []}


def _finding(group: str, verdict: str, i: int) -> dict:
    return {
        "detector": "test",
        "verdict": verdict,
        "group": group,
        "topic": f"t{i}",
        "partition": 0,
        "offset_from": 0,
        "offset_to": 5,
        "records": 5,
        "start": "2024-01-01T00:10:00Z",
        "end": "2024-01-01T00:10:05Z",
        "evidence": [],
        "explanation": "test",
    }


def test_a_figure_of_many_groups_holds_the_first_ones_and_says_how_many_it_left_out():
    result = many_groups(MENU_GROUPS + 12, damaged=MENU_GROUPS + 7)
    for figure in (figures.ownership_timeline(result), figures.rebalance_phases(result)):
        spec = figure.spec()
        buttons = spec["layout"]["updatemenus"][0]["buttons"]
        shown = [b["label"] for b in buttons[:-1]]
        assert buttons[-1]["label"] == "all groups"
        assert shown == [_group(MENU_GROUPS + 7), *(_group(i) for i in range(MENU_GROUPS - 1))], (
            "the group with a loss, then the others by their first finding"
        )
        assert spec["layout"]["updatemenus"][0]["active"] == 0, "it opens on the group with a loss"
        assert f"({MENU_GROUPS} of {MENU_GROUPS + 12} groups, worst first)" in spec["layout"]["title"]["text"]
        drawn = {y.split(" · ")[0] for trace in spec["data"] for y in trace.get("y") or [] if y}
        assert drawn == set(shown)
        assert all(len(b["args"][0]["visible"]) == len(spec["data"]) for b in buttons)


def test_a_figure_of_few_groups_holds_them_all():
    result = many_groups(3, damaged=2)
    spec = figures.ownership_timeline(result).spec()
    menu = spec["layout"]["updatemenus"][0]
    assert [b["label"] for b in menu["buttons"]] == [_group(2), _group(0), _group(1), "all groups"] and menu["active"] == 0
    assert " groups, worst first)" not in spec["layout"]["title"]["text"]


def test_a_figure_opens_as_its_dropdown_shows_the_first_group():
    """The open figure's shapes, rows, height and title are those its dropdown's entry sets
    (plotly once merged the chosen group's shapes, element by element and cyclically, into all
    groups' shapes: 82 shapes where the group had 2)."""
    result = many_groups(4, damaged=1)
    for figure in (figures.ownership_timeline(result), figures.rebalance_phases(result)):
        layout = figure.spec()["layout"]
        menu = layout["updatemenus"][0]
        chosen = menu["buttons"][menu["active"]]
        assert chosen["label"] == _group(1)
        shown = chosen["args"][1]
        assert layout["shapes"] == shown["shapes"] and len(layout["shapes"]) <= 2 * len(result["rebalances"]) // 4
        assert layout["yaxis"]["categoryarray"] == shown["yaxis.categoryarray"] and layout["height"] == shown["height"]
        assert layout["title"]["text"] == shown["title.text"]
        trace_visible = [trace.get("visible", True) for trace in figure.spec()["data"]]
        assert trace_visible == chosen["args"][0]["visible"]


def test_every_finding_reads_each_cited_file_once(tmp_path, monkeypatch):
    """``each_finding`` reads the evidence of all findings together, and the views after it read
    no file again: finding by finding, the 4M-line benchmark corpus' 2,330 findings read its
    files 2,330 times, and each of five views read them again."""
    from forensics.report import evidence

    log = tmp_path / "app.log"
    log.write_text("".join(f"line {n}\n" for n in range(1, 101)), encoding="utf-8")
    result = many_groups(5, damaged=3)
    for n, f in enumerate(result["findings"]):
        f["evidence"] = [{"file": str(log), "line": 10 * n + 1}, {"file": str(log), "line": 10 * n + 2}]
    reads = []
    real = evidence._lines_of
    monkeypatch.setattr(evidence, "_lines_of", lambda path, numbers: reads.append(path) or real(path, numbers))
    incident = Incident(result, result)
    html = "".join(incident.each_finding().parts)
    for view in (
        incident.timeline,
        incident.each_rebalance,
        incident.rebalance_phases,
        incident.committed_offsets,
        lambda: incident.finding(0),
    ):
        view()
    assert reads == [str(log)]
    assert all(f"line {10 * n + 2}" in html for n in range(len(result["findings"])))
