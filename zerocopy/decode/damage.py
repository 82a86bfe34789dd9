"""What went wrong while reading a stream, kept to report it rather than to stop on it."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zerocopy.errors import counted
from zerocopy.redaction import redact_text

if TYPE_CHECKING:
    from zerocopy.decode.gate import GateReport

MESSAGE_KINDS = 50  # kinds of decoder message counted apart; the rest count together
LAST_MESSAGES = 5  # decoder messages kept whole, the newest


@dataclass(kw_only=True)
class LiveReport:
    """What happened to a live source: drops, reconnections and the time without frames."""

    drops: int = 0  # times the source ended or failed mid-stream
    reconnects: int = 0  # times it was opened again after a drop
    attempts: int = 0  # opening attempts after drops, failed ones included
    gaps: int = 0  # gaps without frames that ended (a reconnection that brought frames again)
    seconds_without_frames: float = 0.0  # their total: kept as sums, so a camera dropping for months adds nothing
    longest_gap_s: float = 0.0
    last_gap_s: float = 0.0
    gave_up: str | None = None
    reconnecting: str | None = None  # why the source dropped, while it is being reconnected

    def add_gap(self, seconds: float) -> None:
        self.gaps += 1
        self.seconds_without_frames = round(self.seconds_without_frames + seconds, 3)
        self.longest_gap_s = round(max(self.longest_gap_s, seconds), 3)
        self.last_gap_s = round(seconds, 3)

    def summary(self) -> str:
        """The reconnections, and a reconnection the run was stopped in, in a few words ("" if
        neither); why reading ended otherwise is the damage report's `stopped_early`."""
        parts = []
        if self.reconnects:
            gaps = f" ({self.seconds_without_frames:.1f} s without frames)" if self.gaps else ""
            parts.append(f"{counted(self.reconnects, 'reconnect')}{gaps}")
        if self.reconnecting:
            parts.append(f"stopped while reconnecting ({self.reconnecting})")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "drops": self.drops,
            "reconnects": self.reconnects,
            "attempts": self.attempts,
            "seconds_without_frames": self.seconds_without_frames,
            "longest_gap_s": self.longest_gap_s,
            "gave_up": self.gave_up,
            "stopped_while_reconnecting": self.reconnecting,
        }


@dataclass(kw_only=True)
class DamageReport:
    """Decoder errors, packets that failed, where reading stopped early, and, for a live source
    (`live_report` is set), its drops, reconnections and time without frames.

    Decoder messages are kept in bounded memory however long the input runs: a count per kind (at
    most `MESSAGE_KINDS`, then `OTHER_MESSAGES`) and the last `LAST_MESSAGES` whole."""

    OTHER_MESSAGES = "other messages"

    packets_failed: int = 0
    corrupt_frames: int = 0
    decoder_messages: Counter = field(default_factory=Counter)
    stopped_early: str | None = None
    live_report: LiveReport | None = None
    discontinuities: int = 0  # timestamp jumps a realtime-paced input started its clock again at (`Pacer`)
    gate: GateReport | None = None  # what the decode gate did (`--decode-gate`; not damage), where it ran
    last_messages: deque = field(default_factory=lambda: deque(maxlen=LAST_MESSAGES))

    @property
    def damaged(self) -> bool:
        dropped = self.live_report is not None and bool(self.live_report.drops)
        return bool(self.packets_failed or self.corrupt_frames or self.decoder_messages or self.stopped_early
                    or dropped or self.discontinuities)

    def count_discontinuity(self) -> None:
        self.discontinuities += 1

    def add_log(self, name: str, message: str) -> None:
        # "error while decoding MB 33 13" → "error while decoding MB": count kinds, not positions
        message = redact_text(message)  # FFmpeg may quote the URL it failed on
        words = [w for w in message.strip().split() if not w.lstrip("-").isdigit()]
        kind = f"{name}: {' '.join(words)}"
        if kind not in self.decoder_messages and len(self.decoder_messages) >= MESSAGE_KINDS:
            kind = self.OTHER_MESSAGES
        self.decoder_messages[kind] += 1
        self.last_messages.append(f"{name}: {message.strip()}")

    def summary(self) -> str:
        parts = []
        if self.live_report is not None and self.live_report.summary():
            parts.append(self.live_report.summary())
        if self.packets_failed:
            parts.append(f"{counted(self.packets_failed, 'packet')} failed to decode")
        if self.corrupt_frames:
            parts.append(f"{counted(self.corrupt_frames, 'frame')} flagged corrupt")
        if self.decoder_messages:
            total = sum(self.decoder_messages.values())
            top = ", ".join(f"'{m}'" for m, _ in self.decoder_messages.most_common(2))
            parts.append(f"{counted(total, 'decoder error')} (e.g. {top})")
        if self.discontinuities:
            s = "y" if self.discontinuities == 1 else "ies"
            parts.append(f"{self.discontinuities} timestamp discontinuit{s}")
        if self.stopped_early:
            parts.append(f"stopped early: {redact_text(self.stopped_early)}")
        return "; ".join(parts) or "none"

    def to_dict(self) -> dict:
        return {
            "damaged": self.damaged,
            "packets_failed": self.packets_failed,
            "corrupt_frames": self.corrupt_frames,
            "decoder_errors": sum(self.decoder_messages.values()),
            "decoder_messages": dict(self.decoder_messages.most_common(10)),
            "last_decoder_messages": list(self.last_messages),
            "stopped_early": redact_text(self.stopped_early) if self.stopped_early else None,
            "discontinuities": self.discontinuities,
            "live": self.live_report.to_dict() if self.live_report is not None else None,
            "decode_gate": self.gate.to_dict() if self.gate is not None else None,
        }
