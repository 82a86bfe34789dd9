"""A record stream's audio, kept beside its video when MP4 can hold it (docs/serve.md, *Recording*): its packets
copied as they came, never decoded, into segments, clips and exports.

AAC is kept (`MP4_AUDIO`): cameras send it raw with its AudioSpecificConfig apart (RTSP, MP4, MKV) or in ADTS
frames, each with a header (MPEG-TS). The ring keeps packets as they came; `mux_audio` takes the ADTS header off as
it writes a packet into an MP4, and gives the MP4 the AudioSpecificConfig (the one the stream has apart, else the one
its first ADTS header says) as the first packet's new extradata, which FFmpeg's MP4 muxer writes into its index
(a fragmented MP4's index then waits for the first fragment: `delay_moov`). Other codecs (G.711 `pcm_mulaw` and
`pcm_alaw`, which many IP cameras send, G.726, Opus, MP3: not tried here) are left out: the camera is recorded
without its audio, and says so once (`audio_params`)."""

from __future__ import annotations

from typing import Any

import av
import av.packet

from zerocopy.record.ring import AudioParams, RecordedPacket

MP4_AUDIO = {"aac"}


def audio_params(container: Any) -> tuple[Any, AudioParams | None, str | None]:
    """The container's first audio stream, the parameters of its packets as kept, and why it is not kept (None:
    it is, or there is none): (None, None, None) without audio."""
    streams = container.streams.audio
    if not streams:
        return None, None, None
    stream = streams[0]
    codec = stream.codec_context
    name = codec.name if codec is not None else "an unknown codec"
    if codec is None or name not in MP4_AUDIO:
        return None, None, f"its audio ({name}) cannot be kept in MP4: recorded without it"
    rate = codec.sample_rate or 0
    return stream, AudioParams(codec=name, sample_rate=rate, time_base=stream.time_base,
                               extradata=codec.extradata or None), None


def add_audio_stream(out: Any, params: AudioParams) -> Any:
    """The audio stream of `params` added to the output container `out`."""
    return out.add_mux_stream(params.codec, rate=params.sample_rate or None, time_base=params.time_base)


def _adts(data: bytes) -> int:
    """The length of the ADTS header `data` starts with (0: none)."""
    if len(data) < 7 or data[0] != 0xFF or data[1] & 0xF6 != 0xF0:
        return 0
    return 7 if data[1] & 1 else 9


def config_of(header: bytes) -> bytes:
    """The AudioSpecificConfig an ADTS header says: its object type, sampling frequency and channels."""
    kind, frequency, channels = (header[2] >> 6) + 1, (header[2] >> 2) & 0xF, ((header[2] & 1) << 2) | header[3] >> 6
    return ((kind << 11) | (frequency << 7) | (channels << 3)).to_bytes(2, "big")


def mux_audio(out: Any, stream: Any, params: AudioParams, kept: RecordedPacket, base: int, first: bool) -> None:
    """One kept audio packet into `stream` of `out`, its timestamps less `base` (in its time base); the `first` of
    a file carries the AudioSpecificConfig."""
    header = _adts(kept.data)
    packet = av.Packet(kept.data[header:] if header else kept.data)
    config = params.extradata or (config_of(kept.data) if header else None)
    if first and config:
        side = av.packet.PacketSideData(av.packet.packet_sidedata_type_from_literal("new_extradata"), len(config))
        side.update(config)
        side.to_packet(packet, move=True)
    packet.pts, packet.dts = kept.pts - base, kept.dts - base
    packet.duration = kept.duration
    packet.time_base = params.time_base
    packet.stream = stream
    out.mux(packet)


def audio_base(video_base: int, params: Any) -> int:
    """A video timestamp (`params.time_base`) in the audio's time base (`params.audio.time_base`)."""
    return round(video_base * params.time_base / params.audio.time_base)
