"""The VA bridge: `AVFrame*`/`AVFilterContext*`/`AVCodecContext*` behind PyAV objects, VA surface and
display, hw_frames_ctx for `scale_vaapi`'s buffer source, and one VA device shared by a run's decoders.
C in `native/`, loaded and verified here."""

from zerocopy.bridge.layout import LayoutError, codec_context_pointer, filter_context_pointer, frame_pointer
from zerocopy.bridge.loader import Bridge, BridgeUnavailable, BuildFailed, Device, bridge_status, load_bridge

__all__ = ["Bridge", "BridgeUnavailable", "BuildFailed", "Device", "LayoutError", "bridge_status",
           "codec_context_pointer", "filter_context_pointer", "frame_pointer", "load_bridge"]
