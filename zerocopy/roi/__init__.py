"""A second model on the boxes of the first (`--classify`, FFmpeg's `dnn_classify`, DL Streamer's
`gvaclassify`): each box is cropped from the decoded frame in the path's own memory (`feeds.py`, and
the VA paths' crop fields), run through the region model, and what it says is attached to the box.

`crops.py` says which region of the frame a box becomes, `decoders.py` turns a region model's outputs
into attributes and keypoints, `stage.py` runs it all per frame.
"""

from zerocopy.roi.crops import Crop, RoiPlacement, crop_for
from zerocopy.roi.decoders import RoiResult
from zerocopy.roi.tasks import RoiTask, parse_task

__all__ = ["Crop", "RoiPlacement", "RoiResult", "RoiTask", "crop_for", "parse_task"]
