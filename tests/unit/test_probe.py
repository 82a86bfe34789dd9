"""zerocopy.probe: refusals and verdicts follow the facts."""

from __future__ import annotations

import pytest

from zerocopy.errors import PathUnavailable
from zerocopy.probe import Facts, refusals, verdicts

NOTHING = Facts(hwdevices=("cuda", "qsv", "drm", "amf"),
                filters={"scale_vaapi": False, "pad_vaapi": False, "hwdownload": True}, render_nodes=(),
                ov_devices=("CPU",), bridge="the FFmpeg headers found (libavutil 57.28.100) are not those PyAV links")


EVERYTHING = Facts(hwdevices=("vaapi", "drm"), filters={"scale_vaapi": True, "pad_vaapi": True, "hwdownload": True},
                   render_nodes=("/dev/dri/renderD128",), ov_devices=("CPU", "GPU"), bridge="ok")


def test_a_named_render_node_is_tried_even_when_dev_dri_lists_none(tmp_path):
    from zerocopy.decode.vaapi import VASession
    from zerocopy.probe import Facts, refusals

    node = tmp_path / "renderD200"
    node.write_bytes(b"")
    facts = Facts(hwdevices=("vaapi",), filters={"scale_vaapi": True, "pad_vaapi": True, "hwdownload": True},
                  render_nodes=(), ov_devices=("CPU", "GPU"), bridge="ok")
    assert refusals(facts) == {p: ["no /dev/dri render node"] for p in ("zero-copy", "copy")}
    assert refusals(facts, va_device=str(node)) == {}
    missing = refusals(facts, va_device=str(tmp_path / "nope"))
    assert missing["copy"] == [f"the render node {tmp_path / 'nope'} does not exist"]
    with pytest.raises(PathUnavailable, match="does not exist"):
        VASession(str(tmp_path / "nope")).open_node("copy")


def test_refusals_follow_the_facts():
    r = {path: "; ".join(why) for path, why in refusals(NOTHING).items()}
    for path in ("zero-copy", "copy"):
        assert "without VA-API" in r[path] and "no /dev/dri" in r[path] and "native bridge" in r[path]
    assert "OpenVINO sees no GPU" in r["zero-copy"] and "GPU" not in r["copy"]
    assert refusals(EVERYTHING) == {}
    no_pad = Facts(**{**EVERYTHING.__dict__, "filters": {"scale_vaapi": True, "pad_vaapi": False,
                                                         "hwdownload": True}})
    assert any("pad_vaapi" in why for why in refusals(no_pad)["zero-copy"])
    assert refusals(no_pad, letterbox=False) == {}


def test_batches_and_cpu_inference_rule_out_zero_copy_only():
    r = refusals(EVERYTHING, batch=4)
    assert set(r) == {"zero-copy"} and "cannot be batched" in r["zero-copy"][0]
    r = refusals(EVERYTHING, device="CPU")
    assert set(r) == {"zero-copy"} and "infers on the GPU" in r["zero-copy"][0]


def test_verdicts_cover_every_path():
    v = verdicts(NOTHING)
    assert set(v) == {"zero-copy", "copy", "software", "baseline"}
    assert v["software"] == "available" and v["zero-copy"].startswith("unavailable: ")
    assert verdicts(EVERYTHING)["zero-copy"] == "available"


def test_doctor_keeps_each_reason_whole_even_with_a_semicolon_inside():
    from zerocopy.probe import path_status

    facts = Facts(**{**NOTHING.__dict__, "bridge": "headers differ; and PyPI's PyAV bundles its FFmpeg"})
    status = path_status(facts)
    assert "native bridge: headers differ; and PyPI's PyAV bundles its FFmpeg" in status["copy"]["reasons"]
    assert not status["copy"]["available"] and status["software"]["available"] and status["software"]["reasons"] == []
