"""Image-to-image models (FFmpeg's `dnn_processing`): a map over every frame, from a model run on the whole
frame (`text-map`) or on the boxes a detector finds, composed back into the frame (`person-mask`).

`Processor` is the API (a `Detector` whose results carry `output`), `zerocopy process` the command line
(cli/process.py); the maps are decoded in postprocess/maps.py and the region stage (roi/), and written
by sinks/map_videos.py.
"""

from zerocopy.process.processor import Processor

__all__ = ["Processor"]
