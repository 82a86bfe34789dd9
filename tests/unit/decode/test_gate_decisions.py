"""The decode gate's decisions (`decode.gate`) on sequences of packet sizes like a camera's: a keyframe every 30
packets, the packets after it dearer and falling off, sensor noise making every one vary; a pass that makes them
grow; a stream padded to a constant bit rate."""

from __future__ import annotations

import threading

import numpy as np

from zerocopy.decode.gate import (
    CLOSE,
    CLOSE_AFTER_S,
    DECODE,
    KEEP,
    OPEN,
    DecodeGate,
    Demand,
    SizeBaseline,
    percentile,
)

GOP = 30


def quiet_sizes(rng: np.random.Generator, gops: int) -> list[tuple[int, bool]]:
    """(size, key) of `gops` quiet keyframe intervals: a 45 KB keyframe, then ~3 KB falling to ~1.6 KB, ±25 %."""
    out = []
    for _ in range(gops):
        out.append((45000, True))
        for p in range(1, GOP):
            out.append((int((1600 + 1400 * np.exp(-p / 5)) * rng.uniform(0.75, 1.25)), False))
    return out


def quiet_consumer(demand: Demand, t: float) -> None:
    demand.judge(False, t)


def calibrated_gate(rng) -> tuple[DecodeGate, Demand, list[str]]:
    """A gate whose consumer wanted frames for the first second and nothing since, fed quiet packets until it closes
    (at most 6 keyframe intervals) and to the end of that interval."""
    demand = Demand()
    gate = DecodeGate(demand)
    actions: list[str] = []
    for i, (size, key) in enumerate(quiet_sizes(rng, 6)):
        if gate.open or not key:
            demand.judge(i < 15, i / 15)  # the motion gate calibrates for the first second
            actions.append(gate.packet(size, key))
        else:
            break
    return gate, demand, actions


def test_packets_that_grow_open_the_gate_and_say_so():
    rng = np.random.default_rng(2)
    gate, demand, _ = calibrated_gate(rng)
    actions = [gate.packet(int(s * 1.8), k) for s, k in quiet_sizes(rng, 1)[1:6]]
    assert OPEN in actions[:3], actions  # a pass makes packets ~1.8x: open within three packets
    assert gate.open and gate.report.opened_by["packet size"] == 1


def test_one_spike_opens_alone_and_one_noisy_packet_does_not():
    rng = np.random.default_rng(3)
    gate, demand, _ = calibrated_gate(rng)
    assert gate.packet(2600, False) == KEEP  # position 1's baseline is ~3 KB: noise
    assert gate.packet(9000, False) == OPEN  # position 2, three times its baseline


def test_the_consumer_wanting_frames_opens_the_gate_and_quiet_closes_it_again():
    rng = np.random.default_rng(4)
    gate, demand, _ = calibrated_gate(rng)
    demand.judge(True, 20.0)  # motion measured on the keyframe
    assert gate.packet(1500, False) == OPEN and gate.report.opened_by["frames wanted"] == 1
    frames = round(CLOSE_AFTER_S * 15)
    for n in range(frames + 1):
        demand.judge(False, 20.0 + (n + 1) / 15)
        action = gate.packet(1500, False)
        if action == CLOSE:
            break
    assert action == CLOSE and n >= frames - 1


def test_a_keepalive_that_finds_no_keyframe_opens_the_gate_at_its_time():
    """`Demand.wanted_from` (`MotionGate.wants_frames`: a keepalive or an end that waited `KEYFRAME_WAIT_S` for a
    keyframe in vain): the quiet packets before it are kept, the first at or after it opens the gate."""
    rng = np.random.default_rng(4)
    gate, demand, _ = calibrated_gate(rng)
    demand.judge(False, 20.0, wanted_from=21.0)
    actions = [(p, gate.packet(size, key, 20.0 + p / 15)) for p, (size, key) in enumerate(quiet_sizes(rng, 1)[1:20], 1)]
    assert [a for p, a in actions if p < 15] == [KEEP] * 14  # (20 + 14/15 s: before it)
    assert actions[14] == (15, OPEN) and gate.report.opened_by["frames wanted"] == 1


def test_a_stream_padded_to_a_constant_bit_rate_keeps_full_decoding():
    rng = np.random.default_rng(5)
    demand = Demand()
    gate = DecodeGate(demand)
    actions = []
    for _ in range(8):
        for p in range(GOP):
            size = 21000 if p == 0 else (2877 + int(rng.integers(0, 2)) if p > 20 else int(rng.uniform(1200, 2600)))
            demand.judge(False, 1.0)
            actions.append(gate.packet(size, p == 0))
    assert set(actions) == {DECODE}
    assert "constant bit rate" in gate.report.off


def test_the_baseline_follows_the_position_after_the_keyframe():
    baseline = SizeBaseline()
    for _ in range(3):
        baseline.keyframe(GOP)
        for p in range(1, GOP):
            baseline.learn(p, 3000 if p < 5 else 1000)
    assert baseline.calibrated
    assert not baseline.rises(1, 3200)  # dear just after the keyframe: as usual there
    baseline.keyframe(GOP)
    assert [baseline.rises(p, 1700) for p in (20, 21, 22)] == [False, False, True]  # 1.7x, three in a row


def test_the_decoder_waits_for_the_consumers_verdict_and_stops_waiting_when_stopped():
    demand, stop = Demand(), threading.Event()
    done = []
    waiter = threading.Thread(target=lambda: done.append(demand.settled(2, stop)))
    waiter.start()
    demand.judge(False, 0.0)
    assert waiter.is_alive()
    demand.judge(False, 0.1)
    waiter.join(5)
    assert done == [True]
    stop.set()
    assert demand.settled(3, stop) is False


def test_the_baseline_percentile_is_numpys():
    for values in ([5], [3, 1], [1800, 1650, 2210, 1700, 1500, 1990, 1720, 1802], list(range(7))):
        for q in (0, 25, 50, 75, 100):
            assert abs(percentile(values, q) - float(np.percentile(values, q))) < 1e-9, (values, q)
