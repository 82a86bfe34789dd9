"""`--classify MODEL[:LABEL,...]`: which region model runs on the boxes of which labels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from zerocopy.catalog import CATALOG
from zerocopy.errors import ConfigError


@dataclass(frozen=True)
class RoiTask:
    """One `--classify` item: the region `model` (a catalogue name or a file) and the detector labels
    whose boxes it runs on (empty: every box)."""

    model: str
    labels: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return self.model + (":" + ",".join(self.labels) if self.labels else "")


def parse_task(item: str) -> RoiTask:
    """`face-mesh`, `face-mesh:face`, `text-direction:text`, `./cls.xml:car,truck`. A model name that is a
    catalogue name or an existing file is taken whole (a file name may hold a colon)."""
    item = item.strip()
    if not item:
        raise ConfigError("classify", "classify items must be MODEL or MODEL:LABEL,..., not an empty string")
    if item in CATALOG or Path(item).is_file():
        return RoiTask(item)
    model, sep, labels = item.rpartition(":")
    if not sep:
        return RoiTask(item)
    names = tuple(n.strip() for n in labels.split(","))
    if not model or not all(names):
        raise ConfigError("classify", f"classify items are MODEL or MODEL:LABEL,LABEL..., not {item!r}")
    return RoiTask(model, names)
