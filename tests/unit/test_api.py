"""The Python API (zerocopy.api) as a user meets it: results, images, early exit, errors, stop."""

from __future__ import annotations

import threading
from pathlib import Path

import av
import numpy as np
import pytest

import zerocopy
from zerocopy.samples import ClipSpec


def _decoder_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "zerocopy-decode"]


def test_the_public_names_are_what_all_says():
    for name in zerocopy.__all__:
        assert getattr(zerocopy, name) is not None, name
    assert {"Detector", "detect", "FrameResult", "Detections", "InputError", "ModelError",
            "PathUnavailable"} <= set(zerocopy.__all__)
    assert (Path(zerocopy.__file__).parent / "py.typed").exists()


def test_results_come_in_order_after_the_path_is_chosen(clips, face_model_path):
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    with zerocopy.Detector() as det:
        assert det.path is None
        indices = []
        for r in det.run(clip):
            assert det.path == "software" and set(det.refused) == {"zero-copy", "copy"}  # set before any result
            assert isinstance(r, zerocopy.FrameResult) and r.names == ("face",) and r.image is None
            assert r.source == str(clip) and (r.width, r.height) == (640, 360)
            indices.append(r.index)
        assert indices == list(range(len(truth)))
        report = det.report()
        assert report["frames"] == len(truth) and report["path"] == "software"
    with pytest.raises(AttributeError):
        r.index = 3  # frozen


def test_images_are_the_decoded_frames_in_rgb(clips, face_model_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    with av.open(str(clip)) as c:
        expected = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)][:3]
    got = [r.image for r in zerocopy.detect(clip, keep_images=True, max_frames=3)]
    assert len(got) == 3
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == np.uint8 and a.shape == (360, 640, 3) and a.flags.owndata or a.base is not None
        assert np.array_equal(a, b)


@pytest.mark.slow
def test_leaving_the_loop_early_releases_everything(clips, face_model_path):
    clip, _ = clips("h264-long.mp4", ClipSpec(frames=150, width=320, height=180))
    with zerocopy.Detector() as det:
        for r in det.run(clip):
            if r.index == 3:
                assert _decoder_threads()  # the read-ahead is running mid-run
                break
        assert not _decoder_threads()
        assert det.report()["frames"] == 4
        run = det.run(clip)
        next(run)
    # leaving the `with` closed the live run
    assert not _decoder_threads()
    with pytest.raises(StopIteration):
        next(run)


def test_a_failed_input_raises_at_its_place_or_is_skipped(clips, tmp_path, face_model_path):
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    missing = tmp_path / "missing.mp4"
    with zerocopy.Detector() as det:
        seen = []
        with pytest.raises(zerocopy.InputError, match="no such file"):
            for r in det.run([clip, missing, clip]):
                seen.append(r.source)
        assert seen == [str(clip)] * len(truth)
        sources = [r.source for r in det.run([clip, missing, clip], on_error="skip")]
        assert sources == [str(clip)] * (2 * len(truth))
        errors = [i["error"] for i in det.report()["inputs"]]
        assert errors[0] is None and "no such file" in errors[1] and errors[2] is None


def test_bad_options_and_models_fail_before_any_input(tmp_path):
    with pytest.raises(ValueError, match="path must be"):
        zerocopy.Detector(path="gpu")
    with pytest.raises(ValueError, match="threshold"):
        zerocopy.Detector(threshold=2)
    with pytest.raises(ValueError, match="nireq"):
        zerocopy.Detector(nireq=0)
    with pytest.raises(zerocopy.ModelError):
        zerocopy.Detector(model=str(tmp_path / "none.xml"))


def test_stop_from_another_thread_ends_the_run_with_what_is_in_flight(clips, face_model_path):
    # 60 small frames: a stop not heard gives them all (8 came here: the 6 before the stop, 2 in flight)
    clip, _ = clips("stop-60.mp4", ClipSpec(frames=60, width=160, height=90))
    with zerocopy.Detector() as det:
        indices = []
        for r in det.run(clip):
            indices.append(r.index)
            if r.index == 5:
                threading.Thread(target=det.stop).start()
        assert 6 <= len(indices) < 60 and indices == list(range(len(indices)))
        assert det.report()["interrupted"] is True


