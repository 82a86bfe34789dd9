"""JSON Lines stream into the file's temporary; the file is replaced only by a run that produced it."""

import os

from zerocopy.sinks.files import temporary
from zerocopy.sinks.jsonl import JsonlSink


def test_a_run_that_never_began_leaves_the_old_file_whole(tmp_path):
    out = tmp_path / "d.jsonl"
    out.write_text('{"frame": 0}\n')
    sink = JsonlSink(str(out), [])
    assert out.read_text() == '{"frame": 0}\n'  # not truncated while the run starts
    sink.close()
    assert out.read_text() == '{"frame": 0}\n' and os.listdir(tmp_path) == ["d.jsonl"]


def test_a_run_that_began_replaces_it_at_close(tmp_path):
    out = tmp_path / "d.jsonl"
    out.write_text("old\n")
    sink = JsonlSink(str(out), [])
    sink.begin("clip.mp4", 25.0)
    assert temporary(out).exists() and out.read_text() == "old\n"
    sink.close()
    assert out.read_text() == "" and not temporary(out).exists()
