"""What regions around motion (`roi.regions.Regions`) did on one camera, as a record its figures take
(`stages.records`): the inferred frames squares were chosen on, the region inferences they added, and the mean
share of the frame they covered, since the camera's first frame. Serve's `/metrics` (`zerocopy_camera_region_*`)
and `/api/cameras` (`regions`) come from it; the run report's `regions` section is the stage's own
(`RegionTimes`, the whole run's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from zerocopy.stages.figures import Family, Figures
from zerocopy.stages.records import RecordBase

# serve's figures, labelled by camera
REGION_FRAMES = Family(kind="counter", name="zerocopy_camera_region_frames",
                       help="inferred frames on which squares around motion were chosen (none or more) since the start")
REGIONS = Family(kind="counter", name="zerocopy_camera_regions",
                 help="inferences added on squares around motion since the start")
REGION_COVER = Family(kind="gauge", name="zerocopy_camera_region_cover_ratio",
                      help="mean share of the frame the squares covered, over the frames they were chosen on")


@dataclass(kw_only=True)
class RegionSums:
    """One camera's sums, over its openings."""

    frames: int = 0
    regions: int = 0
    covered: float = 0.0  # the covered shares, summed over `frames`

    def add(self, squares: int, covered: float) -> None:
        self.frames += 1
        self.regions += squares
        self.covered += covered


@dataclass(frozen=True, kw_only=True)
class RegionState(RecordBase):
    """A camera's region figures now (a record: not an event, published nowhere): said on an inferred frame at most
    every `stages.motion.REFRESH_S` of media time while they move (as `MotionState` is), and once when its input
    ends."""

    type: ClassVar[str] = "regions"

    camera: str
    frames: int
    regions: int
    covered: float  # the mean share of the frame covered, over `frames` (0 before any)

    @classmethod
    def of(cls, camera: str, sums: RegionSums) -> RegionState:
        return cls(camera=camera, frames=sums.frames, regions=sums.regions,
                   covered=sums.covered / sums.frames if sums.frames else 0.0)

    def to_record(self) -> dict:
        return {"type": self.type, "camera": self.camera, "frames": self.frames, "regions": self.regions,
                "covered": round(self.covered, 4)}

    def to_mqtt(self, before: object = None) -> dict:
        return self.to_record()

    def measure(self, figures: Figures) -> None:
        figures.set(REGION_FRAMES, (), self.frames)
        figures.set(REGIONS, (), self.regions)
        figures.set(REGION_COVER, (), self.covered)
