"""sinks/files.py: the files a run writes are checked against each other and the inputs, locked, and
written beside their place until the run produced them."""

import os

import pytest

from zerocopy.errors import ZeroCopyError
from zerocopy.sinks.files import Staged, Target, claim, lock_name, temporary, write_text


def test_outputs_naming_the_same_file_are_refused(tmp_path):
    x = tmp_path / "x"
    os.symlink(x, tmp_path / "link")
    for other in (str(x), str(tmp_path / "link"), f"{tmp_path}/./x"):
        with pytest.raises(ZeroCopyError, match="--json writes the same file"), \
                claim([Target("--json", str(x), str(x)), Target("--report", other, other)], []):
            pass


def test_every_written_file_is_checked_against_the_inputs_through_symlinks(tmp_path):
    source = tmp_path / "real.mp4"
    source.write_bytes(b"input")
    os.symlink(source, tmp_path / "out-2.mp4")  # the derived name is the input, through a link
    targets = [Target("--output", str(tmp_path / "out.mp4"), str(tmp_path / f"out-{i}.mp4")) for i in (1, 2)]
    with pytest.raises(ZeroCopyError, match="out-2.mp4, which is an input of this run"), claim(targets, [str(source)]):
        pass
    assert source.read_bytes() == b"input"


def test_a_held_output_is_refused_and_released_after(tmp_path):
    out = tmp_path / "d.jsonl"
    t = [Target("--json", str(out), str(out))]
    with claim(t, []):
        assert lock_name(out).exists()
        with pytest.raises(ZeroCopyError, match="another zerocopy run is writing it"), claim(t, []):
            pass
    assert not lock_name(out).exists()
    with claim(t, []):  # free again
        pass


def test_a_staged_file_replaces_the_old_one_only_when_kept(tmp_path):
    out = tmp_path / "d.jsonl"
    out.write_text("old\n")
    staged = Staged(out)
    with staged.open_text() as f:
        f.write("new\n")
    assert out.read_text() == "old\n" and staged.temp == temporary(out)
    assert staged.temp.name.startswith(f".d.jsonl.zerocopy-{os.getpid()}-") and staged.temp.suffix == ".tmp"
    staged.finish(keep=False)
    assert out.read_text() == "old\n" and not staged.temp.exists()
    write_text(out, "new\n")
    assert out.read_text() == "new\n" and list(tmp_path.iterdir()) == [out]


def test_a_symlinked_output_is_written_through_the_link(tmp_path):
    real = tmp_path / "real.json"
    os.symlink(real, tmp_path / "link.json")
    write_text(tmp_path / "link.json", "{}\n")
    assert (tmp_path / "link.json").is_symlink() and real.read_text() == "{}\n"


def test_a_run_never_truncates_the_temporaries_an_earlier_run_with_the_same_pid_left(tmp_path):
    """In a container every run is PID 1: a killed run's temporaries (its results) must survive the next."""
    from zerocopy.sinks.files import temporary_of

    out = tmp_path / "d.jsonl"
    left = tmp_path / f".d.jsonl.zerocopy-{os.getpid()}-abc123.tmp"
    left.write_text("the killed run's lines\n")
    assert temporary(out) != left and temporary(out).name.startswith(f".d.jsonl.zerocopy-{os.getpid()}-")
    write_text(out, "new\n")
    assert left.read_text() == "the killed run's lines\n" and out.read_text() == "new\n"
    assert temporary_of(out, os.getpid()) == left  # what tests watching another process find


def test_a_whole_file_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path):
    """`--report /dev/full` and a report on a real full disk: `OutputError`, the old file whole, no temporary."""
    from smalldisk import small_disk

    from zerocopy.sinks.files import OutputError, stage_text

    with pytest.raises(OutputError, match="^cannot write --report /dev/full: no space left on device$"):
        stage_text("--report", "/dev/full", "{}\n" * 10_000)
    with small_disk(tmp_path / "small", "16k") as small:
        out = small / "r.json"
        out.write_text("old\n")
        with pytest.raises(OutputError, match=f"^cannot write --report {out}: no space left on device$"):
            write_text(out, "x" * 100_000, "--report")
        assert out.read_text() == "old\n" and os.listdir(small) == ["r.json"]


def test_nothing_can_be_made_in_proc_and_it_is_refused_before_any_work():
    from zerocopy.sinks.files import check_writable

    with pytest.raises(ZeroCopyError, match=r"^cannot write --output /proc/nope.mp4: no such file"):
        check_writable("--output", "/proc/nope.mp4")
    check_writable("--json", "/proc/self/fd/2")  # an open descriptor is there


@pytest.mark.parametrize("dangling", [False, True])
def test_a_planted_symlink_at_the_lock_file_is_refused_and_its_target_untouched(tmp_path, dangling):
    """A link under the lock file's name would make the run write its PID into the file it points at (or make
    one there): refused in one line, whatever it points at."""
    victim = tmp_path / "victim"
    if not dangling:
        victim.write_text("precious\n")
    out = tmp_path / "out.mp4"
    os.symlink(victim, lock_name(out))
    with pytest.raises(ZeroCopyError, match=r"^cannot write --output .*out.mp4: its lock file .* is a symbolic "
                                            r"link \(zerocopy never makes one\): refused; remove it$"), \
            claim([Target("--output", str(out), str(out))], []):
        pass
    assert victim.read_text() == "precious\n" if not dangling else not victim.exists()
    assert lock_name(out).is_symlink()  # left as it was found


def test_a_planted_hard_link_at_the_lock_file_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "out.mp4"
    os.link(victim, lock_name(out))
    with pytest.raises(ZeroCopyError, match="is not a plain file of its own"), \
            claim([Target("--output", str(out), str(out))], []):
        pass
    assert victim.read_text() == "precious\n" and lock_name(out).exists()


@pytest.mark.parametrize("opening", ["open_text", "open_binary", "ffmpeg_name"])
def test_a_temporary_is_made_new_and_never_written_through_a_planted_link(tmp_path, opening):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    staged = Staged(tmp_path / "out.mp4")
    os.symlink(victim, staged.temp)
    with pytest.raises(FileExistsError, match="is already there"):
        getattr(staged, opening)()
    staged.discard()  # removes only what it made: the link stays, as does what it points at
    assert victim.read_text() == "precious\n" and staged.temp.is_symlink()


def test_ffmpeg_writes_the_temporary_made_new_under_its_own_name(tmp_path):
    import av

    staged = Staged(tmp_path / "out.mkv")
    with av.open(staged.ffmpeg_name(), "w", format="matroska") as out:
        stream = out.add_stream("ffv1", rate=1)
        stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        frame = av.VideoFrame(16, 16, "yuv420p")
        out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    assert staged.temp.stat().st_size > 0 and not (tmp_path / "out.mkv").exists()
    staged.finish(keep=True)
    with av.open(str(tmp_path / "out.mkv")) as back:
        assert back.streams.video[0].codec_context.name == "ffv1" and list(tmp_path.iterdir()) == [tmp_path / "out.mkv"]
