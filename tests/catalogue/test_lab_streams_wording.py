"""Catalogue wording seen from real Kafka in the lab (lab/runs/streams_*): lines the catalogue's
own examples do not show, checked against the templates that must read them."""

import re

from forensics.catalogue import catalogue_entries

BROKER_PREFIX = r"^\[GroupCoordinator id=\d+[^\]]*\] "


def _entry(entry_id: str) -> dict:
    return next(e for e in catalogue_entries() if e["id"] == entry_id)


def test_a_streams_group_member_fenced_on_session_expiry_is_read_as_member_fenced():
    """A 4.4.0 broker's KIP-1071 streams group says "Streams member M fenced ..." (B41)."""
    message = (
        "[GroupCoordinator id=1 topic=__consumer_offsets partition=0] [GroupId wordcounts] Streams member "
        "dAq0Hi22RHW8zAkD_09FZQ fenced from the group because the member session expired.."
    )
    entry = _entry("B41")
    found = re.match(entry["pattern"], re.sub(BROKER_PREFIX, "", message))
    assert entry["event_type"] == "coordinator:group:member_fenced"
    assert found and found.group("group_id") == "wordcounts" and found.group("member_id") == "dAq0Hi22RHW8zAkD_09FZQ"
    assert found.group("reason") == "the member session expired."


def test_other_members_named_like_a_streams_member_are_not_read_as_fenced():
    entry = _entry("B41")
    assert not re.match(entry["pattern"], "[GroupId g] Streams members dAq0 fenced from the group because x.")
    assert not re.match(entry["pattern"], "[GroupId g] Streams member dAq0 joins the streams group.")


def test_a_streams_group_member_that_closes_is_read_as_member_left():
    """Kafka Streams 4.4.0 closing on a KIP-1071 streams group: "Member M left the streams group." (B40)."""
    message = (
        "[GroupCoordinator id=1 topic=__consumer_offsets partition=0] [GroupId wordcounts][MemberId FP1iehlZTEuLhvLVRqltgw] "
        "Member FP1iehlZTEuLhvLVRqltgw left the streams group."
    )
    entry = _entry("B40")
    found = re.match(entry["pattern"], re.sub(BROKER_PREFIX, "", message))
    assert entry["event_type"] == "coordinator:group:member_left"
    assert found and found.group("group_id") == "wordcounts" and found.group("member_id") == "FP1iehlZTEuLhvLVRqltgw"
    assert not re.match(entry["pattern"], "[GroupId wordcounts] Member FP1iehlZTEuLhvLVRqltgw left the share group.")
