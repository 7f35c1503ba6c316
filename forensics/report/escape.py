"""The one escaping helper: every piece of text that reaches HTML goes through ``esc``.

Log lines, client ids, topic names, file names and titles are untrusted. ``esc`` turns them into
inert text for HTML element content and quoted attribute values, and for plotly's hover/label
text (plotly decodes the entities back to the characters and never runs them as markup).
``script_json`` serialises data for a ``<script type="application/json">`` element.
"""

from __future__ import annotations

import html
import json
import math


def esc(value) -> str:
    """``value`` as HTML text: ``& < > " '`` become entities; None becomes the empty string."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


def script_json(data) -> str:
    """JSON for a data-only ``<script type="application/json">``: no ``</script>``, ``<!--`` or
    line separators can end the element early, whatever the strings inside hold."""
    text = json.dumps(data, default=str, allow_nan=False, separators=(",", ":"))
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, safe)
    return text
