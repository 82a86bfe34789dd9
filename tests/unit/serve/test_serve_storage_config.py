"""zerocopy.serve.storage_config: `[storage]` (path, max_gb, max_days) checked like the other tables, the default
folder (systemd's StateDirectory=, XDG, the home), and a folder that cannot be written a line of `--check`."""

import os
from pathlib import Path

import pytest

from zerocopy.cli import main
from zerocopy.serve.config import ServeConfigError, load_config, parse_config
from zerocopy.serve.storage_config import DEFAULT_MAX_DAYS, DEFAULT_MAX_GB, default_folder

CAMERA = '[cameras.front]\nurl = "rtsp://front.lan/1"\n'


def config(tmp_path: Path, storage: str, env: dict | None = None):
    path = tmp_path / "serve.toml"
    path.write_text(storage + "\n" + CAMERA)
    return load_config(path, env={} if env is None else env)


def problems(tmp_path: Path, storage: str) -> list[str]:
    with pytest.raises(ServeConfigError) as e:
        config(tmp_path, storage)
    return e.value.problems


def test_the_keys_and_a_path_relative_to_the_configs_folder(tmp_path):
    found = config(tmp_path, '[storage]\npath = "events"\nmax_gb = 2.5\nmax_days = 3').storage
    assert (found.path, found.max_gb, found.max_days, found.max_bytes) == (str(tmp_path / "events"), 2.5, 3.0,
                                                                          2_500_000_000)
    assert not (tmp_path / "events").exists()  # made at start, not by --check


def test_the_default_folder(tmp_path):
    assert default_folder({"STATE_DIRECTORY": "/var/lib/zerocopy:/var/lib/other"}) == Path("/var/lib/zerocopy")
    assert default_folder({"XDG_DATA_HOME": "/data"}) == Path("/data/zerocopy")
    assert default_folder({"HOME": "/home/cam"}) == Path("/home/cam/.local/share/zerocopy")
    found = config(tmp_path, "", env={"XDG_DATA_HOME": str(tmp_path / "data")}).storage
    assert (found.path, found.max_gb, found.max_days) == (str(tmp_path / "data" / "zerocopy"), DEFAULT_MAX_GB,
                                                          DEFAULT_MAX_DAYS)
    assert parse_config({"cameras": {"a": {"url": "rtsp://a.lan/1"}}}, env={"STATE_DIRECTORY": str(tmp_path)},
                        base=tmp_path).storage.path == str(tmp_path)


def test_bad_values_are_one_line_each(tmp_path):
    assert problems(tmp_path, '[storage]\npath = ""\nmax_gb = 0\nmax_days = "ten"\nmax_bg = 1') == [
        "[storage] unknown key 'max_bg' (did you mean max_gb?); [storage] takes path, max_gb, max_days",
        '[storage] path must be a folder\'s path (e.g. path = "/var/lib/zerocopy")',
        "[storage] max_gb must be a number of GB (10^9 bytes) of files > 0, not 0",
        "[storage] max_days must be a number of days > 0, not 'ten'"]
    assert problems(tmp_path, "[storage]\nmax_days = true\nmax_gb = nan") == [
        "[storage] max_gb must be a number of GB (10^9 bytes) of files > 0, not nan",
        "[storage] max_days must be a number of days > 0, not True"]
    assert problems(tmp_path, 'storage = "here"') == ["storage must be a table ([storage]), not a str"]


def test_a_folder_that_cannot_be_written_is_a_problem_of_check(tmp_path, capsys):
    (tmp_path / "plain").write_text("a file")
    assert problems(tmp_path, '[storage]\npath = "plain/events"') == [
        f"[storage] path: events cannot be kept: {tmp_path / 'plain'} is not a folder"]
    path = tmp_path / "serve.toml"
    assert main(["serve", str(path), "--check"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"zerocopy: {path}: [storage] path: events cannot be kept: {tmp_path / 'plain'} is not a folder"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_folder_without_write_permission_is_said(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    try:
        assert problems(tmp_path, '[storage]\npath = "locked/events"') == [
            f"[storage] path: events cannot be kept: {locked} is not writable by this user (where "
            f"{locked / 'events'} would be made)"]
    finally:
        locked.chmod(0o755)


def test_a_default_folder_that_cannot_be_written_says_how_to_set_one(tmp_path):
    (tmp_path / "plain").write_text("a file")
    with pytest.raises(ServeConfigError) as e:
        config(tmp_path, "", env={"XDG_DATA_HOME": str(tmp_path / "plain")})
    assert e.value.problems == [f"[storage] path: events cannot be kept: {tmp_path / 'plain'} is not a folder (the "
                                "default; set [storage] path)"]


def test_check_says_once_that_the_default_cap_holds_hours_of_recording(tmp_path, capsys):
    path = tmp_path / "serve.toml"
    cameras = ('[cameras.front]\nurl = "rtsp://front.lan/1"\nrecord = "continuous"\n'
               '[cameras.back]\nurl = "rtsp://back.lan/1"\nrecord = "motion"\n'
               '[cameras.side]\nurl = "rtsp://side.lan/1"\n')
    path.write_text(f'[storage]\npath = "events"\n{cameras}')
    assert main(["serve", str(path), "--check"]) == 0
    assert capsys.readouterr().err.splitlines()[1:] == [
        "zerocopy: [storage] max_gb is the default 10 GB, shared by the events' files and the recordings of front, "
        "back: at 4 Mbit/s it holds about 5.6 hours of one camera (the oldest removed first); raise max_gb to keep "
        "more"]
    path.write_text(f'[storage]\npath = "events"\nmax_gb = 500\n{cameras}')  # raised: nothing to say
    assert main(["serve", str(path), "--check"]) == 0
    assert len(capsys.readouterr().err.splitlines()) == 1
