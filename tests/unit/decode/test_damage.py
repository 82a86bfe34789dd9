"""zerocopy.decode.damage: the damage report with a live report inside."""

from __future__ import annotations

from zerocopy.decode.damage import MESSAGE_KINDS, DamageReport, LiveReport


def test_the_damage_report_carries_the_live_report():
    report = DamageReport(live_report=LiveReport(drops=2, reconnects=2, attempts=3, gaps=2,
                                                        seconds_without_frames=3.25, longest_gap_s=2.0))
    assert report.damaged
    assert report.summary() == "2 reconnects (3.2 s without frames)"
    assert report.to_dict()["live"] == {"drops": 2, "reconnects": 2, "attempts": 3, "seconds_without_frames": 3.25,
                                        "longest_gap_s": 2.0, "gave_up": None,
                                        "stopped_while_reconnecting": None}
    assert DamageReport().to_dict()["live"] is None and not DamageReport(live_report=LiveReport()).damaged


def test_message_kinds_are_capped():
    """Messages whose words vary (addresses, sizes) must not grow the counter without end."""
    damage = DamageReport()
    for i in range(MESSAGE_KINDS + 20):
        damage.add_log("hevc", f"kind-{i} went wrong")
    assert len(damage.decoder_messages) == MESSAGE_KINDS + 1
    assert damage.decoder_messages[DamageReport.OTHER_MESSAGES] == 20
    assert sum(damage.decoder_messages.values()) == MESSAGE_KINDS + 20
