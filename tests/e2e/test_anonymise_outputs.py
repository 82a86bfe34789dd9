"""Issue 36, item 3: `anonymise` hides its labels in every picture that leaves the process, whether a picture is
kept or not: the snapshots, their thumbnails and the retained MQTT snapshot (from the API with no kept picture, from
the CLI, from serve with `[http] latest = false` and `true`), serve's latest.jpg; and serve records no clip for
a camera that anonymises (a clip is the camera's own packets). Checked on the pixels: the real face model finds no
face in a snapshot (it finds them without `anonymise`), and a thumbnail's middle is black with `fill`."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from broker import MOSQUITTO, Broker, Subscriber
from conftest import detect_quiet, wait_until
from passes import write_passes_clip
from PIL import Image
from test_serve import Serve

import zerocopy

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def walks(tmp_path_factory, face_model_path) -> Path:
    path = tmp_path_factory.mktemp("anonymise") / "walks.mp4"
    write_passes_clip(path, passes=2, walk_s=2.0, gap_s=2.5, fps=15, seed=2)
    return path


SURE = 0.7  # a face the model is sure of (0.9 and more on these photos; a black box or a coffee cup: 0.5 at most)


def faces_in(jpegs: list[Path]) -> list[int]:
    """How many faces the face model is sure of in each picture."""
    with zerocopy.Detector("face", threshold=SURE) as det:
        return [len(r.detections) for r in det.run([str(p) for p in jpegs])]


def snapshots(folder: Path) -> tuple[list[Path], list[Path]]:
    """(the snapshots, the thumbnails) under `folder`."""
    every = sorted(folder.rglob("*.jpg"))
    return [p for p in every if not p.name.endswith("-thumb.jpg")], [p for p in every if p.name.endswith("-thumb.jpg")]


def black_middle(picture: Image.Image) -> bool:
    grey = np.asarray(picture.convert("L"))
    h, w = grey.shape
    return grey[h // 3: 2 * h // 3, w // 3: 2 * w // 3].mean() < 25


def test_the_apis_snapshots_without_a_kept_picture_hide_the_faces(walks, tmp_path):
    with zerocopy.Detector(model="face", track=True, snapshots=str(tmp_path / "plain")) as det:
        list(det.run(walks))
    plain, _ = snapshots(tmp_path / "plain")
    assert plain and max(faces_in(plain)) >= 1  # the check can fail: the faces are there without anonymise
    with zerocopy.Detector(model="face", anonymise="face", anonymise_style="fill", track=True,
                           snapshots=str(tmp_path / "hidden")) as det:
        assert all(r.image is None for r in det.run(walks))  # no kept picture: the snapshots come from the frames
    shots, thumbs = snapshots(tmp_path / "hidden")
    assert len(shots) == len(plain) and faces_in(shots) == [0] * len(shots)
    assert thumbs and all(black_middle(Image.open(p)) for p in thumbs)


def test_the_clis_snapshots_hide_the_faces(walks, tmp_path):
    # (`fill`: pixelated into 5 blocks across, a face is unrecognisable, but the model may still see a head there)
    assert detect_quiet(walks, "--anonymise", "face", "--anonymise-style", "fill", "--snapshots",
                        tmp_path / "snaps") == 0
    shots, thumbs = snapshots(tmp_path / "snaps")
    assert shots and thumbs and faces_in(shots) == [0] * len(shots)


@pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed (install-system-deps.sh)")
@pytest.mark.parametrize("kept", [False, True], ids=["no-kept-picture", "kept-picture"])
def test_serves_snapshots_mqtt_and_latest_jpg_hide_the_faces_and_it_records_no_clip(walks, tmp_path, kept):
    store = tmp_path / "store"
    with Broker() as broker, Subscriber(broker, "zc/#") as sub:
        serve = Serve(tmp_path, f'[publish]\nurl = "{broker.url("zc")}"\n[http]\nlisten = "127.0.0.1:0"\n'
                                f'latest = {str(kept).lower()}\n[storage]\npath = "{store}"\n'
                                f'[cameras.door]\nurl = "{walks}"\nloop = true\nmodel = "face"\nanonymise = "face"\n'
                                'anonymise_style = "fill"\n')
        try:
            serve.started()
            wait_until(lambda: len(snapshots(store)[0]) >= 2, 90, "two snapshots in the storage folder")
            if kept:
                status, _, jpeg = serve.get("/api/cameras/door/latest.jpg")
                assert status == 200
                (tmp_path / "latest.jpg").write_bytes(jpeg)
        finally:
            serve.terminate()
        with sub._lock:
            mqtt = [payload for topic, payload in sub.raw if topic == "zc/door/face/snapshot"]
    for i, jpeg in enumerate(mqtt):
        (tmp_path / f"mqtt-{i}.jpg").write_bytes(jpeg)
    shots, thumbs = snapshots(store)
    pictures = shots + sorted(tmp_path.glob("mqtt-*.jpg")) + ([tmp_path / "latest.jpg"] if kept else [])
    assert mqtt and faces_in(pictures) == [0] * len(pictures)
    assert all(black_middle(Image.open(io.BytesIO(p.read_bytes()))) for p in thumbs)
    assert not list(store.rglob("*.mp4")), "a camera that anonymises records no clip"


def test_serve_check_refuses_record_with_anonymise_in_one_line(walks, tmp_path):
    config = tmp_path / "serve.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "store"}"\n[cameras.door]\nurl = "{walks}"\nloop = true\n'
                      'model = "face"\nanonymise = "face"\nrecord = true\n')
    proc = subprocess.run([sys.executable, "-m", "zerocopy", "serve", str(config), "--check"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"zerocopy: {config}: [cameras.door] record = true with anonymise: a clip is the camera's own packets, "
        "copied without decoding, so nothing in it could be hidden; set record = false (snapshots and latest.jpg are "
        "hidden)"]
