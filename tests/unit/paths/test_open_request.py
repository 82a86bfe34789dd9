"""zerocopy.paths.base.OpenRequest: when the decode gate may run. A run that wants every frame's picture (--output,
`Detector(keep_images=True)`) decodes every frame; one that wants only the pictures of the frames decoded (serve's
latest.jpg: `every_picture=False`) lets the gate leave frames undecoded."""

import pytest

from zerocopy.config import RunConfig
from zerocopy.motion.luma import PlanesLuma
from zerocopy.paths.base import OpenRequest


@pytest.mark.parametrize(("keep_images", "every_picture", "gated"), [
    (False, True, True), (True, True, False), (True, False, True), (False, False, True)])
def test_the_decode_gate_runs_unless_every_frames_picture_is_wanted(keep_images, every_picture, gated):
    req = OpenRequest(model=None, config=RunConfig(motion=True), va=None, keep_images=keep_images,
                      every_picture=every_picture)
    spec = req.motion(PlanesLuma())
    assert spec is not None and spec.decode_gate is gated
    off = OpenRequest(model=None, config=RunConfig(motion=True, decode_gate="off"), va=None, keep_images=keep_images,
                      every_picture=every_picture)
    assert off.motion(PlanesLuma()).decode_gate is False
