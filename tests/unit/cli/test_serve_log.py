"""cli/serve.py's log for a person reading it later (issue 36): each line stamped with the time (ISO 8601 with its
offset) unless systemd's journal reads stderr (`$JOURNAL_STREAM` names it: it stamps its own), and a looped file's
restart said once, not at every loop. Through serve itself: tests/e2e/test_serve.py."""

from __future__ import annotations

import io
import os
import re
import sys
import threading
from datetime import datetime, timedelta, timezone

from zerocopy.cli.serve import StampedLines, StateLog, stamped_stderr, under_journal
from zerocopy.serve.status import CameraState

NOON = datetime(2026, 11, 28, 12, 0, 5, 123456, tzinfo=timezone(timedelta(hours=1)))


def test_each_line_begins_with_the_time_it_began():
    out = io.StringIO()
    stamped = StampedLines(out, clock=lambda: NOON)
    stamped.write("zerocopy: one\nzerocopy: tw")  # print() writes a line, then its end, in two writes
    stamped.write("o")
    stamped.write("\n")
    stamped.write("")
    assert out.getvalue() == "2026-11-28T12:00:05+01:00 zerocopy: one\n2026-11-28T12:00:05+01:00 zerocopy: two\n"


def test_lines_printed_from_several_threads_at_once_never_mix():
    """`print` writes a line's text, then its end: a thread switch between them mixed two lines into one, and left a
    line of nothing but a time (the review saw 480 of 40,000)."""
    out = io.StringIO()
    stamped = StampedLines(out, clock=lambda: NOON)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=lambda n=n: [print(f"zerocopy: thread {n} line {i}", file=stamped)
                                                        for i in range(5000)]) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(previous)
    lines = out.getvalue().splitlines()
    assert len(lines) == 10_000
    line = re.compile(r"2026-11-28T12:00:05\+01:00 zerocopy: thread [01] line \d+")
    assert [x for x in lines if not line.fullmatch(x)] == []


def test_the_journal_is_told_apart_by_the_device_and_inode_of_stderr(tmp_path, monkeypatch):
    with open(tmp_path / "err", "w") as stream, open(tmp_path / "other", "w") as other:
        st = os.fstat(stream.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
        assert under_journal(stream) and not under_journal(other)  # started by the unit, stderr elsewhere
        assert not under_journal(io.StringIO())
        for value in ("", "junk", f"{st.st_dev}:"):
            monkeypatch.setenv("JOURNAL_STREAM", value)
            assert not under_journal(stream)
        monkeypatch.delenv("JOURNAL_STREAM")
        assert not under_journal(stream)


def test_stderr_is_stamped_while_serve_runs_and_not_under_the_journal(tmp_path, monkeypatch):
    with open(tmp_path / "err", "w") as stream:
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.delenv("JOURNAL_STREAM", raising=False)
        with stamped_stderr():
            print("zerocopy: stamped", file=sys.stderr)
        assert sys.stderr is stream
        st = os.fstat(stream.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
        with stamped_stderr():
            print("zerocopy: as it is", file=sys.stderr)
    first, second = (tmp_path / "err").read_text().splitlines()
    assert datetime.fromisoformat(first.split(" ")[0]).utcoffset() is not None and first.endswith(" zerocopy: stamped")
    assert second == "zerocopy: as it is"


class Looped:
    """What `StateLog` reads of the engine: one looped camera, `desk`, whose state the test sets (`go`); `said`: what
    the log said of it."""

    def __init__(self):
        self.state, self.error = "starting", None
        self.said: list[str] = []
        self.log = StateLog(self, None, self.said.append, looped=["desk"])

    def camera_states(self) -> list[CameraState]:
        return [CameraState("desk", self.state, "software", self.error)]

    def go(self, *states: str, error: str | None = None) -> list[str]:
        """Each of `states` in turn, each seen by the log; what it said."""
        for state in states:
            self.state, self.error = state, error
            self.log.check()
        return self.said


def test_a_looped_file_played_again_is_said_once_not_at_every_loop():
    desk = Looped()
    said = desk.go("starting", "running", *["reconnecting", "running"] * 5)
    assert said[0] == "camera desk: running (software path)"
    assert len(said) == 2 and said[1].startswith("camera desk: the file ended: it is played again from its start")
    desk.go("failed", error="cannot read clip.ts")  # anything else is said as for any camera
    assert desk.go("running")[2:] == ["camera desk: failed: cannot read clip.ts", "camera desk: running"]


def test_a_looped_file_that_ends_before_its_first_frame_is_seen_still_says_it_runs():
    """A short file may end between two looks (serve looks every 0.5 s): its first end is said, then `running`."""
    said = Looped().go("starting", "reconnecting", *["running", "reconnecting"] * 3)
    assert len(said) == 2 and said[0].startswith("camera desk: the file ended: ")
    assert said[1] == "camera desk: running (software path)"


def test_a_looped_file_that_could_not_be_opened_says_when_it_runs_again():
    desk = Looped()
    desk.go("starting", "running", "reconnecting", "running")
    desk.go("reconnecting", error="cannot open yet: no such file")
    said = desk.go("running")
    assert said[-2:] == ["camera desk: cannot open yet: no such file; retrying", "camera desk: running"], said
