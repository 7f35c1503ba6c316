"""A hard-wrapped paste whose only layouts read no head of their own (librdkafka's pipe-separated
log callback, paste 004): the wrapped lines are glued and the file is read, not a crash."""

from __future__ import annotations

from forensics.analyze import analyze
from tests.conftest import ROOT

PASTE = ROOT / "tests" / "data" / "pastes" / "004_librdkafka_pipe_callback_wrapped"


def test_a_wrapped_paste_in_no_head_layout_is_read(spark):
    result = analyze(spark, [str(PASTE)])
    (entry,) = [i for i in result["inputs"] if i["path"].endswith("consumer.log")]
    assert not entry.get("problem")
    assert result["accounting"]["events"] > 0
    assert result["rebalances"], "the paste's join and assignment make a rebalance"
