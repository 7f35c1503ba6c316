"""``with_members`` on every sample incident: each event gains its member's columns and keeps
its others as they were; the windows that fill them sort the columns they read alone."""

from __future__ import annotations

import re

from forensics import schema as s
from forensics.model.members import GENERATION_NOW, MEMBER, MEMBER_INPUTS, with_members

FILLED = (s.CLIENT_ID, s.GROUP_ID, s.MEMBER_ID, s.INSTANCE_ID)


def test_every_event_keeps_its_other_columns_and_gains_its_members(samples_model):
    events, members = samples_model.events, samples_model.members
    others = [c for c in events.columns if c not in FILLED]
    assert members.count() == events.count()
    assert members.select(*others).exceptAll(events.select(*others)).count() == 0
    assert members.columns == [*[c for c in events.columns if c not in FILLED[1:]], MEMBER, *FILLED[1:], GENERATION_NOW, s.MEMBER_BASIS]
    named = members.where(f"{MEMBER} is not null and {s.GROUP_ID} is not null").count()
    assert named > 0 and members.where(f"{GENERATION_NOW} is not null").count() > 0


def test_the_windows_sort_only_the_columns_they_read(samples_model):
    frame = with_members(samples_model.events)
    plan = frame.sparkSession._jvm.PythonSQLUtils.explainString(frame._jdf.queryExecution(), "formatted")
    inputs = re.findall(r"^\(\d+\) Window\nInput \[\d+\]: \[(.*)\]$", plan, re.M)
    assert len(inputs) >= 3
    for columns in inputs:
        names = {re.sub(r"#\d+L?$", "", column) for column in columns.split(", ")}
        assert s.MESSAGE not in names and s.LOGGER not in names
        assert {s.SOURCE_FILE, s.LINE, s.TS} <= names <= {*MEMBER_INPUTS, MEMBER, s.MEMBER_BASIS} | {n for n in names if n.startswith("_")}
