"""The scripts people run: the hardware report (its path runs work here, GPU paths are reported), the
benchmark clips."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_igpu_report_measures_what_runs_and_names_what_does_not(tmp_path, face_model_path):
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "scripts/igpu_report.py", "--frames", "12", "--skip-tests", "--skip-density",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert set(report["doctor"]["paths"]) == {"zero-copy", "copy", "software", "baseline"}
    paths = report["paths"]
    assert set(paths["paths"]) | set(paths["unavailable"]) == {"zero-copy", "copy", "software", "baseline"}
    sw = paths["paths"]["software"]
    assert sw["fps"] > 0 and sw["cpu_ms_per_frame"] > 0 and sw["stages"]["preprocess"]["mean_ms"] > 0
    assert paths["paths"]["baseline"]["agreement_with_software"]["matched_share"] >= 0.9
    for why in paths["unavailable"].values():
        assert why
    assert "please send this file back" in proc.stdout


def test_validate_script_is_executable_and_runs_the_report():
    script = ROOT / "scripts" / "validate-igpu.sh"
    text = script.read_text()
    assert script.stat().st_mode & 0o111
    assert "igpu_report.py" in text and "doctor" in text


def test_bench_clips_script_makes_the_three_documented_clips(tmp_path):
    import av

    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_bench_clips.py"), "--out", str(tmp_path),
                    "--frames", "3"], check=True, capture_output=True, timeout=300)
    for name in ("light.mp4", "static-noise.mp4", "realistic.mp4"):
        with av.open(str(tmp_path / name)) as c:
            s = c.streams.video[0]
            assert (s.codec_context.name, s.width, s.height) == ("h264", 1920, 1080)
            assert sum(1 for _ in c.decode(s)) == 3


def test_resize_timing_script_prints_its_figures():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "measure_resize.py"), "--calls", "3",
                           "--threads", "2"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ms CPU/frame" in proc.stdout and "2 threads at once" in proc.stdout
