"""The `segmentation` region decoder (person-mask): a logit map over the model input → a mask over the
box's crop, gated by the model's presence score as MediaPipe's pose graph gates it."""

import numpy as np

from zerocopy.postprocess.regions import ROI_DECODERS, make_roi_decoder
from zerocopy.resize.crops import Crop, RoiPlacement

POSE = {"Identity": (1, 195), "Identity_1": (1, 1), "Identity_2": (1, 256, 256, 1), "Identity_3": (1, 64, 64, 39),
        "Identity_4": (1, 117)}


def outputs(presence: float, logits: np.ndarray) -> dict[str, np.ndarray]:
    out = {name: np.zeros(shape, np.float32) for name, shape in POSE.items()}
    out["Identity_1"][...] = presence
    out["Identity_2"][0, ..., 0] = logits
    return out


def test_the_mask_is_over_the_crop_through_a_sigmoid():
    decoder = make_roi_decoder("segmentation", "person-mask", 256, 256, POSE)
    assert decoder.masks and not ROI_DECODERS["face-landmarks"].masks
    place = RoiPlacement.fit(Crop(100, 40, 200, 150), 256, 256, "letterbox")  # content 256×192 at y0 = 32
    logits = np.full((256, 256), -50.0, np.float32)
    logits[:, :128] = 50.0  # the crop's left half is a person
    res = decoder(outputs(0.9, logits), place)
    assert res.presence == np.float32(0.9) and res.mask.shape == (150, 200)
    assert (res.mask[:, :98] > 0.99).all() and (res.mask[:, 102:] < 0.01).all()


def test_no_mask_where_the_model_says_no_person_is():
    decoder = make_roi_decoder("segmentation", "person-mask", 256, 256, POSE)
    place = RoiPlacement.fit(Crop(0, 0, 64, 64), 256, 256, "letterbox")
    res = decoder(outputs(0.3, np.full((256, 256), 50.0, np.float32)), place)
    assert res.mask is None and res.presence == np.float32(0.3)
