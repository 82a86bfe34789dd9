"""The VA bridge: `AVFrame*`/`AVFilterContext*` behind PyAV objects, VA surface and display, and
hw_frames_ctx for `scale_vaapi`'s buffer source. C in `native/`, loaded and verified here."""

from zerocopy.bridge.layout import LayoutError, filter_context_pointer, frame_pointer
from zerocopy.bridge.loader import Bridge, BridgeUnavailable, bridge_status, load_bridge

__all__ = ["Bridge", "BridgeUnavailable", "LayoutError", "bridge_status", "filter_context_pointer",
           "frame_pointer", "load_bridge"]
