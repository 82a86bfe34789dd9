"""`make setup-gpu`'s own FFmpeg (scripts/ffmpeg-build.sh), without building it: which FFmpeg it chooses, the
flags and the prefix they name, the cache's stamp, the pinned archive's check, an interrupted run, and the
scripts CI runs. The build itself runs in CI (`make test-gpu-host`, tests/native there)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ffmpeg-build.sh"
VERSIONS = {"libva": "1.17.0", "libva-drm": "1.17.0", "libdrm": "2.4.114", "zlib": "1.2.13", "gnutls": "3.7.9",
            "x264": "0.164.3095", "dav1d": "1.0.0", "x265": "3.5", "vpx": "1.12.0", "SvtAv1Enc": "1.4.1",
            "srt": "1.5.1"}  # Debian 12's


def pc_dir(root: Path, versions: dict[str, str]) -> Path:
    """pkg-config files naming these modules at these versions (and nothing else)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, version in versions.items():
        (root / f"{name}.pc").write_text(f"Name: {name}\nDescription: {name}\nVersion: {version}\nLibs: -l{name}\n")
    return root


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def fake(tmp_path):
    """An environment whose pkg-config sees only Debian 12's versions of the libraries, and a cache of its own."""
    if shutil.which("pkg-config") is None:
        pytest.skip(reason="pkg-config is not installed")
    pcs = pc_dir(tmp_path / "pc", VERSIONS)
    return {"PKG_CONFIG_LIBDIR": str(pcs), "PKG_CONFIG_PATH": "", "ZEROCOPY_FFMPEG_CACHE": str(tmp_path / "cache"),
            "ZEROCOPY_FFMPEG": "auto"}


@pytest.mark.parametrize(("major", "mode", "want"), [
    ("5", "auto", "build"), ("6", "auto", "build"), ("7", "auto", "build"),  # Debian 12, Ubuntu 24.04, Debian 13
    ("8", "auto", "system"), ("9", "auto", "system"),  # Debian testing: its own FFmpeg, with VA-API
    ("", "auto", "build"),  # neither pkg-config nor apt knows an FFmpeg
    ("5", "system", "system"), ("9", "build", "build"),  # ZEROCOPY_FFMPEG decides
])
def test_setup_gpu_builds_ffmpeg_only_where_the_systems_is_older_than_8(major, mode, want):
    proc = run("decide", major, env={"ZEROCOPY_FFMPEG": mode})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == want, proc.stdout
    if want == "build":
        assert "FFmpeg 9.0.2 built for zerocopy" in proc.stdout
    bad = run("decide", "5", env={"ZEROCOPY_FFMPEG": "sometimes"})
    assert bad.returncode == 2 and "must be auto, system or build" in bad.stderr


def test_this_machine_is_decided_from_its_own_ffmpeg():
    """Without an argument: the system's FFmpeg, from pkg-config or apt (Debian 12 here: 5.1, so "build")."""
    proc = run("decide", env={"ZEROCOPY_FFMPEG": "auto"})
    assert proc.returncode == 0 and proc.stdout.split()[0] in ("build", "system"), proc.stdout + proc.stderr
    found = re.search(r"the system's FFmpeg (\d+)", proc.stdout)
    if found:
        assert (int(found[1]) >= 8) == (proc.stdout.split()[0] == "system"), proc.stdout


def test_the_flags_are_what_zerocopy_uses_and_the_prefix_is_named_by_them(fake, tmp_path):
    proc = run("flags", env=fake)
    assert proc.returncode == 0, proc.stderr
    flags = proc.stdout.split("\n")[:-1]
    for flag in ("--enable-shared", "--disable-static", "--disable-programs", "--disable-doc",
                 "--disable-autodetect", "--enable-pthreads", "--enable-gpl", "--enable-vaapi", "--enable-libdrm",
                 "--enable-zlib", "--enable-gnutls", "--enable-libx264", "--enable-libdav1d", "--enable-libx265",
                 "--enable-libvpx", "--enable-libsvtav1", "--enable-libsrt"):
        assert flag in flags, flag
    prefix = next(f for f in flags if f.startswith("--prefix="))[len("--prefix="):]
    assert re.fullmatch(re.escape(fake["ZEROCOPY_FFMPEG_CACHE"]) + r"/ffmpeg-9\.0\.2-[0-9a-f]{12}", prefix), prefix
    assert f"--extra-ldflags=-Wl,-rpath,{prefix}/lib" in flags  # the libraries find each other without LD_LIBRARY_PATH
    assert run("prefix", env=fake).stdout.strip() == prefix

    # Ubuntu 22.04's dav1d 0.9.2 is older than FFmpeg 9 takes, and no x265 there: both left out, another prefix
    older = {**VERSIONS, "dav1d": "0.9.2"}
    del older["x265"]
    env = {**fake, "PKG_CONFIG_LIBDIR": str(pc_dir(tmp_path / "pc-older", older))}
    other = run("flags", env=env).stdout.split("\n")
    assert "--enable-libdav1d" not in other and "--enable-libx265" not in other and "--enable-libvpx" in other
    assert run("prefix", env=env).stdout.strip() != prefix
    # an upgraded library (a new soname, maybe) builds a new prefix too; the same inputs always the same one
    newer = {**fake, "PKG_CONFIG_LIBDIR": str(pc_dir(tmp_path / "pc-newer", {**VERSIONS, "x264": "0.165.3222"}))}
    assert run("prefix", env=newer).stdout.strip() != prefix
    assert run("prefix", env=fake).stdout.strip() == prefix


