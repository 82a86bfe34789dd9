"""A GPU path that fails at any stage before its first result ends in the next path, with the reason.

Faults are injected at each stage with the real failure of that stage (see `faults.py`): OpenVINO
refusing to compile, to bind, or to run the first request; a decoder that never gives a frame. The
run must commit to a path only after the first frame went through inference, so the sinks see
every frame exactly once, from the path that ran.
"""

from __future__ import annotations

import json

import av
import numpy as np
import pytest
from conftest import read_jsonl
from faults import StandInFront, write_poison_model, write_undecodable, write_white_clip

import zerocopy.probe
from zerocopy import api as api_module
from zerocopy import paths
from zerocopy.errors import InferenceError, PathUnavailable
from zerocopy.infer.model import WrappedModel, make_core, resolve_spec
from zerocopy.infer.queue import InferenceScheduler
from zerocopy.run import DetectOptions, run_detect
from zerocopy.samples import ClipSpec

STAGE_REASONS = {
    "compile": "cannot compile poison for CPU: Device with \"not-a-remote-context\" name is not registered",
    "bind": "binding the first frame on CPU failed: ",
    "inference": "first frame on CPU: inference failed: [CPU] Reshape node",
    "decode": "the GPU cannot decode h264",
}


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    """Make `auto` try a stand-in for `copy` (failing at the given stage), then the real software path."""

    def install(stage: str) -> None:
        undecodable = write_undecodable(tmp_path / "undecodable.mkv") if stage == "decode" else None
        real = paths.front_for

        def front_for(name):
            return StandInFront("copy", stage, undecodable) if name == "copy" else real(name)

        monkeypatch.setattr(api_module, "front_for", front_for)
        monkeypatch.setattr(api_module, "AUTO_ORDER", ("copy", "software"))
        monkeypatch.setattr(zerocopy.probe, "refusals", lambda *a, **k: {})  # as on a machine with it all

    return install


@pytest.fixture(scope="module")
def poison_model(tmp_path_factory):
    return write_poison_model(tmp_path_factory.mktemp("poison") / "poison.xml")


@pytest.mark.parametrize("stage", sorted(STAGE_REASONS))
def test_a_failure_before_the_first_result_falls_back_with_its_reason(stage, stand_in, clips, tmp_path,
                                                                       poison_model):
    stand_in(stage)
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl, video = tmp_path / "d.jsonl", tmp_path / "out.mp4"
    opts = DetectOptions([str(clip)], model=str(poison_model), json=str(jsonl), output=str(video), quiet=True)
    messages = []
    run = run_detect(opts, messages.append)
    assert run.choice.name == "software"
    assert STAGE_REASONS[stage] in run.choice.refused["copy"], run.choice.refused
    assert run.report["refused"]["copy"] == run.choice.refused["copy"]
    # every frame once, in order, from the path that ran; the MP4 is complete and playable
    assert [line["frame"] for line in read_jsonl(jsonl)] == list(range(len(truth)))
    with av.open(str(video)) as c:
        assert sum(1 for _ in c.decode(video=0)) == len(truth)


def _frameless_clip(path) -> str:
    """An MP4 cut 50 bytes into its media data: it opens (the index comes first), then gives no frame."""
    from zerocopy.samples import write_clip

    write_clip(path, ClipSpec(width=320, height=240, frames=10), container_options={"movflags": "faststart"})
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b"mdat") + 54])
    return str(path)


def test_parallel_inputs_try_the_path_on_the_first_input_that_gives_a_frame(stand_in, clips, tmp_path,
                                                                             poison_model):
    """`--parallel` with a first input that gives no frame: the trial runs on the next input, so the
    failing path is still refused before anything is delivered and `auto` ends on software."""
    stand_in("inference")
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl = tmp_path / "d.jsonl"
    opts = DetectOptions([_frameless_clip(tmp_path / "cut.mp4"), str(clip)], model=str(poison_model),
                         json=str(jsonl), quiet=True, parallel=True)
    run = run_detect(opts, lambda _m: None)
    assert run.choice.name == "software", run.choice
    assert STAGE_REASONS["inference"] in run.choice.refused["copy"]
    assert [line["frame"] for line in read_jsonl(jsonl) if line["input"] == 1] == list(range(len(truth)))


@pytest.mark.parametrize("stage", ["compile", "inference"])
def test_an_explicit_gpu_path_that_fails_at_first_contact_exits_1_naming_the_stage(stage, stand_in, clips,
                                                                                   poison_model, tmp_path, capsys):
    from conftest import run_cli

    stand_in(stage)
    clip, _ = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl = tmp_path / "d.jsonl"
    assert run_cli("detect", clip, "--path", "copy", "--model", poison_model, "--json", jsonl) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"zerocopy: the copy path cannot run here: {STAGE_REASONS[stage][:30]}" in err
    assert jsonl.read_text() == ""  # nothing was written by a path that did not commit


