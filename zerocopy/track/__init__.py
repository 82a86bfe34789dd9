"""Objects across frames (`--track`): ids that last (`Tracker`, supervision's ByteTrack) and the events
they make when they appear, change and leave (`ObjectEvents`, `ObjectEvent`)."""

from zerocopy.track.object_events import ObjectEvent, ObjectEvents
from zerocopy.track.tracker import Tracker

__all__ = ["ObjectEvent", "ObjectEvents", "Tracker"]
