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
    clip, _ = clips("h264-long.mp4", ClipSpec(frames=150, width=320, height=180))
    with zerocopy.Detector() as det:
        indices = []
        for r in det.run(clip):
            indices.append(r.index)
            if r.index == 5:
                threading.Thread(target=det.stop).start()
        assert 6 <= len(indices) < 150 and indices == list(range(len(indices)))
        assert det.report()["interrupted"] is True