def _poison_scheduler(poison_model, nireq=2):
    core = make_core(None)
    spec = resolve_spec(str(poison_model), core=core)
    model = WrappedModel(core, spec, "nv12").compile("CPU")
    return model, InferenceScheduler(model, _Host(model.input_names), nireq)


class _Host:
    """Binds frames whose Y plane value says whether the request is poisoned (255) or not."""

    def __init__(self, names):
        self.names = names

    def bind(self, request, frames, slot):
        y, uv = (request.get_tensor(n).data for n in self.names)
        y[...] = frames[0].inputs["y"]
        uv[...] = 128


def _frames(model, values):
    from zerocopy.frames import Geometry, PreparedFrame

    g = Geometry.fit(model.width, model.height, model.width, model.height, "stretch")
    return [PreparedFrame(i, None, g.src_w, g.src_h, g, {"y": v}) for i, v in enumerate(values)]


def test_a_failed_request_is_raised_in_order_and_never_hangs(poison_model):
    """OpenVINO does not call the completion callback for a failed request; waiting for it would hang."""
    model, scheduler = _poison_scheduler(poison_model, nireq=2)
    frames = _frames(model, [10, 20, 255, 30, 40])
    delivered = []
    with pytest.raises(InferenceError, match="Reshape"):
        for f in frames:
            scheduler.submit([f])
            delivered += [r.frame.index for r in scheduler.results()]
    with pytest.raises(InferenceError, match="inference failed: .*Reshape"):
        delivered += [r.frame.index for r in scheduler.results(wait=True)]
    assert delivered == [0, 1]  # everything before the failed frame, in order
    scheduler.wait_all()  # does not raise again, does not hang


def test_a_request_that_does_not_finish_in_time_is_an_error(poison_model, monkeypatch):
    model, scheduler = _poison_scheduler(poison_model)
    scheduler.submit(_frames(model, [10]))
    with pytest.raises(InferenceError, match="did not complete within 0 s"):
        list(scheduler.results(wait=True, timeout=0.0))
    assert scheduler.abandoned  # never waited on again: the pipeline's cleanup must not hang on it
    scheduler.wait_all()
    assert list(scheduler.results(wait=True)) == []


def test_a_failed_input_after_commit_is_that_inputs_error_and_the_next_one_runs(poison_model, clips, tmp_path):
    """After the path committed, a request failing mid-input ends that input only; the sinks stay valid."""
    bright = write_white_clip(tmp_path / "white.mp4")
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl = tmp_path / "d.jsonl"
    opts = DetectOptions([str(clip), str(bright), str(clip)], model=str(poison_model), path="software",
                         json=str(jsonl), quiet=True)
    run = run_detect(opts, print)
    errors = [i.error for i in run.result.inputs]
    assert errors[0] is None and errors[2] is None
    assert errors[1] and "inference failed" in errors[1]
    lines = read_jsonl(jsonl)
    assert [line["frame"] for line in lines if line["source"] == str(clip)] == list(range(len(truth))) * 2


def test_the_compile_config_turns_off_openvinos_automatic_batching(face_model_path):
    """THROUGHPUT on a GPU would let OpenVINO wrap the model in BATCH, which cannot take remote tensors."""
    from zerocopy.infer.model import default_config

    for device in ("GPU", "GPU.0", "CPU"):
        assert default_config(device)["ALLOW_AUTO_BATCHING"] == "NO"
    seen = {}

    class Recording(type(make_core(None))):
        def compile_model(self, model, target, config):
            seen.update(config)
            return super().compile_model(model, "CPU", config)

    core = Recording()
    spec = resolve_spec("face", core=core)
    WrappedModel(core, spec, "nv12", 1, "GPU_SURFACE").compile("GPU", None, {"ALLOW_AUTO_BATCHING": "YES"})
    assert seen["ALLOW_AUTO_BATCHING"] == "NO" and seen["PERFORMANCE_HINT"] == "THROUGHPUT"


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
    facts = Facts(("vaapi",), {"scale_vaapi": True, "pad_vaapi": True, "hwdownload": True},
                  ("/dev/dri/renderD128",), ("CPU", "GPU"), "ok", old_pyav=why)
    r = refusals(facts)
    assert r["zero-copy"] == [why] and r["copy"] == [why]


