"""Snapshots of tracked objects (serve's `snapshots`): the frame where each object scored best, written as a JPEG
with its box drawn and a thumbnail of the box, by a writer thread per camera (`writer.py`), chosen by a stage of
the run (`stage.py`)."""
