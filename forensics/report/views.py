"""Result objects that render themselves in Jupyter: every cell goes through ``esc``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pandas as pd

from .escape import esc

STYLE = """<style>
.forensics-table{border-collapse:collapse;font-size:12px;margin:4px 0 12px}
table.forensics-table th,table.forensics-table td{border:1px solid #ddd;padding:3px 6px;text-align:left!important;vertical-align:top;max-width:60em}
table.forensics-table th{background:#f4f4f4}
table.forensics-table td.num{text-align:right!important;font-variant-numeric:tabular-nums}
.forensics-table tr.loss td{background:#fdecea}.forensics-table tr.duplication td{background:#fff4e0}
.forensics-caption{color:#555;font-size:12px;margin:2px 0}
.forensics-log{font-family:monospace;font-size:12px;white-space:pre-wrap;word-break:break-all;background:#f7f7f7;border-left:3px solid #999;padding:4px 8px;margin:2px 0}
.forensics-headline{font-size:15px;margin:6px 0}
.forensics-badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-weight:bold;margin-right:6px}
.forensics-badge.loss{background:#c62828}.forensics-badge.duplication{background:#ef6c00}
.forensics-badge.delay{background:#1565c0}.forensics-badge.expected{background:#6d6d6d}.forensics-badge.none{background:#2e7d32}
</style>"""
"""Styles of the report's own elements (static text; no data inside)."""


FOLD_ROWS = 15
"""Tables longer than this render folded in a ``<details>`` element."""


def _cell(value) -> str:
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, (int, float)) and not pd.isna(value):
        text = f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"
        return f'<td class="num">{esc(text)}</td>'
    return f"<td>{esc(value)}</td>"


def table_html(frame: pd.DataFrame, row_class: str | None = None, empty: str = "none") -> str:
    """``frame`` as an HTML table, every header and cell escaped; ``row_class`` names a column
    whose value becomes the row's CSS class (and is not shown)."""
    return rows_html(list(frame.columns), [] if frame.empty else frame.to_dict("records"), row_class, empty)


def rows_html(columns: Sequence[str], records: list[dict], row_class: str | None = None, empty: str = "none") -> str:
    """``table_html`` of rows (dicts) with ``columns``, for the many small tables of one view
    (each rebalance's moves), where building a DataFrame for each adds up."""
    if not records:
        return f'<p class="forensics-caption">{esc(empty)}</p>'
    shown = [c for c in columns if c != row_class]
    head = "".join(f"<th>{esc(c)}</th>" for c in shown)
    rows = []
    for record in records:
        cls = f' class="{esc(record[row_class])}"' if row_class else ""
        cells = "".join(_cell(_plain(record[c])) for c in shown)
        rows.append(f"<tr{cls}>{cells}</tr>")
    return f'<table class="forensics-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _plain(value):
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()  # numpy scalars
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return value


@dataclass(frozen=True)
class Table:
    """A titled table: ``.frame`` for pandas work, ``_repr_html_`` for the notebook."""

    frame: pd.DataFrame
    title: str = ""
    caption: str = ""
    row_class: str | None = None
    empty: str = "none"

    def _repr_html_(self) -> str:
        caption = f'<p class="forensics-caption">{esc(self.caption)}</p>' if self.caption else ""
        body = caption + table_html(self.frame, self.row_class, self.empty)
        if len(self.frame) > FOLD_ROWS:  # long tables fold (no script needed)
            return (
                STYLE + f"<details><summary><b>{esc(self.title)}</b> ({esc(len(self.frame))} rows, click to show)</summary>{body}</details>"
            )
        title = f"<h4>{esc(self.title)}</h4>" if self.title else ""
        return STYLE + title + body

    def __len__(self) -> int:
        return len(self.frame)


@dataclass(frozen=True)
class Html:
    """A block of HTML built from escaped parts (``parts`` are already safe HTML)."""

    parts: tuple[str, ...] = field(default_factory=tuple)
    text: str = ""

    def _repr_html_(self) -> str:
        return STYLE + "".join(self.parts)

    def __str__(self) -> str:
        return self.text