def test_packages_names_the_dev_packages_and_what_is_optional():
    proc = run("packages")
    assert proc.returncode == 0, proc.stderr
    required, _, optional = proc.stdout.strip().partition(" optional: ")
    assert set(required.split()) >= {"build-essential", "pkg-config", "nasm", "libva-dev", "libdrm-dev",
                                     "libx264-dev", "libgnutls28-dev", "zlib1g-dev"}
    assert set(optional.split()) <= {"libdav1d-dev", "libx265-dev", "libvpx-dev", "libsvtav1enc-dev",
                                     "libsrt-gnutls-dev"}


def _stamped_prefix(env: dict[str, str], stamp: str | None) -> Path:
    prefix = Path(run("prefix", env=env).stdout.strip())
    (prefix / "lib" / "pkgconfig").mkdir(parents=True)
    (prefix / "lib" / "libavutil.so.61").write_bytes(b"")
    (prefix / "lib" / "pkgconfig" / "libavutil.pc").write_text("Name: libavutil\n")
    if stamp is not None:
        (prefix / ".zerocopy-ffmpeg").write_text(f"{stamp}\nbuilt 2026-11-25T13:19Z in 5m13s on 2 cores\n")
    return prefix


def test_a_finished_build_is_used_as_it_is_and_never_rebuilt(fake):
    fingerprint = run("fingerprint", env=fake).stdout
    digest = hashlib.sha256(fingerprint.encode()).hexdigest()
    prefix = _stamped_prefix(fake, digest)
    assert prefix.name == f"ffmpeg-9.0.2-{digest[:12]}"
    assert run("prefix", env=fake).returncode == 0
    started = time.monotonic()
    proc = run("build", env=fake)  # needs no compiler, no network: it is there
    assert proc.returncode == 0 and proc.stdout == f"{prefix}\n", proc.stderr
    assert "is already built in" in proc.stderr and "5m13s" in proc.stderr
    assert time.monotonic() - started < 10
    (prefix / ".zerocopy-ffmpeg").write_text("0" * 64 + "\n")  # a stamp of another recipe: not this build
    assert run("prefix", env=fake).returncode == 1


