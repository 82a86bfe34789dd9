"""zerocopy.sinks.map_videos: the maps of `zerocopy process` as videos (blended, grayscale) and `.npy` files,
written without overwriting anything."""

import os

import av
import numpy as np
import pytest

from zerocopy.detections import Detections
from zerocopy.errors import ZeroCopyError
from zerocopy.frames import Geometry, PreparedFrame
from zerocopy.sinks.map_videos import MapVideoSink, NpySink, blend, check_npy_folder, grayscale

W, H = 64, 48


def frame(index: int, value: float, picture: bool = True) -> PreparedFrame:
    rgb = np.full((H, W, 3), 100, np.uint8)
    out = np.zeros((H, W), np.float32)
    out[:, : W // 2] = value  # the left half mapped
    return PreparedFrame(index=index, pts=index / 25, width=W, height=H, geometry=Geometry.fit(W, H, W, H, "stretch"),
                         inputs={}, picture=av.VideoFrame.from_ndarray(rgb, format="rgb24") if picture else None,
                         output=out)


def decoded(path) -> list[np.ndarray]:
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def test_blend_and_grayscale_endpoints():
    rgb = np.full((2, 2, 3), 100, np.uint8)
    assert (blend(rgb, np.zeros((2, 2))) == 100).all()  # no map: the picture as it was
    tinted = blend(rgb, np.ones((2, 2)))
    assert tinted[0, 0, 0] > 150 and tinted[0, 0, 2] < 100  # reddened where the map is 1
    assert grayscale(np.array([[0.0, 0.5, 1.0, 2.0]])).tolist() == [[0, 128, 255, 255]]


@pytest.mark.parametrize("mode", ["blend", "mask"])
def test_map_videos_are_readable_and_show_the_map(tmp_path, mode):
    target = tmp_path / f"{mode}.mp4"
    sink = MapVideoSink(str(target), ["person"], mode=mode)
    sink.begin("clip.mp4", 25.0)
    for i in range(6):
        sink.write(frame(i, 1.0, picture=mode == "blend"), Detections.empty())
    sink.close()
    frames = decoded(target)
    assert len(frames) == 6 and frames[0].shape == (H, W, 3)
    left, right = frames[3][:, 4 : W // 2 - 4].mean(axis=(0, 1)), frames[3][:, W // 2 + 4 : -4].mean(axis=(0, 1))
    if mode == "mask":
        assert left.min() > 230 and right.max() < 25  # white where the map is 1, black elsewhere
    else:
        assert left[0] > right[0] + 40 and abs(right - 100).max() < 12  # tinted left, untouched right
    assert sink.outputs == [("clip.mp4", str(target))]
    assert sorted(os.listdir(tmp_path)) == [f"{mode}.mp4"]  # renamed from its temporary


def test_npy_files_load_back_and_are_named_by_input_and_frame(tmp_path):
    folder = tmp_path / "maps"
    sink = NpySink(str(folder), inputs=2)
    for i in range(3):
        sink.write(frame(i, 0.75), Detections.empty(), input=1)
    sink.close()
    assert sorted(os.listdir(folder)) == ["2-000000.npy", "2-000001.npy", "2-000002.npy"]  # no temporary left
    loaded = np.load(folder / "2-000001.npy")
    assert loaded.dtype == np.float32 and loaded.shape == (H, W) and loaded[0, 0] == 0.75 and loaded[0, -1] == 0


def test_a_run_that_wrote_no_map_leaves_no_folder_behind(tmp_path):
    sink = NpySink(str(tmp_path / "maps"))
    sink.close()
    assert os.listdir(tmp_path) == []


def test_a_folder_that_holds_files_is_refused_before_any_work(tmp_path):
    folder = tmp_path / "maps"
    folder.mkdir()
    check_npy_folder(str(folder))  # empty: fine
    (folder / "000000.npy").write_bytes(b"someone's result")
    with pytest.raises(ZeroCopyError, match="holds files already"):
        check_npy_folder(str(folder))
    with pytest.raises(ZeroCopyError, match="it is a file"):
        check_npy_folder(str(folder / "000000.npy"))
    with pytest.raises(ZeroCopyError, match="no such directory"):
        check_npy_folder(str(tmp_path / "missing" / "maps"))
    assert (folder / "000000.npy").read_bytes() == b"someone's result"
