"""Clips without re-encoding (issue 29 §2; docs/serve.md, *Clips*).

Each camera keeps the compressed packets of its `record_url` (its main stream, only demuxed, never decoded) in
a ring bounded in bytes (`ring.PacketRing`, filled by `reader.Recorder`); when an object's event ends, its clip
is cut from the ring at a keyframe and remuxed to MP4 with its index first (`clip.write_clip`), on a worker
thread of the camera's own (`writer.ClipWriter`). `camera.CameraRecording` puts the three together for serve.
"""
