"""zerocopy.infer.model: the compile configuration."""

from __future__ import annotations

from zerocopy.infer.model import WrappedModel, make_core, resolve_spec


def test_the_compile_config_turns_off_openvinos_automatic_batching(face_model_path):
    """THROUGHPUT on a GPU would let OpenVINO wrap the model in BATCH, which cannot take remote tensors."""
    from zerocopy.infer.properties import default_config

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


def test_models_read_as_values_run_in_f32_on_the_cpu_and_detectors_keep_its_default():
    """A CPU with AVX512_BF16 would run everything in bf16: maps and region models must not (their values are
    the result); detectors keep the faster default."""
    from zerocopy.infer.properties import default_config

    for task in ("process", "classify"):
        assert default_config("CPU", task=task)["INFERENCE_PRECISION_HINT"] == "f32"
    assert "INFERENCE_PRECISION_HINT" not in default_config("CPU", task="detect")


def test_a_detectors_labels_are_lower_case_from_the_catalogue_and_from_a_labels_file(face_model_path, tmp_path):
    """Issue 36, item 5: one spelling of a label everywhere (it was `person` on MQTT, `Person` in the API, the
    metrics, the page and the store)."""
    from zerocopy.catalog import CATALOG
    from zerocopy.infer.model import resolve_spec
    from zerocopy.names import spelled

    assert "Person" in CATALOG["objects"].labels and "person" in spelled(CATALOG["objects"].labels)
    labels = tmp_path / "labels.txt"
    labels.write_text("Face\n\nFront Door\n")
    assert resolve_spec("face", labels_file=str(labels)).labels == ("face", "front door")
    assert resolve_spec("face").labels == ("face",)
