"""A second model on the boxes of the first (`--classify`, FFmpeg's `dnn_classify`, DL Streamer's
`gvaclassify`), and the detector again on tiles of the frame (`--tiles`): the stages that crop.

Each box becomes a region of the frame (`resize/crops.py`), cut from the decoded frame in the path's own
memory (`resize/regions.py`, and the VA paths' crop fields: `resize/vaapi_roi.py`), run through the region
model (`stage.py`: `RegionRunner`, its own request queue), and what it says is attached to the box
(`postprocess/regions.py`). `tasks.py` reads `--classify MODEL[:LABEL,...]`, `setup.py` resolves them.
"""
