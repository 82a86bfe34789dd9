"""Annotated H.264 video: the decoded frames with boxes, labels and scores drawn on them, and the
input's audio copied through.

Written so that a killed run leaves a playable file: MP4 (.mp4, .m4v, .mov) is fragmented (a fragment
per keyframe, a keyframe every ~2 s), Matroska and MPEG-TS are readable up to a cut anyway. Each file
is written under its temporary name and renamed into place when the run closes its outputs, all of them
together (sinks/files.py, sinks/drive.py); one that cannot be written stops the run (`OutputError`). The
fragmented MP4 is kept as it is at a clean close: players and browsers open it, FFmpeg seeks through
the index it writes at the end (`mfra`), and a stop stays quick (no remux of hours of video)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import av
from PIL import ImageFont

from zerocopy.detections import Detections
from zerocopy.errors import ZeroCopyError
from zerocopy.frames import PreparedFrame
from zerocopy.sinks import NullSink
from zerocopy.sinks.draw import draw_detections
from zerocopy.sinks.files import OutputError, Staged, close_whole, each_then_raise, output_error
from zerocopy.sinks.overlay import Overlay

# suffix → FFmpeg's muxer (named, since the temporary's name says nothing)
FORMATS = {".mp4": "mp4", ".m4v": "mp4", ".mov": "mov", ".mkv": "matroska", ".ts": "mpegts", ".avi": "avi"}
CONTAINERS = tuple(FORMATS)
# an index per fragment instead of one written at close: a killed run's file plays up to its last fragment
_FRAGMENTED = {"movflags": "frag_keyframe+empty_moov+default_base_moof", "flush_packets": "1"}
KEYFRAME_SECONDS = 2  # so fragments are short: at most this much video is lost to a kill


def check_video_target(target: str) -> None:
    """Refuse, before any work, an --output that names no video file FFmpeg can write H.264 into."""
    suffix = Path(target).suffix.lower()
    if target.endswith(("/", "\\")) or suffix not in CONTAINERS:
        raise ZeroCopyError(f"cannot write --output {target}: name a video file ending in "
                            f"{', '.join(CONTAINERS)}")


def output_names(target: str, count: int) -> list[str]:
    """Every file `--output target` writes for `count` inputs."""
    return [output_name(target, i, count) for i in range(count)]


def output_name(target: str, index: int, count: int) -> str:
    """With several inputs, `out.mp4` becomes `out-1.mp4`, `out-2.mp4`, …"""
    if count == 1:
        return target
    p = Path(target)
    return str(p.with_name(f"{p.stem}-{index + 1}{p.suffix or '.mp4'}"))


class _Output:
    """One input's annotated file: opened on its first frame (when the size is known), closed into its
    temporary at the input's end (`settle`), renamed into place with the run's other outputs (`commit`)."""

    def __init__(self, source: str, path: str, rate: float, option: str = "--output"):
        self.source, self.path, self.option = source, path, option
        self.rate = Fraction(rate).limit_denominator(1001) if rate > 0 else Fraction(25)
        self.out: av.container.OutputContainer | None = None
        self.stream = self.audio = self.font = None
        self.n = 0
        self.staged = Staged(path)
        self.opened = False

    def failed(self, e: OSError) -> OutputError:
        return output_error(self.option, self.path, e)

    def open(self, width: int, height: int) -> None:
        fmt = FORMATS.get(Path(self.path).suffix.lower(), "mp4")
        options = _FRAGMENTED if fmt in ("mp4", "mov") else {}
        # the temporary made new: never written through a link planted under its name
        self.out = av.open(self.staged.ffmpeg_name(), "w", format=fmt, options=dict(options))
        self.opened = True
        s = self.out.add_stream("libx264", rate=self.rate)
        s.width, s.height, s.pix_fmt = width - width % 2, height - height % 2, "yuv420p"
        gop = max(1, round(KEYFRAME_SECONDS * self.rate))
        s.options = {"preset": "veryfast", "crf": "23", "g": str(gop)}
        self.stream = s
        self.audio = self._add_audio()
        try:  # a readable size on any frame; Pillow without FreeType has only the small bitmap font
            self.font = ImageFont.load_default(size=max(12, height // 36))
        except (TypeError, OSError):
            self.font = ImageFont.load_default()

    def _add_audio(self):
        """The input's first audio stream, to be copied (not re-encoded) at the end; None if there is none,
        the input is not a local file, or the container cannot hold that codec."""
        if not Path(self.source).is_file():
            return None
        try:
            with av.open(self.source) as src:
                if not src.streams.audio:
                    return None
                return self.out.add_stream_from_template(src.streams.audio[0])
        except (av.FFmpegError, ValueError, OSError):
            return None

    def _copy_audio(self, out: av.container.OutputContainer) -> None:
        """The input's audio up to the last frame written (a stopped run keeps audio and video alike)."""
        end = self.n / self.rate
        try:
            with av.open(self.source) as src:
                for packet in src.demux(src.streams.audio[0]):
                    if packet.dts is None or packet.size == 0:
                        continue
                    if packet.pts is not None and packet.time_base and packet.pts * packet.time_base >= end:
                        break
                    packet.stream = self.audio
                    try:
                        out.mux(packet)
                    except OSError as e:  # writing the output failed (a full disk): the run stops
                        raise self.failed(e) from None
        except (av.FFmpegError, ValueError, OSError):
            pass  # the video stays complete; the audio is a courtesy

    def settle(self) -> None:
        """The file complete in its temporary (nothing renamed yet)."""
        if self.out is not None:
            out, self.out = self.out, None
            try:
                try:
                    out.mux(self.stream.encode(None))
                    if self.audio is not None:
                        self._copy_audio(out)
                finally:
                    out.close()
            except OSError as e:
                raise self.failed(e) from None

    def commit(self) -> None:
        if self.opened:
            self.staged.finish(keep=True)

    def discard(self) -> None:
        if self.out is not None:
            out, self.out = self.out, None
            with contextlib.suppress(OSError, av.FFmpegError):
                out.close()
        self.staged.discard()


