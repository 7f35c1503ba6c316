"""The lab's truth: lost and duplicated ranges from producer and consumer journals, before and after compaction."""

import json

from lab import truth


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _run(tmp_path):
    journal = tmp_path / "journal"
    _write(journal / "produced.jsonl", [{"topic": "t", "partition": p, "offset": o} for p in (0, 1) for o in range(10)])
    c1 = [{"member": "c1", "generation": 1, "topic": "t", "partition": 0, "offset": o} for o in range(0, 6)]
    c1 += [{"member": "c1", "generation": 1, "topic": "t", "partition": 1, "offset": o} for o in range(5, 10)]
    c2 = [{"member": "c2", "generation": 2, "topic": "t", "partition": 0, "offset": o} for o in range(4, 10)]
    _write(journal / "processed-c1.jsonl", c1)
    _write(journal / "processed-c2.jsonl", c2 + [{"member": "c2", "generation": None, "topic": "t", "partition": 0, "offset": 9}])
    return tmp_path


def test_lost_and_duplicated_are_merged_ranges_with_exclusive_ends(tmp_path):
    lost, duplicated = truth.lost_and_duplicated(_run(tmp_path))
    assert lost == [{"topic": "t", "partition": 1, "from": 0, "to": 5}]
    assert duplicated == [{"topic": "t", "partition": 0, "from": 4, "to": 6}, {"topic": "t", "partition": 0, "from": 9, "to": 10}]


def test_compaction_keeps_every_record_and_shrinks_the_journal(tmp_path):
    run = _run(tmp_path)
    before = truth.lost_and_duplicated(run), truth.member_generations(run)
    size = (run / "journal" / "produced.jsonl").stat().st_size
    truth.compact(run)
    assert (truth.lost_and_duplicated(run), truth.member_generations(run)) == before
    assert (run / "journal" / "produced.jsonl").read_text().count("\n") == 2
    assert (run / "journal" / "produced.jsonl").stat().st_size < size
    assert truth.member_generations(run) == {"c1": [1], "c2": [2, None]}


def test_a_torn_last_line_of_a_killed_driver_is_ignored_but_not_a_torn_middle(tmp_path):
    path = tmp_path / "journal" / "produced.jsonl"
    _write(path, [{"topic": "t", "partition": 0, "offset": 0}])
    with open(path, "a") as handle:
        handle.write('{"topic": "t", "parti')
    assert truth.produced(tmp_path) == [("t", 0, 0)]
    with open(path, "a") as handle:
        handle.write('\n{"topic": "t", "partition": 0, "offset": 1}\n')
    try:
        truth.produced(tmp_path)
    except ValueError as error:
        assert "produced.jsonl:2" in str(error)
    else:
        raise AssertionError("a torn line in the middle must be an error")


def test_write_truth_has_the_shared_keys_and_healthy_follows_the_journals(tmp_path):
    result = truth.write_truth(_run(tmp_path), scenario="s", client="java-consumer", version="4.4.0")
    assert tuple(result)[: len(truth.TRUTH_KEYS)] == truth.TRUTH_KEYS
    assert result["healthy"] is False
    assert truth.load_truth(tmp_path) == result
