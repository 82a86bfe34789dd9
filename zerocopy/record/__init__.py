"""Clips and continuous recording without re-encoding (issue 29 §2, issue 38; docs/serve.md, *Recording*, *Clips*).

Each camera keeps the compressed packets of its `record_url` (its main stream, only demuxed, never decoded) in
a ring bounded in bytes (`ring.PacketRing`, filled by `reader.Recorder`); when an object's event ends, its clip
is cut from the ring at a keyframe and remuxed to MP4 with its index first (`clip.write_clip`), on a worker
thread of the camera's own (`writer.ClipWriter`). A camera that records continuously also has its ring
followed into segments on disk (`segments.SegmentWriter`, indexed in the store). `camera.CameraRecording` puts them
together for serve.
"""
