"""serve/record_config.py: a camera's `record` mode ("continuous", "motion", "events", or true as today, or false)
and its `retain_days`, each bad value one line."""

from __future__ import annotations

import pytest

from zerocopy.serve.record_config import check_record


def checked(cam: dict, storage: bool = True, anonymise: bool = False):
    lines: list[str] = []
    record = check_record(cam, "cameras.front", lambda where, what: lines.append(f"[{where}] {what}"), storage,
                          lambda url: None, anonymise=anonymise)
    return record, lines


@pytest.mark.parametrize(("given", "mode"), [({}, "events"), ({"record": True}, "events"),
                                             ({"record": "events"}, "events"), ({"record": "motion"}, "motion"),
                                             ({"record": "continuous", "retain_days": 3}, "continuous")])
def test_a_record_mode_and_its_days(given, mode):
    record, lines = checked(given)
    assert lines == [] and record.enabled and record.mode == mode
    assert record.retain_days == given.get("retain_days")


def test_bad_modes_and_days_are_one_line_each():
    record, lines = checked({"record": "always", "retain_days": 0})
    assert lines == ["[cameras.front] record must be \"continuous\", \"motion\", \"events\" or false, not 'always'",
                     "[cameras.front] retain_days must be a number of days above 0 (at most 3650), not 0"]
    assert not checked({"record": False})[0].enabled and not checked({"record": "continuous"}, storage=False)[0].enabled
    assert checked({"record": "continuous"}, anonymise=True)[1] == [
        "[cameras.front] record = \"continuous\" with anonymise: a clip is the camera's own packets, copied without "
        "decoding, so nothing in it could be hidden; set record = false (snapshots and latest.jpg are hidden)"]
