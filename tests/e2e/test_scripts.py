"""The scripts people run: the hardware report (its path runs work here, GPU paths are reported), the
benchmark clips, the soak of `zerocopy serve`."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from broker import MOSQUITTO

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
    tiles = report["tiles"]
    assert set(tiles["paths"]) | set(tiles["unavailable"]) == {"zero-copy", "copy", "software", "baseline"}
    assert tiles["paths"]["software"]["person_found"] >= 0.9 and tiles["paths"]["software"]["tiles"]["regions"] > 0
    assert tiles["paths"]["baseline"]["agreement_with_software"]["matched_share"] >= 0.9
    assert "please send this file back" in proc.stdout and "tiles:" in proc.stdout


def test_the_input_sensitivity_script_prints_every_way_and_how_resamplers_agree():
    proc = subprocess.run([sys.executable, "scripts/measure_input_sensitivity.py"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("frame ")]
    assert len(rows) == 4 and all(row.count("|") == 6 and "NV12 area: 0.7" in row for row in rows), proc.stdout
    pairs = [line for line in proc.stdout.splitlines() if " vs " in line]
    assert len(pairs) == 3 * 6, proc.stdout  # three photo clips, every pair of four resamplers
    steady = [line for line in pairs if not line.startswith("chelsea")]
    assert all("matched 1.000 of 12, extra 0" in line for line in steady), proc.stdout


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


def _pins(path: Path) -> dict[str, tuple[str, list[str]]]:
    """A hashed requirements file → {name: (version, [sha256, ...])}; every line must be `name==version`
    with at least one sha256."""
    text = re.sub(r"\\\n", " ", "\n".join(line.split("#")[0] for line in path.read_text().splitlines()))
    pins = {}
    for line in filter(None, map(str.strip, text.splitlines())):
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)((?:\s+--hash=sha256:[0-9a-f]{64})+)", line)
        assert m, f"{path.name}: not a pinned, hashed requirement: {line!r}"
        pins[m[1].lower()] = (m[2], re.findall(r"sha256:([0-9a-f]{64})", m[3]))
    return pins


def test_setup_gpu_pins_the_pyav_source_and_its_build_tools_by_sha256():
    """Issue 16, item 4: the PyAV sdist and the tools that build it are pinned by sha256 and the
    script makes pip check them; a cached wheel is checked; only apt runs as root; Ctrl-C cleans up."""
    from packaging.specifiers import SpecifierSet

    source = _pins(ROOT / "scripts" / "pyav-source.txt")
    tools = _pins(ROOT / "scripts" / "pyav-build-tools.txt")
    assert set(source) == {"av"}
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert source["av"][0] in SpecifierSet(re.search(r'"av([^"]+)"', pyproject)[1])
    # PyAV 18.1.0's pyproject.toml: requires = ["setuptools>=77.0", "cython>=3.1.0,<4"]
    assert set(tools) == {"setuptools", "cython"}
    assert tools["setuptools"][0] in SpecifierSet(">=77.0") and tools["cython"][0] in SpecifierSet(">=3.1.0,<4")
    script = (ROOT / "scripts" / "setup-gpu.sh").read_text()
    assert "AV_PINS=scripts/pyav-source.txt TOOL_PINS=scripts/pyav-build-tools.txt" in script
    install = re.search(r'pip install --no-deps[^\n]*\n[^\n]*-r "\$TOOL_PINS"', script)
    build = re.search(r'pip wheel --no-build-isolation[^\n]*\n[^\n]*-r "\$AV_PINS"', script)
    assert install and "--require-hashes" in install[0] and "--only-binary :all:" in install[0]
    assert build and "--require-hashes" in build[0]
    assert '"av==$AV_VERSION"' not in script  # no build by version alone
    assert 'sha256sum --quiet --check "$(basename "$wheel").sha256"' in script
    assert 'exec sudo -u "$SUDO_USER"' in script and "trap cleanup EXIT" in script
    subprocess.run(["bash", "-n", str(ROOT / "scripts" / "setup-gpu.sh")], check=True)
    if shutil.which("shellcheck"):
        proc = subprocess.run(["shellcheck", str(ROOT / "scripts" / "setup-gpu.sh")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout


def test_setup_gpu_pins_match_the_files_the_package_index_serves(tmp_path):
    """The script's two pip steps against the real index: the pinned tools install with
    --require-hashes, the pinned sdist passes pip's hash check (its build then needs FFmpeg >= 8's
    headers, which this machine may lack), and a sdist hash one digit off is refused."""
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    py = str(env_dir / "bin" / "python")
    pip = [py, "-m", "pip", "--disable-pip-version-check"]
    proc = subprocess.run(pip + ["install", "--no-deps", "--only-binary", ":all:", "--require-hashes", "--no-cache-dir",
                                 "-r", str(ROOT / "scripts" / "pyav-build-tools.txt")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    tools = _pins(ROOT / "scripts" / "pyav-build-tools.txt")
    got = subprocess.run([py, "-c", "import Cython, setuptools; print(Cython.__version__, setuptools.__version__)"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert got == [tools["cython"][0], tools["setuptools"][0]]

    def fetch_source(pins: Path) -> subprocess.CompletedProcess:
        return subprocess.run(pip + ["wheel", "--no-build-isolation", "--no-binary", "av", "--no-deps",
                                     "--require-hashes", "--no-cache-dir", "-w", str(tmp_path / "out"),
                                     "-r", str(pins)], capture_output=True, text=True, timeout=600)

    good = fetch_source(ROOT / "scripts" / "pyav-source.txt")
    assert "DO NOT MATCH THE HASHES" not in good.stderr
    assert good.returncode == 0 or "Preparing metadata" in good.stdout, good.stderr
    text = (ROOT / "scripts" / "pyav-source.txt").read_text()
    digest = re.search(r"sha256:([0-9a-f]{64})", text)[1]
    off = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    (tmp_path / "tampered.txt").write_text(text.replace(digest, off))
    bad = fetch_source(tmp_path / "tampered.txt")
    assert bad.returncode != 0 and "DO NOT MATCH THE HASHES" in bad.stderr


def test_the_demo_runs_every_step(tmp_path):
    """`make demo` (scripts/demo.py), the README's first command: every step ran and said what it found."""
    proc = subprocess.run([sys.executable, "scripts/demo.py", "--out", str(tmp_path), "--frames", "50"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for line in ("faces found", "objects     ", "tiles       ", "face-mesh   ", "events      "):
        assert line in proc.stdout, proc.stdout
    events = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert events and {e["type"] for e in events} >= {"new", "end"}


@pytest.mark.serial  # its targets (fds and threads flat, recovery within 10 s) are serve's alone, not the machine's
@pytest.mark.soak  # two minutes that mostly wait: run beside the other serial tests (scripts/test-serial.sh)
@pytest.mark.timeout(600)
@pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed (scripts/install-system-deps.sh installs it)")
def test_the_serve_soak_meets_every_target_in_two_minutes(face_model_path):
    """Issue 26's soak, the 2-minute version (scripts/soak_serve.py --minutes 2): 4 cameras, one whose stream ends
    every 10 s, one reset every 30 s, the broker restarted every 40 s, 20 HTTP clients, 200 idle sockets; every
    target met (RSS, fds, threads flat after the warm-up, no crash, every event accounted for and received)."""
    # serve stops within 2 s (0.2-0.5 s measured); 6 s, as tests/e2e/test_serve.py allows, leaves room for a loaded
    # machine while a stop that waited for a reconnection back-off (up to 8 s) or never came would exceed it
    proc = subprocess.run([sys.executable, "scripts/soak_serve.py", "--minutes", "2", "--stop-within", "6"], cwd=ROOT,
                          capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0 and "all targets met" in proc.stdout, proc.stdout + proc.stderr


def test_the_region_queue_script_prints_its_three_runs_and_the_ratio():
    proc = subprocess.run([sys.executable, "scripts/measure_region_queue.py", "--frames", "12", "--faces", "2",
                           "--repeat", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"B  detection \+ face-mesh \(own queue\) +\d+\.\d\d s +\(24 regions\)", proc.stdout), proc.stdout
    assert re.search(r"B / \(A \+ C\) = \d+\.\d\d", proc.stdout), proc.stdout