class VideoSink(NullSink):
    """Re-encodes each input to its own file. Frames whose size changes are scaled to the first size.

    H.264 in 4:2:0 needs an even width and height: an odd-sized input loses its last column or row
    (cropped, never scaled, so the boxes stay where they were drawn). `outputs` lists (input, file)
    in the order the inputs began; the N-th input's file is `out-N.mp4` whatever the order they
    begin in (inputs opened at once begin as they answer) and whether the ones before it began.
    Several inputs may be open at once (`--parallel`). A run with `anonymise` hands over pictures already
    hidden where its labels are (pipeline/core.py): the boxes are drawn on what is left.
    """

    def __init__(self, target: str, names: Sequence[str], inputs: int = 1, option: str = "--output",
                 overlay: Overlay | None = None):
        self.target, self.names, self.inputs, self.option = target, list(names), inputs, option
        self.overlay = overlay  # zones, lines and motion drawn under the boxes
        self.outputs: list[tuple[str, str]] = []
        self._open: dict[int, _Output] = {}
        self._done: list[_Output] = []  # ended inputs' files, complete in their temporaries

    def begin(self, source: str, rate: float, input: int = 0) -> None:
        path = output_name(self.target, input, self.inputs)
        self.outputs.append((source, path))
        self._open[input] = _Output(source, path, rate, self.option)

    def write(self, frame: PreparedFrame, detections: Detections, input: int = 0) -> None:
        o = self._open.get(input)
        if frame.picture is None or o is None:
            return
        try:
            self._write(o, frame, detections)
        except OSError as e:  # a full disk, an I/O error, a name nothing can be made at: the run stops
            raise o.failed(e) from None

    def _write(self, o: _Output, frame: PreparedFrame, detections: Detections) -> None:
        if o.out is None:
            o.open(frame.width, frame.height)
        img = frame.picture.to_image()
        if self.overlay is not None:
            self.overlay.draw(img, frame.motion)
        draw_detections(img, detections, self.names, o.font)
        s = o.stream
        if img.size != (s.width, s.height) and img.width - img.width % 2 == s.width \
                and img.height - img.height % 2 == s.height:
            img = img.crop((0, 0, s.width, s.height))  # odd size: drop the last column/row
        out = av.VideoFrame.from_image(img).reformat(width=s.width, height=s.height, format="yuv420p")
        out.pts, out.time_base = o.n, 1 / o.rate
        o.n += 1
        o.out.mux(s.encode(out))

    def end(self, input: int = 0) -> None:
        o = self._open.pop(input, None)
        if o is not None:
            self._done.append(o)  # first: a file that cannot be finished is discarded with the rest
            o.settle()

    def settle(self) -> None:
        """Every file complete in its temporary; the first `OutputError` once all are closed."""
        each_then_raise(list(self._open), self.end)

    def commit(self) -> None:
        """Each file renamed into place."""
        for o in self._done:
            o.commit()
        self._done.clear()

    def discard(self) -> None:
        """Each temporary removed: every previous file stays as it was."""
        for o in [*self._open.values(), *self._done]:
            o.discard()
        self._open.clear()
        self._done.clear()

    def close(self) -> None:
        close_whole(self)
