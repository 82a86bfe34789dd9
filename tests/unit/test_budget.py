"""zerocopy.budget: the thread budget."""

from zerocopy.budget import default_decode_threads as decode_threads
from zerocopy.budget import inference_threads, usable_cores


def test_thread_budget_splits_the_cores():
    cores = usable_cores()
    assert inference_threads() == max(1, cores // 2)
    assert decode_threads() == max(1, cores - inference_threads())
    assert decode_threads(device="GPU") == decode_threads(device="GPU.1") == cores  # the CPU is the decoder's


def test_thread_budget_for_parallel_inputs():
    """Several inputs at once: CPU inference may use every core and each decoder gets one thread;
    with GPU inference the decoders share the cores (an explicit count is the configuration's: test_config)."""
    cores = usable_cores()
    assert inference_threads(3) == cores and inference_threads(1) == inference_threads()
    assert decode_threads(inputs=64) == decode_threads(inputs=2) == decode_threads(device="GPU", inputs=64) == 1
    assert decode_threads(device="GPU", inputs=2) == max(1, cores // 2)  # GPU inference: the CPU decodes
