"""`zerocopy detect` over damaged streams: truncated files and flipped bits."""

import json

import numpy as np
import pytest
from conftest import detect_quiet, one_line_error, read_jsonl

from zerocopy.samples import ClipSpec, write_clip


@pytest.fixture(scope="module")
def long_clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("long") / "faststart.mp4"
    truth = write_clip(path, ClipSpec(frames=60), container_options={"movflags": "faststart"})
    return path, truth


@pytest.mark.parametrize("fmt", ["mp4", "matroska", "mpegts"])
def test_truncated_files_are_processed_as_far_as_they_decode(tmp_path, capsys, fmt, face_model_path):
    full = tmp_path / f"full.{fmt}"
    write_clip(full, ClipSpec(frames=60), container_format=fmt,
               container_options={"movflags": "faststart"} if fmt == "mp4" else None)
    cut = tmp_path / f"cut.{fmt}"
    data = full.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.6)])
    out, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    assert detect_quiet(cut, "--json", out, "--report", report) == 0
    lines = read_jsonl(out)
    assert 10 <= len(lines) < 60
    assert [x["frame"] for x in lines] == list(range(len(lines)))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if fmt != "mpegts":  # a TS cut between packets can look clean; the others must say so
        assert "damaged stream" in err
        assert json.loads(report.read_text())["inputs"][0]["damage"]["damaged"]


def test_truncated_mp4_without_its_index_is_a_clear_error(tmp_path, capsys, face_model_path):
    full = tmp_path / "moov-at-end.mp4"
    write_clip(full, ClipSpec(frames=30))
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    assert detect_quiet(cut) == 1
    assert "moov atom not found" in one_line_error(capsys)


def test_bit_flips_are_decoded_through_and_reported(long_clip, tmp_path, capsys, face_model_path):
    path, truth = long_clip
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(7)
    start = len(data) // 10  # past the index, inside the frames
    for i in rng.integers(start, len(data), 60):
        data[i] ^= 0x5A
    bad = tmp_path / "flipped.mp4"
    bad.write_bytes(bytes(data))
    out, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    assert detect_quiet(bad, "--json", out, "--report", report) == 0
    lines = read_jsonl(out)
    assert len(lines) >= 0.9 * len(truth)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "damaged stream" in err
    damage = json.loads(report.read_text())["inputs"][0]["damage"]
    assert damage["decoder_errors"] + damage["packets_failed"] + damage["corrupt_frames"] > 0
