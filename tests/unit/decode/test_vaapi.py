"""zerocopy.decode.vaapi: what the VA decoder refuses, and why, on a machine without it."""

from __future__ import annotations

import pytest

from zerocopy.errors import PathUnavailable
from zerocopy.samples import ClipSpec


def test_a_pyav_without_hw_owned_frames_is_refused_with_what_to_install(monkeypatch):
    """PyAV < 17 has no HWAccel(is_hw_owned): the VA paths must refuse, not die with a TypeError."""
    import av.codec.hwaccel

    from zerocopy.decode.vaapi import hw_owned_support
    from zerocopy.probe import Facts, refusals

    assert hw_owned_support() is None  # the PyAV installed here has it

    class PyAV16HWAccel:  # PyAV 16.1's signature
        def __init__(self, device_type, device=None, allow_software_fallback=True, options=None, flags=None):
            pass

    monkeypatch.setattr(av.codec.hwaccel, "HWAccel", PyAV16HWAccel)
    why = hw_owned_support()
    assert why and "lacks HWAccel(is_hw_owned)" in why and "PyAV ≥ 17 on FFmpeg ≥ 8" in why
    facts = Facts(hwdevices=("vaapi",), filters={"scale_vaapi": True, "pad_vaapi": True, "hwdownload": True},
                  render_nodes=("/dev/dri/renderD128",), ov_devices=("CPU", "GPU"), bridge="ok", old_pyav=why)
    r = refusals(facts)
    assert r["zero-copy"] == [why] and r["copy"] == [why]


def test_a_va_decoder_that_cannot_open_is_a_refusal_and_a_missing_input_the_inputs_error(clips, tmp_path):
    """PyAV creates the VA device inside `av.open`: its failure must not be blamed on the input
    (here PyPI's PyAV has no VA-API at all, a real failure of the same call)."""
    from zerocopy.decode.vaapi import open_vaapi
    from zerocopy.errors import InputError

    clip, _ = clips("fallback.mp4", ClipSpec(frames=12))
    with pytest.raises(PathUnavailable) as e:
        open_vaapi(clip, "/dev/dri/renderD128", "copy")
    assert e.value.reasons["copy"][0].startswith(f"VA-API cannot decode h264 from {clip} on /dev/dri/renderD128: ")
    with pytest.raises(InputError, match="no such file"):
        open_vaapi(tmp_path / "missing.mp4", "/dev/dri/renderD128", "copy")
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all" * 100)
    with pytest.raises(InputError, match="cannot open"):
        open_vaapi(broken, "/dev/dri/renderD128", "copy")
