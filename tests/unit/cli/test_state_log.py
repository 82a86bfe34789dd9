"""cli/serve.py's `StateLog`: what serve's log says of each camera's state and of the broker, over a scripted
engine (a plain object giving states) and a clock the test moves: no camera, no sleep."""

from __future__ import annotations

from zerocopy.cli.serve import FLAP_CHANGES, FLAP_WINDOW_S, StateLog
from zerocopy.serve.status import CameraState


class Engine:
    """What `StateLog` reads of the engine: each camera's state now, as the test sets it."""

    def __init__(self, **states: tuple[str, str | None]):
        self.states = dict(states)

    def camera_states(self) -> list[CameraState]:
        return [CameraState(name, state, "software", error) for name, (state, error) in self.states.items()]


class Broker:
    """What `StateLog` reads of the publisher: its stats."""

    def __init__(self):
        self.connected, self.errors, self.last_error = False, 0, None

    def stats(self) -> dict:
        return {"target": "mqtt://127.0.0.1:1883/zc", "connected": self.connected, "errors": self.errors,
                "last_error": self.last_error, "dropped": 0}


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def log(engine: Engine, broker: Broker | None = None) -> tuple[StateLog, list[str], Clock]:
    said: list[str] = []
    clock = Clock()
    return StateLog(engine, broker, said.append, clock), said, clock


def test_a_drop_and_its_return_are_each_said():
    engine = Engine(front=("running", None))
    state_log, said, clock = log(engine)
    state_log.check()
    engine.states["front"] = ("reconnecting", "cannot open yet: connection refused")
    clock.now += 2
    state_log.check()
    clock.now += 2
    state_log.check()  # nothing new: nothing said
    engine.states["front"] = ("running", None)
    clock.now += 2
    state_log.check()
    assert said == ["camera front: running (software path)", "camera front: reconnecting",
                    "camera front: cannot open yet: connection refused; retrying", "camera front: running"]


def test_a_camera_that_flaps_is_said_once_with_a_count_then_at_most_once_a_window():
    """Issue 26, item 9: a network file that ends every ~2 s made two state lines every 2 s for ever."""
    engine = Engine(front=("running", None), back=("running", None))
    state_log, said, clock = log(engine)
    state_log.check()
    for _ in range(300):  # 10 minutes: reconnecting and running again every 2 s
        clock.now += 1
        engine.states["front"] = ("reconnecting", None) if engine.states["front"][0] == "running" else ("running", None)
        state_log.check()
    front = [line for line in said if line.startswith("camera front")]
    assert front[:FLAP_CHANGES] == ["camera front: running (software path)"] + [
        "camera front: reconnecting", "camera front: running"] * ((FLAP_CHANGES - 1) // 2) + \
        ["camera front: reconnecting"] * ((FLAP_CHANGES - 1) % 2)
    assert front[FLAP_CHANGES] == f"camera front: {FLAP_CHANGES} changes in {FLAP_CHANGES - 1} s: it keeps " \
                                  f"changing; from now on one line every {FLAP_WINDOW_S:.0f} s sums it up"
    sums = front[FLAP_CHANGES + 1:]
    minutes = (300 - (FLAP_CHANGES - 1)) / FLAP_WINDOW_S
    assert int(minutes) <= len(sums) <= int(minutes) + 1  # at most one a window
    assert all(line.split(" (")[0] in ("camera front: running", "camera front: reconnecting") for line in sums)
    assert sums[0].endswith(f" ({int(FLAP_WINDOW_S)} change(s) in the last {FLAP_WINDOW_S:.0f} s; it keeps changing)")
    assert said.count("camera back: running (software path)") == 1 and len(said) == len(front) + 1

    engine.states["front"] = ("running", None)  # it settles: a quiet window, then each change is said again
    for _ in range(int(2 * FLAP_WINDOW_S) + 1):
        clock.now += 1
        state_log.check()
    quiet = len(said)
    engine.states["front"] = ("reconnecting", None)
    clock.now += 1
    state_log.check()
    assert said[quiet:] == ["camera front: reconnecting"]


def test_a_failing_camera_that_flaps_still_says_where_it_ended_within_a_window():
    engine = Engine(front=("running", None))
    state_log, said, clock = log(engine)
    state_log.check()
    for _ in range(FLAP_CHANGES + 3):
        clock.now += 1
        engine.states["front"] = ("reconnecting", None) if engine.states["front"][0] == "running" else ("running", None)
        state_log.check()
    engine.states["front"] = ("failed", "the model failed")
    clock.now += 1
    state_log.check()
    assert not said[-1].startswith("camera front: failed")  # held back while it flaps...
    clock.now += FLAP_WINDOW_S
    state_log.check()
    assert said[-1].startswith("camera front: failed: the model failed (")  # ...and said within the window


def test_a_broker_that_flaps_is_summed_up_too():
    broker = Broker()
    state_log, said, clock = log(Engine(), broker)
    state_log.check()
    assert said == []  # not connected yet, and no error: nothing to say
    for n in range(200):
        clock.now += 1
        broker.connected = n % 2 == 0
        broker.errors += not broker.connected
        broker.last_error = "connection lost"
        state_log.check()
    assert said[0] == "broker mqtt://127.0.0.1:1883/zc: connected"
    assert said[1] == "broker mqtt://127.0.0.1:1883/zc: not connected (connection lost); events are queued, " \
                      "0 dropped so far"
    assert said[FLAP_CHANGES].startswith(f"broker mqtt://127.0.0.1:1883/zc: {FLAP_CHANGES} changes in ")
    assert len(said) <= FLAP_CHANGES + 1 + 200 / FLAP_WINDOW_S + 1
