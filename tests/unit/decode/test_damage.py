"""zerocopy.decode.damage: the damage report with a live report inside."""

from __future__ import annotations

from zerocopy.decode.damage import DamageReport
from zerocopy.decode.live import LiveReport


def test_the_damage_report_carries_the_live_report():
    report = DamageReport(live_report=LiveReport(drops=2, reconnects=2, attempts=3, gaps_s=[1.25, 2.0]))
    assert report.damaged
    assert report.summary() == "2 reconnects (3.2 s without frames)"
    assert report.to_dict()["live"] == {"drops": 2, "reconnects": 2, "attempts": 3, "seconds_without_frames": 3.25,
                                        "longest_gap_s": 2.0, "gave_up": None,
                                        "stopped_while_reconnecting": None}
    assert DamageReport().to_dict()["live"] is None and not DamageReport(live_report=LiveReport()).damaged
