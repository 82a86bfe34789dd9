"""zerocopy.bench.tables: the tables, with figures missing."""

from zerocopy.bench import runner, tables


def test_bench_tables_survive_missing_ratios_and_limits():
    assert runner._vs_baseline([{"fps": 10.0, "cpu_ms_per_frame": 2.0}], [{"fps": 0.0, "cpu_ms_per_frame": 0}]) is None
    stages = {s: {"mean_ms": 1.0, "p50_ms": 1.0, "p95_ms": 1.0} for s in ("decode", "preprocess", "inference",
                                                                         "postprocess")}
    path = {"fps": 10.0, "cpu_ms_per_frame": 2.0, "cpu_percent": 50.0, "peak_rss_mb": 100.0, "stages": stages,
            "frames": 8, "runs_frames": [8], "vs_baseline": {"pairs": 1, "cpu_ratio": 0.5},
            "pipeline_efficiency": None}
    result = {"machine": {"cpu": "x", "cores": 2}, "input": {"codec": "h264", "width": 64, "height": 64, "frames": 10},
              "settings": {"frames": 300, "warmup": 2, "repeat": 1},
              "paths": {"software": path}, "unavailable": {},
              "limits": {"decode_only_fps": None, "decode_only_cpu_ms_per_frame": None, "inference_only_fps": 5.0,
                         "decode_threads": 1, "errors": {"decode": "no frame measured"}}}
    text = tables.table(result)
    # one pair: no range, and said so (not "(0.50–0.50)")
    assert "vs baseline, one side-by-side pair: CPU/frame × 0.50\n" in text + "\n", text
    assert "decode only not measured (no frame measured)" in text
    assert tables._agreement_cell({"matched_share": 1.0, "extra": 0, "reference": "baseline"}) == \
        "100% matched, 0 extra vs baseline"
    assert "1 run per path, 8 frames measured after 2 warm-up (the input has 10; 300 asked)" in text
    assert "| software | CPU/CPU | 10.0 |" in tables.markdown(result)  # no device recorded: said as the CPU


def test_the_middle_path_is_shown_in_both_tables():
    """The software path inferring on the GPU (what `--device auto` picks where OpenVINO sees one): a column
    for every path, and the split said in words under the table."""
    stages = {s: {"mean_ms": 1.0, "p50_ms": 1.0, "p95_ms": 1.0} for s in ("decode", "preprocess", "inference",
                                                                         "postprocess")}
    run = {"fps": 10.0, "cpu_ms_per_frame": 2.0, "cpu_percent": 50.0, "peak_rss_mb": 100.0, "stages": stages,
           "frames": 8, "runs_frames": [8], "pipeline_efficiency": None}
    result = {"machine": {"cpu": "x", "cores": 2}, "input": {"codec": "h264", "width": 64, "height": 64, "frames": 10},
              "settings": {"frames": 8, "warmup": 2, "repeat": 1}, "unavailable": {},
              "paths": {"software": {**run, "device": "GPU.0"}, "zero-copy": {**run, "device": "GPU"}},
              "limits": {"decode_only_fps": 5.0, "decode_only_cpu_ms_per_frame": 1.0, "inference_only_fps": 5.0,
                         "decode_threads": 1}}
    text, markdown = tables.table(result), tables.markdown(result)
    assert text.splitlines()[0].split()[:2] == ["path", "decode/infer"]
    assert text.splitlines()[2].split()[:2] == ["software", "CPU/GPU"]
    assert text.splitlines()[3].split()[:2] == ["zero-copy", "GPU/GPU"]
    assert "software: decoding on the CPU, inferring on the GPU" in text
    assert "zero-copy: decoding" not in text  # said only where the two differ
    assert "- software: decoding on the CPU, inferring on the GPU" in markdown


def test_the_region_stage_is_reported_per_path_in_both_tables():
    stages = {s: {"mean_ms": 1.0, "p50_ms": 1.0, "p95_ms": 1.0} for s in ("decode", "preprocess", "inference",
                                                                         "postprocess")}
    run = {"fps": 10.0, "cpu_ms_per_frame": 2.0, "cpu_percent": 50.0, "peak_rss_mb": 100.0, "stages": stages,
           "device": "CPU", "nireq": 2}
    times = {"regions": 12, "regions_per_s": 80.0, "per_region_crop_ms": {"mean_ms": 0.1, "p50_ms": 0.1, "p95_ms": 0.2},
             "per_region_inference_ms": {"mean_ms": 4.0, "p50_ms": 4.0, "p95_ms": 5.0},
             "per_frame_ms": {"mean_ms": 9.0, "p50_ms": 9.0, "p95_ms": 9.5}}
    path = runner._median_stats([{**run, "rois": times}, {**run, "rois": {**times, "regions": 14}}])
    assert path["rois"]["regions"] == 13 and path["rois"]["per_region_crop_ms"]["p95_ms"] == 0.2
    assert "rois" not in runner._median_stats([run])  # no --classify: no region figures
    path.update(frames=8, runs_frames=[8, 8], pipeline_efficiency=None)
    result = {"machine": {"cpu": "x", "cores": 2}, "input": {"codec": "h264", "width": 64, "height": 64, "frames": 10},
              "settings": {"frames": 8, "warmup": 2, "repeat": 2}, "paths": {"software": path}, "unavailable": {},
              "limits": {"decode_only_fps": 5.0, "decode_only_cpu_ms_per_frame": 1.0, "inference_only_fps": 5.0,
                         "decode_threads": 1}}
    line = ("regions (--classify): 13 in the measured frames, crop 0.100 ms/region (p95 0.200), "
            "inference 4.00 ms/region, 9.00 ms per frame with regions, 80 regions/s")
    assert f"software: {line}" in tables.table(result)
    assert f"- `software` {line}" in tables.markdown(result)
