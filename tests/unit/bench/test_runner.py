"""zerocopy.bench.runner: refusals and errors before or instead of measuring."""

import pytest
from conftest import run_cli

from zerocopy.bench import runner
from zerocopy.errors import ZeroCopyError
from zerocopy.samples import ClipSpec


def test_bench_rejects_unknown_paths_and_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        run_cli("bench", "x.mp4", "--paths", "software,warp")
    assert e.value.code == 2
    assert run_cli("bench", tmp_path / "missing.mp4") == 1
    assert "no such file" in capsys.readouterr().err


def test_bench_says_in_one_line_when_no_path_measured_anything(clips, monkeypatch, face_model_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))  # the clip most tests use: its size does not matter here
    monkeypatch.setattr(runner, "run_worker", lambda args: {"error": f"{clip}: no frame could be decoded"})
    opts = runner.BenchOptions(input=str(clip), paths=["software", "baseline"], frames=5, warmup=2, repeat=2)
    with pytest.raises(ZeroCopyError) as e:
        runner.run_bench(opts)
    assert str(e.value) == f"nothing measured: software, baseline: {clip}: no frame could be decoded"