def test_an_unfinished_prefix_and_a_bad_archive_are_thrown_away(fake, tmp_path):
    """A prefix without its stamp (a run stopped between install and stamp) and a half-built folder are
    removed; a cached archive whose sha256 is not the pin is removed, a download with another sha256 refused,
    and nothing is left marked done."""
    prefix = _stamped_prefix(fake, None)
    build_dir = Path(f"{prefix}.build")
    (build_dir / "ffmpeg-9.0.2").mkdir(parents=True)
    src = Path(fake["ZEROCOPY_FFMPEG_CACHE"]) / "src"
    src.mkdir(parents=True)
    (src / "ffmpeg-9.0.2.tar.xz").write_bytes(b"not ffmpeg")
    (src / "ffmpeg-9.0.2.tar.xz.part.123").write_bytes(b"half")
    wrong = tmp_path / "mirror.tar.xz"
    wrong.write_bytes(b"also not ffmpeg")
    proc = run("build", env={**fake, "ZEROCOPY_FFMPEG_URL": f"file://{wrong}"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = proc.stderr
    assert f"removing {prefix}: an earlier build did not finish" in err
    assert "its sha256 is not the pinned 8c3850283eb25fa026482078a04051e0be17347b09ef81a0849bec15a96e002e" in err
    assert f"refused: its sha256 is {hashlib.sha256(b'also not ffmpeg').hexdigest()}" in err
    assert "FAILED: no copy of ffmpeg-9.0.2.tar.xz with sha256 8c38" in err
    assert not prefix.exists() and not build_dir.exists() and list(src.iterdir()) == []
    assert proc.stdout == ""


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_states(pgid: int) -> dict:
    """Each process of group `pgid`: its command and the SigBlk/SigIgn masks of /proc (what SIGINT will meet)."""
    states = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if os.getpgid(int(status.parent.name)) == pgid:
                cmd = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]
                states[cmd] = {k: fields[k].strip() for k in ("SigBlk", "SigIgn")}
        except (OSError, ValueError):
            continue
    return states


def test_ctrl_c_while_fetching_leaves_nothing_marked_done(fake, tmp_path):
    """SIGINT during the download (from a FIFO that never ends): exit 130, no prefix, no build folder; the
    next run removes the partial download."""
    fifo = tmp_path / "slow.tar.xz"
    os.mkfifo(fifo)
    env = {**os.environ, **fake, "ZEROCOPY_FFMPEG_URL": f"file://{fifo}"}
    # SIGINT as a terminal's Ctrl-C meets it: a suite started in the background (`make test &`) passes it on ignored,
    # and a shell cannot trap a signal ignored at its start
    proc = subprocess.Popen(["bash", str(SCRIPT), "build"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_default_sigint)
    writer = None
    try:
        deadline = time.monotonic() + 30
        while writer is None:  # opens once the download reads the FIFO
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "the download never started"
                time.sleep(0.05)
        os.write(writer, b"partial")
        time.sleep(0.5)
        states = _signal_states(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"no exit 30 s after SIGINT; before it, the group's signal state: {states}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        if writer is not None:
            os.close(writer)
    assert proc.returncode == 130, err
    prefix = Path(run("prefix", env=fake).stdout.strip())
    assert not prefix.exists() and not Path(f"{prefix}.build").exists()
    assert run("prefix", env=fake).returncode == 1
    bad = tmp_path / "bad.tar.xz"
    bad.write_bytes(b"x")
    run("build", env={**fake, "ZEROCOPY_FFMPEG_URL": f"file://{bad}"})
    assert not list((Path(fake["ZEROCOPY_FFMPEG_CACHE"]) / "src").glob("*.part.*"))


def test_the_pins_and_the_docs_agree_and_the_scripts_pass_shellcheck():
    text = SCRIPT.read_text()
    version = re.search(r"^FFMPEG_VERSION=(\S+)$", text, re.M)[1]
    sha = re.search(r"^FFMPEG_SHA256=([0-9a-f]{64})$", text, re.M)[1]
    assert int(version.split(".")[0]) >= 8
    doc = (ROOT / "docs" / "hardware.md").read_text()
    assert sha in doc and f"ffmpeg-{version}.tar.xz" in doc
    assert f"pool/main/f/ffmpeg/ffmpeg_{version}.orig.tar.xz" in doc
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test-gpu-host" in ci and "make test-va-stack" in ci
    names = ("scripts/ffmpeg-build.sh", "scripts/setup-gpu.sh", "scripts/gpu-host-test.sh", ".ci/run")
    scripts = [ROOT / n for n in names]
    for script in scripts:
        subprocess.run(["bash", "-n", str(script)], check=True)
        assert os.access(script, os.X_OK), script
    if shutil.which("shellcheck"):
        proc = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout


def test_setup_gpu_asked_for_an_old_system_ffmpeg_says_what_to_do_and_installs_nothing(tmp_path):
    """ZEROCOPY_FFMPEG=system on a system whose FFmpeg is older than 8 (Debian 12 here): it stops before apt-get,
    saying that without the setting it builds FFmpeg itself."""
    decided = run("decide", env={"ZEROCOPY_FFMPEG": "auto"}).stdout
    if not decided.startswith("build the system's FFmpeg"):
        pytest.skip(reason=f"this system's FFmpeg is >= 8 or unknown: {decided.strip()}")
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "setup-gpu.sh")], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={**os.environ, "ZEROCOPY_FFMPEG": "system", "SUDO_USER": "",
                                                          "VENV": str(tmp_path / "venv")})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "==> FFmpeg: ZEROCOPY_FFMPEG=system" in proc.stdout
    assert "the VA-API paths need FFmpeg >= 8" in proc.stderr
    assert "make setup-gpu builds the\nFFmpeg zerocopy needs into your cache" in proc.stderr
    assert "installing" not in proc.stdout and not (tmp_path / "venv").exists()