def test_a_stop_before_the_first_result_ends_the_run(clips, face_model_path):
    """Issue 16 item 11: the run used to clear the stop when it started, so this gave every frame."""
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    with zerocopy.Detector("face") as det:
        gen = det.run(clip)
        det.stop()
        assert sum(1 for _ in gen) == 0
        assert det.result().interrupted
        assert sum(1 for _ in det.run(clip, max_frames=3)) == 3  # the next run is not stopped by it


def test_close_from_another_thread_ends_a_run_inside_next_without_raising(clips, face_model_path):
    """Issue 16 item 12: close() while the consuming thread is inside next() raised "generator already
    executing" in the closing thread and left the run open."""
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    det = zerocopy.Detector("face", realtime=True)  # paced: the consumer waits inside next()
    inside, errors, got = threading.Event(), [], []

    def consume():
        try:
            for r in det.run(clip):
                got.append(r.index)
                inside.set()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    t = threading.Thread(target=consume)
    t.start()
    assert inside.wait(30)
    det.close()  # must not raise, from this thread, while the consumer is inside next()
    t.join(30)
    assert not t.is_alive() and errors == [] and 0 < len(got) < len(truth)
    assert got == list(range(len(got)))
    assert not _decoder_threads()


def _bad_run_arguments():
    yield {"sources": 123}, "sources"
    yield {"sources": None}, "sources"
    yield {"sources": b"clip.mp4"}, "sources"
    yield {"sources": []}, "sources"
    yield {"sources": ["ok.mp4", 5]}, "sources"
    for value in (0, -1, 2.5, "5", True):
        yield {"max_frames": value}, "max_frames"
    yield {"on_error": "ignore"}, "on_error"
    yield {"parallel": "yes"}, "parallel"


@pytest.mark.parametrize(("kwargs", "name"), list(_bad_run_arguments()),
                         ids=[f"{k}" for k, _ in _bad_run_arguments()])
def test_bad_run_arguments_name_the_argument_before_anything_runs(kwargs, name, face_model_path):
    """Issue 16 item 13: each of these gave a TypeError from deep inside, an odd InputError or a wrong
    number of frames; each is refused when `run()` is called, naming the argument."""
    kwargs = {"sources": "clip.mp4", **kwargs}
    with zerocopy.Detector("face") as det:
        with pytest.raises(zerocopy.ConfigError) as e:
            det.run(kwargs.pop("sources"), **kwargs)
        assert e.value.setting == name and str(e.value).startswith(f"{name} must be ")


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"model": 123}, "model"), ({"threshold": "0.5"}, "threshold"), ({"device": None}, "device"),
    ({"nireq": True}, "nireq"), ({"reconnect_timeout": True}, "reconnect_timeout"), ({"batch": 0}, "batch"),
    ({"path": "gpu"}, "path"), ({"colour": "red"}, "colour"), ({"decoder": "x"}, "postprocess"),
])
def test_bad_detector_arguments_name_the_argument(kwargs, name):
    with pytest.raises(zerocopy.ConfigError) as e:
        zerocopy.Detector(**kwargs)
    assert e.value.setting == name


def test_a_parallel_run_finishes_the_good_inputs_then_raises_the_first_error(clips, tmp_path, face_model_path):
    """Issue 16 item 14: with on_error="raise" a failing input stopped a parallel run before any frame;
    the rule now: the others finish, then the first error is raised. `FrameResult.input` tells apart
    a source given twice."""
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    per_input: dict[int, list[int]] = {}
    with zerocopy.Detector("face") as det:
        gen = det.run([clip, str(tmp_path / "missing.mp4"), clip], parallel=True)
        with pytest.raises(zerocopy.InputError, match="missing.mp4: no such file"):
            for r in gen:
                per_input.setdefault(r.input, []).append(r.index)
    assert per_input == {0: list(range(len(truth))), 2: list(range(len(truth)))}
