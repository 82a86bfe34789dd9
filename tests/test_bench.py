"""`zerocopy bench` for real on a small clip: the JSON shape, the tables, the plot, the refusals."""

import json

import pytest
from conftest import run_cli
from PIL import Image

from zerocopy.budget import decode_threads
from zerocopy.samples import ClipSpec

PATH_KEYS = {"fps", "cpu_ms_per_frame", "cpu_percent", "peak_rss_mb", "stages", "agreement", "pipeline_efficiency"}


@pytest.fixture(scope="module")
def bench_run(clips, tmp_path_factory, face_model_path):
    clip, _ = clips("bench.mp4", ClipSpec(width=1280, height=720, frames=40))
    out = tmp_path_factory.mktemp("bench")
    files = {"json": out / "b.json", "markdown": out / "b.md", "plot": out / "b.png"}
    rc = run_cli("bench", clip, "--frames", "20", "--warmup", "5", "--repeat", "2",
                 "--json", files["json"], "--markdown", files["markdown"], "--plot", files["plot"])
    return rc, files


def test_bench_json_has_the_promised_shape(bench_run):
    rc, files = bench_run
    assert rc == 0
    r = json.loads(files["json"].read_text())
    assert {"machine", "input", "paths", "unavailable", "limits"} <= set(r)
    assert {"software", "baseline"} <= set(r["paths"])
    assert set(r["paths"]) | set(r["unavailable"]) == {"zero-copy", "copy", "software", "baseline"}
    for name, p in r["paths"].items():
        assert set(p) >= PATH_KEYS, name
        assert p["fps"] > 0 and p["cpu_ms_per_frame"] > 0 and p["peak_rss_mb"] > 0
        for stage in ("decode", "preprocess", "inference", "postprocess"):
            assert {"mean_ms", "p50_ms", "p95_ms"} <= set(p["stages"][stage])
            assert p["stages"][stage]["p95_ms"] >= p["stages"][stage]["p50_ms"] >= 0
        assert p["repeats"] == 2
        by_thread = p["cpu_ms_per_frame_by_thread"]  # where the CPU went: /proc, per thread
        assert set(by_thread) == {"decoding", "main", "other"}
        assert by_thread["decoding"] > 0 and by_thread["main"] > 0
        assert sum(by_thread.values()) <= p["cpu_ms_per_frame"] * 1.2 + 0.5
    assert r["paths"]["software"]["agreement"]["reference"] == "baseline"
    assert r["paths"]["baseline"]["agreement"]["reference"] == "software"
    assert r["paths"]["baseline"]["agreement"]["matched_share"] >= 0.9
    vs = r["paths"]["software"]["vs_baseline"]  # ratios of side-by-side pairs, the issue's targets' terms
    assert vs["pairs"] == 2 and "vs_baseline" not in r["paths"]["baseline"]
    sw_fps, base_fps = r["paths"]["software"]["runs_fps"], r["paths"]["baseline"]["runs_fps"]
    fps_ratios = sorted(a / b for a, b in zip(sw_fps, base_fps, strict=True))
    assert vs["fps_ratio_range"] == [round(fps_ratios[0], 3), round(fps_ratios[-1], 3)]
    assert vs["fps_ratio_range"][0] <= vs["fps_ratio"] <= vs["fps_ratio_range"][1]
    assert vs["cpu_ratio"] > 0
    assert r["limits"]["decode_only_fps"] > 0 and r["limits"]["inference_only_fps"] > 0
    assert r["limits"]["decode_threads"] == r["settings"]["decode_threads"] == decode_threads()
    if decode_threads() != 0:  # the contrast: FFmpeg left to use every core
        assert r["limits"]["decode_all_cores_fps"] > 0
    for why in r["unavailable"].values():
        assert why  # a reason, never silently dropped
    assert r["input"]["width"] == 1280 and r["input"]["codec"] == "h264"


def test_bench_markdown_and_plot(bench_run, capsys):
    _, files = bench_run
    md = files["markdown"].read_text()
    assert md.startswith("| path | FPS | CPU ms/frame") and "| software |" in md and "| baseline |" in md
    assert "`software` vs baseline, median of 2 side-by-side pairs" in md
    with Image.open(files["plot"]) as img:
        assert img.size[0] > 800 and img.size[1] > 300


def test_bench_rejects_unknown_paths_and_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        run_cli("bench", "x.mp4", "--paths", "software,warp")
    assert e.value.code == 2
    assert run_cli("bench", tmp_path / "missing.mp4") == 1
    assert "no such file" in capsys.readouterr().err


def test_bench_batches_every_path_and_says_why_zero_copy_cannot(clips, tmp_path, face_model_path):
    clip, _ = clips("bench.mp4", ClipSpec(width=1280, height=720, frames=40))
    out = tmp_path / "b.json"
    assert run_cli("bench", clip, "--paths", "software,zero-copy", "--batch", "2", "--frames", "10",
                   "--warmup", "4", "--repeat", "1", "--json", out) == 0
    r = json.loads(out.read_text())
    assert r["settings"]["batch"] == 2
    assert r["paths"]["software"]["fps"] > 0
    assert "cannot be batched" in r["unavailable"]["zero-copy"]
