"""Notebook-facing views of an incident: tables, plotly figures, an explorer and HTML reports.

    incident = load_incident(["incident/"], offsets=[...])     # or analysis_json="result.json"
    incident.summary(); incident.verdict_table(); incident.timeline(); incident.finding(0)

Everything renders from the small JSON result; Spark runs only inside ``load_incident`` when
no ``analysis_json`` is given.
"""

from .incident import Incident, load_incident

__all__ = ["Incident", "load_incident"]