def test_a_named_render_node_is_tried_even_when_dev_dri_lists_none(tmp_path):
    from zerocopy.decode.vaapi import VASession
    from zerocopy.probe import Facts, refusals

    node = tmp_path / "renderD200"
    node.write_bytes(b"")
    facts = Facts(("vaapi",), {"scale_vaapi": True, "pad_vaapi": True, "hwdownload": True}, (), ("CPU", "GPU"),
                  "ok")
    assert refusals(facts) == {p: ["no /dev/dri render node"] for p in ("zero-copy", "copy")}
    assert refusals(facts, va_device=str(node)) == {}
    missing = refusals(facts, va_device=str(tmp_path / "nope"))
    assert missing["copy"] == [f"the render node {tmp_path / 'nope'} does not exist"]
    with pytest.raises(PathUnavailable, match="does not exist"):
        VASession(str(tmp_path / "nope")).open_node("copy")


def test_an_undecodable_stream_gives_up_quickly_instead_of_reading_it_all(tmp_path):
    from zerocopy.decode.pyav import NothingDecodes, PyAVDecoder

    path = write_undecodable(tmp_path / "undecodable.mkv", frames=200)
    decoder = PyAVDecoder(path, give_up_without_frame=8)
    with pytest.raises(NothingDecodes, match="8 packets in a row from a keyframe on failed"):
        for _ in decoder.frames():
            pass
    decoder.close()
    assert decoder.damage.packets_failed <= 10 * 8 + 8 + 1  # gave up long before the end
    plain = PyAVDecoder(path)  # without the limit (the software path) the damage is read to the end
    assert sum(1 for _ in plain.frames()) == 0
    plain.close()
    assert plain.damage.packets_failed >= 180  # (frame threads report some errors late, or merged)


def test_the_pipeline_releases_the_model_before_the_va_device(clips, face_model_path):
    """The compiled model (and its remote context) must never outlive the VA device it uses."""
    from zerocopy.pipeline import Pipeline

    order = []

    class Device:
        def close(self):
            order.append("device" if pipeline.model.compiled is None else "device before model")

    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    core = make_core(None)
    model = WrappedModel(core, resolve_spec("face", core=core), "nv12")
    pipeline = Pipeline(model, paths.front_for("software"), "CPU", None, 0.5, [])
    pipeline.va.device = Device()
    result = pipeline.run([str(clip)])
    assert result.frames == len(truth) and order == ["device"] and pipeline.va.device is None


def test_report_json_names_the_refusal(stand_in, clips, tmp_path, poison_model):
    stand_in("bind")
    clip, _ = clips("fallback.mp4", ClipSpec(frames=12))
    report = tmp_path / "r.json"
    run_detect(DetectOptions([str(clip)], model=str(poison_model), report=str(report), quiet=True), print)
    r = json.loads(report.read_text())
    assert r["path"] == "software" and "binding the first frame" in r["refused"]["copy"]
    assert np.isfinite(r["fps"])


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


def test_a_stream_that_starts_mid_gop_is_not_taken_for_an_undecodable_one(tmp_path):
    """Before its first keyframe every packet fails on any decoder: that must not count as the GPU
    being unable to decode the codec (a cut file, a camera joined late)."""
    from zerocopy.decode.pyav import PyAVDecoder
    from zerocopy.samples import ClipSpec, write_clip

    full = tmp_path / "long-gop.ts"
    write_clip(full, ClipSpec(frames=300, width=320, height=180, options=(("g", "250"), ("bf", "0"))),
               container_format="mpegts")
    data = full.read_bytes()
    cut = tmp_path / "cut.ts"
    cut.write_bytes(data[(int(len(data) * 0.4) // 188) * 188:])  # at a TS packet boundary, mid-GOP
    decoder = PyAVDecoder(cut, give_up_without_frame=24)  # as the VA decoder is opened
    frames = sum(1 for _ in decoder.frames())
    decoder.close()
    assert frames >= 40, frames  # everything from the keyframe at frame 250 on (139 packets in)


def test_parallel_inputs_that_give_no_frame_do_not_stop_the_one_that_works(clips, tmp_path):
    """The first inputs give nothing (cut before its first frame; noise for parameter sets): the
    trial runs on the next, every input ends with its own outcome."""
    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    jsonl, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    inputs = [_frameless_clip(tmp_path / "cut.mp4"), str(write_undecodable(tmp_path / "noise.mkv")), str(clip)]
    opts = DetectOptions(inputs, json=str(jsonl), report=str(report), quiet=True, parallel=True)
    run = run_detect(opts, lambda _m: None)
    assert run.choice.name == "software"
    assert [line["frame"] for line in read_jsonl(jsonl) if line["input"] == 2] == list(range(len(truth)))
    entries = json.loads(report.read_text())["inputs"]
    assert [e["frames"] for e in entries] == [0, 0, len(truth)]
    assert entries[0]["error"] and entries[1]["error"] and entries[2]["error"] is None
