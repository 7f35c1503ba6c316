"""Catalogue wording seen from real Kafka in the lab (lab/runs/transactional_fencing): producer
lines the catalogue's own examples do not show, checked against the templates that must read them."""

import re

from forensics.catalogue import catalogue_entries


def _entry(entry_id: str) -> dict:
    return next(e for e in catalogue_entries() if e["id"] == entry_id)


def test_an_epoch_bump_without_the_class_name_is_read():
    """The 3.9.2 producer, fenced mid-transaction, bumps its epoch and names the pair bare (P11)."""
    message = "Invoking InitProducerId with current producer ID and epoch (producerId=0, epoch=0) in order to bump the epoch"
    entry = _entry("P11")
    found = re.match(entry["pattern"], message)
    assert entry["event_type"] == "producer:epoch_bumped"
    assert found and (found.group("producer_id"), found.group("producer_epoch")) == ("0", "0")


def test_the_older_wording_is_still_read_and_other_lines_are_not():
    entry = _entry("P11")
    assert re.match(
        entry["pattern"],
        "Invoking InitProducerId with current producer ID and epoch "
        "ProducerIdAndEpoch(producerId=4001, epoch=3) in order to bump the epoch",
    )
    assert not re.match(entry["pattern"], "Invoking InitProducerId for the first time in order to acquire a producer ID")
    assert not re.match(
        entry["pattern"],
        "Invoking InitProducerId with current producer ID and epoch Other(producerId=1, epoch=2) in order to bump the epoch",
    )
