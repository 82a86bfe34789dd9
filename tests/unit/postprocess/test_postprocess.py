"""zerocopy.postprocess: the decoder guessed from the output shapes."""

import pytest

from zerocopy.errors import ModelError
from zerocopy.postprocess import guess_postprocess


def test_decoder_is_guessed_from_output_shapes():
    assert guess_postprocess({"o": (1, 1, 100, 7)}) == "detection-output"
    assert guess_postprocess({"o": (1, 84, 8400)}) == "yolo"
    assert guess_postprocess({"r": (1, 896, 16), "c": (1, 896, 1)}) == "anchor-ssd"
    with pytest.raises(ModelError, match="--decoder"):
        guess_postprocess({"o": (1, 1000)})
