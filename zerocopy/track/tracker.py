"""Ids per object across one input's inferred frames, with supervision's ByteTrack.

ByteTrack ignores classes, so one tracker runs per label (a person's box and the dog beside it never
swap ids) and its ids are renumbered into one sequence per input. Only inferred frames reach
`update`; the frames `--detect-fps` leaves out get `predict`: each box seen at the last inferred frame,
moved on at the speed it had between its last two sightings.

ByteTrack matches by box overlap, and confirms a new track only if its second box overlaps the first by
IoU > 0.3: an object that moves more than about a third of its width between inferred frames (a person
walking across the picture at `--detect-fps 5`) would never get an id. So the boxes are matched with a
buffer around them (the C-BIoU tracker's idea): each side grown by `buffer` times the box's size, more
at lower rates of inference (0.3 at 15 inferred frames a second and above, up to 1.0 at 4.5 and below).
The boxes given back are the detector's own.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from zerocopy.detections import Detections
from zerocopy.errors import ZeroCopyError


def _byte_track():
    try:
        with warnings.catch_warnings():  # supervision warns on import of what moved to `trackers` in 0.31
            warnings.simplefilter("ignore")
            from supervision import ByteTrack
            from supervision import Detections as SvDetections
    except ImportError:
        raise ZeroCopyError("tracking (--track, --events, --publish, serve) needs supervision: "
                            "pip install 'zerocopy[serve]'") from None
    return ByteTrack, SvDetections


PREDICT_S = 0.5  # `predict` moves a box for at least this long after its last inferred frame, then holds it

class Tracker:
    """One input's object ids. `inferred_rate`: frames inferred per second (the stream's rate, or fewer with
    `--detect-fps`: `InputInfo.inferred_rate`); a track unseen for `max_lost` seconds is dropped by ByteTrack too
    (`lost_track_buffer` in frames)."""

    def __init__(self, inferred_rate: float, max_lost: float):
        self._ByteTrack, self._SvDetections = _byte_track()
        self.lost_frames = max(1, math.ceil(max_lost * inferred_rate))
        self.buffer = min(1.0, 0.3 * max(1.0, 15.0 / inferred_rate))
        # how far ahead `predict` moves a box: two inferred frames' worth (at least PREDICT_S), then it holds (an
        # object that stopped moving, between the motion gate's keepalive inferences, does not drift away)
        self.horizon = max(PREDICT_S, 2.0 / inferred_rate)
        self._next = 1  # ids stay unique within the input, across `reset()`
        self.reset()

    def reset(self) -> None:
        """Forget every track (the input's time started again, or it was away longer than `max_lost`)."""
        self._trackers: dict[int, object] = {}
        self._ids: dict[tuple[int, int], int] = {}  # (label, ByteTrack's id) → this input's id
        # the boxes of the last inferred frame, for `predict`: id → (t, box, velocity px/s, score, label)
        self._seen: dict[int, tuple[float, np.ndarray, np.ndarray, float, int]] = {}
        self._previous: float | None = None  # the time of the last `update`
        # ids given at the last `update` → when their object was first seen: ByteTrack confirms a track on
        # its second sighting, in the inferred frame after its first (an unmatched new track is dropped)
        self.born: dict[int, float] = {}

    def _make(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ByteTrack's deprecation notice (it moved to `trackers`)
            # every box given is above the run's threshold already: all are "high" and may start a track
            # (ByteTrack's own low-score second pass has nothing to do); frame_rate 30 makes the buffer frames
            tracker = self._ByteTrack(track_activation_threshold=0.0, lost_track_buffer=self.lost_frames,
                                      minimum_matching_threshold=0.8, frame_rate=30, minimum_consecutive_frames=1)
        tracker.det_thresh = 0.0
        tracker.frame_id = 1  # as if it had seen a frame: ByteTrack confirms tracks born on its first frame at
        return tracker        # once, others on their second sighting; so every label and input is alike

    def update(self, detections: Detections, t: float) -> np.ndarray:
        """The id of each box of an inferred frame at `t` seconds (-1: a box no track holds yet: ByteTrack
        confirms a new track on its second sighting)."""
        ids = np.full(len(detections), -1, np.int64)
        labels = np.asarray(detections.labels, np.int64)
        self.born = {}
        for label in sorted(set(labels.tolist()) | set(self._trackers)):
            tracker = self._trackers.get(label)
            if tracker is None:
                tracker = self._trackers[label] = self._make()
            idx = np.flatnonzero(labels == label)
            if len(idx) == 0:  # nothing of this label here: its tracks still age (and get lost)
                tracker.update_with_tensors(np.zeros((0, 5), np.float32))
            else:
                found = tracker.update_with_detections(self._SvDetections(
                    xyxy=self._buffered(np.asarray(detections.xyxy[idx], np.float32)),
                    confidence=np.asarray(detections.scores[idx], np.float32),
                    class_id=np.full(len(idx), label), data={"index": idx}))
                for i, ext in zip(found.data.get("index", ()), found.tracker_id, strict=True):
                    ids[i] = self._id(label, int(ext))
            self._forget(label, tracker)
            if not tracker.tracked_tracks and not tracker.lost_tracks:  # nothing of it left: update it no more
                del self._trackers[label]  # (made again when the label comes back; each costs ~70 µs a frame)
        self._remember(detections, ids, t)
        self._previous = t
        return ids

    def _buffered(self, xyxy: np.ndarray) -> np.ndarray:
        grow = (xyxy[:, 2:] - xyxy[:, :2]) * self.buffer
        return np.concatenate([xyxy[:, :2] - grow, xyxy[:, 2:] + grow], axis=1)

    def _id(self, label: int, ext: int) -> int:
        key = (label, ext)
        if key not in self._ids:
            self._ids[key] = self._next
            if self._previous is not None:
                self.born[self._next] = self._previous
            self._next += 1
        return self._ids[key]

    def _forget(self, label: int, tracker) -> None:
        """Drop the ids of tracks ByteTrack removed: the mapping stays as small as the tracks alive."""
        alive = {tr.external_track_id for tr in (*tracker.tracked_tracks, *tracker.lost_tracks)}
        for key in [k for k in self._ids if k[0] == label and k[1] not in alive]:
            del self._ids[key]

    def _remember(self, detections: Detections, ids: np.ndarray, t: float) -> None:
        seen = {}
        for i in np.flatnonzero(ids >= 0):
            box = np.asarray(detections.xyxy[i], np.float64)
            velocity = np.zeros(4)
            before = self._seen.get(int(ids[i]))
            if before is not None and t > before[0]:
                velocity = (box - before[1]) / (t - before[0])
            seen[int(ids[i])] = (t, box, velocity, float(detections.scores[i]), int(detections.labels[i]))
        self._seen = seen

    def predict(self, t: float) -> tuple[Detections, np.ndarray]:
        """The boxes of a frame that was not inferred, at `t` seconds, and their ids: where the objects of
        the last inferred frame are by now, at the speed they last moved (for at most `horizon` seconds)."""
        if not self._seen:
            return Detections.empty(), np.zeros(0, np.int64)
        ids = np.fromiter(self._seen, np.int64, len(self._seen))
        rows = list(self._seen.values())
        boxes = np.stack([box + velocity * min(max(0.0, t - t0), self.horizon)
                          for t0, box, velocity, _, _ in rows]).astype(np.float32)
        scores = np.array([r[3] for r in rows], np.float32)
        labels = np.array([r[4] for r in rows], np.int32)
        return Detections(boxes, scores, labels), ids
