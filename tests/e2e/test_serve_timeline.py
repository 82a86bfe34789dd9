"""serve's page beyond the live view (docs/serve.md, *The page*): a camera's timeline, the events list paged and
filtered, the changes to an event, and line counts, in headless Chromium (tests/support/browser.py) against a real
`zerocopy serve` on the loopback. A camera recording continuously a paced loopback stream (as
tests/e2e/test_serve_recordings.py) shows its segments on the day's bar; a click on the bar plays the recording from
that moment (its `currentTime` advances, its export starting within a keyframe interval before the clicked time);
60 events stored through the store's own API before serve starts are paged 50 at a time, filtered by camera, label,
zone and time, kept, marked and deleted with the token. A serve without a token says why a change is refused, and
shows a line's crossings of people walking across (tests/support/passes.py)."""

from __future__ import annotations

import contextlib
import datetime
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import wait_until
from livesource import LiveServer, make_ts_clip
from objectevents import object_event
from passes import write_passes_clip
from test_serve import Serve
from test_serve_page import browser, can_browse, severe, shot  # noqa: F401 (fixtures: the page's browser)

from zerocopy.store.events import EventStore
from zerocopy.store.folder import make_private_dirs

pytestmark = [pytest.mark.timeout(240)]

TOKEN = "timeline-token-8d1e4b"
FPS = 25
KEYINT_S = 1.0
STORED = 60  # events of camera `porch` (no longer configured), more than a page of 50

LOG_IN = """const form = document.getElementById('login');
if (form.hidden) return false;
document.getElementById('token').value = arguments[0];
form.requestSubmit();
return true;"""
TIMELINE = """const s = document.getElementById('camera-timeline'), v = document.getElementById('timeline-video');
return {shown: !s.hidden, camera: s.dataset.camera, segments: Number(s.dataset.segments || 0),
        runs: s.querySelectorAll('#timeline-runs .run').length,
        day: [Number(s.dataset.dayStart), Number(s.dataset.dayEnd)],
        view: [Number(s.dataset.viewStart), Number(s.dataset.viewEnd)],
        clicked: Number(s.dataset.clicked || 0), clipStart: Number(s.dataset.clipStart || 0),
        playingAt: Number(s.dataset.playingAt || 0), time: v.currentTime, paused: v.paused,
        recording: !document.getElementById('camera-view-recording').hidden,
        live: !document.getElementById('camera-view-picture').hidden,
        note: document.getElementById('timeline-note').textContent,
        title: document.getElementById('timeline-day').textContent};"""
CLICK_AT = """const bar = document.getElementById('timeline-bar');
const s = document.getElementById('camera-timeline').dataset;
const r = bar.getBoundingClientRect();
const f = (arguments[0] - Number(s.viewStart)) / (Number(s.viewEnd) - Number(s.viewStart));
bar.dispatchEvent(new MouseEvent('click', {clientX: r.left + f * r.width, clientY: r.top + r.height / 2,
                                           bubbles: true}));"""
EVENTS = """return {count: document.getElementById('events-count').textContent,
        ids: [...document.querySelectorAll('#events li')].map((li) => li.dataset.id),
        marks: Object.fromEntries([...document.querySelectorAll('#events li')].map(
          (li) => [li.dataset.id, li.querySelector('.marks').textContent])),
        newer: document.getElementById('events-newer').disabled,
        older: document.getElementById('events-older').disabled,
        said: document.getElementById('events-action-note').textContent};"""
ACT = """const li = document.querySelector(`#events li[data-id="${arguments[0]}"]`);
li.querySelector(`button[data-action="${arguments[1]}"]`).click();"""
SET = """const input = document.getElementById(arguments[0]);
input.value = arguments[1];
input.dispatchEvent(new Event('change'));"""
LOCAL = """const d = new Date(arguments[0] * 1000);
return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19);"""


def stored_events(store: Path, start: float) -> None:
    """`STORED` ended events of camera `porch` from `start`, 5 s apart (odd ones people, even ones cars, every third
    in zone `door`), written with the store's own API before serve opens it."""
    make_private_dirs(store)
    events = EventStore(store / "events.db", say=lambda line: None)
    try:
        for i in range(STORED):
            at = start + 5 * i
            label, zones = ("person" if i % 2 else "car"), (("door",) if i % 3 == 0 else ())
            events.record([object_event("new", f"porch-{i:02d}", at, camera="porch", label=label, zones=zones),
                           object_event("end", f"porch-{i:02d}", at, camera="porch", label=label, zones=zones,
                                        end=at + 3)])
    finally:
        events.close()


def today_start() -> float:
    return datetime.datetime.now().replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


def recording_config(store: Path, url: str) -> str:
    """serve's config: the token, the store, camera `gate` at `url` recording continuously."""
    return "\n".join(('[http]', 'listen = "127.0.0.1:0"', f'token = "{TOKEN}"', '[storage]', f'path = "{store}"',
                      '[defaults]', 'model = "face"', 'detect_fps = 5', '[cameras.gate]', f'url = "{url}"',
                      'record = "continuous"', ''))


@pytest.fixture(scope="module")
def recording(can_browse, tmp_path_factory, face_model_path):  # noqa: F811
    """serve with `[http] token` and camera `gate` recording continuously a paced HTTP live stream (a keyframe a
    second), its store holding the `porch` events of today; once it has 12 s of segments. (serve, the first stored
    event's start)"""
    folder = tmp_path_factory.mktemp("timeline")
    first = max(today_start() + 1, datetime.datetime.now().timestamp() - 600)
    stored_events(folder / "store", first)
    clip = make_ts_clip(folder / "gate.ts", seconds=40, fps=FPS, keyint=int(FPS * KEYINT_S))
    with contextlib.ExitStack() as stack:
        source = LiveServer(clip, "http", lifetime=600, loops=15)
        stack.callback(source.stop)
        serve = Serve(folder, recording_config(folder / "store", source.url))
        stack.callback(serve.kill)
        serve.started()
        wait_until(lambda: recorded(serve) >= 12.0, 90, "12 s of segments")
        yield serve, first


def api(serve: Serve, path: str) -> tuple[int, dict]:
    """(status, JSON) of a GET with the token."""
    request = urllib.request.Request(f"http://{serve.address}{path}", headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def recorded(serve: Serve) -> float:
    segments = api(serve, "/api/cameras/gate/recordings")[1]["segments"]
    return segments[-1]["end"] - segments[0]["start"] if segments else 0.0


def log_in(driver, serve: Serve) -> None:
    driver.get(f"http://{serve.address}/")
    wait_until(lambda: driver.execute_script(LOG_IN, TOKEN), 15, "the token form, filled in")
    wait_until(lambda: driver.execute_script("return document.querySelector('#cameras li') !== null"), 15,
               "the cameras shown")


def test_the_timeline_shows_the_days_segments_and_a_click_plays_the_recording_from_then(recording, browser):  # noqa: F811
    serve, _ = recording
    log_in(browser, serve)
    browser.execute_script("document.querySelector('.picture[data-camera=\"gate\"]').click()")
    state: dict = {}

    def timeline() -> dict:
        state.update(browser.execute_script(TIMELINE))
        return state

    wait_until(lambda: timeline()["shown"] and state["segments"] >= 2 and state["runs"] >= 1, 30,
               "the day's segments on the bar")
    assert state["camera"] == "gate" and state["title"].startswith("Today, ") and "(times in " in state["title"]
    assert state["day"][0] <= datetime.datetime.now().timestamp() < state["day"][1] and state["live"]
    assert state["view"] == state["day"]
    browser.execute_script(SET, "timeline-zoom", "600")  # 10 minutes around now: a pixel is half a second
    wait_until(lambda: timeline()["view"][1] - state["view"][0] == 600, 5, "the bar zoomed to 10 minutes")
    segments = api(serve, "/api/cameras/gate/recordings")[1]["segments"]
    assert state["view"][0] <= segments[0]["start"] and segments[-1]["end"] <= state["view"][1] + 10
    target = (segments[0]["start"] + segments[-1]["end"]) / 2
    browser.execute_script(CLICK_AT, target)

    wait_until(lambda: timeline()["clipStart"] > 0 and state["time"] > 0 and not state["paused"], 60,
               "the recording playing")
    began = state["time"]
    wait_until(lambda: timeline()["time"] > began + 1.0, 30, "the recording's currentTime advancing by 1 s")
    clicked, start = state["clicked"], state["clipStart"]
    assert abs(clicked - target) < 1.0  # (a pixel of the bar)
    assert clicked - KEYINT_S - 0.1 <= start <= clicked + 0.01  # the export: from the keyframe at or before it
    assert clicked - 0.1 <= state["playingAt"] <= clicked + 30  # played from the clicked time, not the keyframe
    assert state["recording"] and not state["live"] and state["note"].startswith("Recording at ")
    shot(browser, "-timeline")

    browser.execute_script("document.getElementById('timeline-live').click()")
    assert timeline()["live"] and not state["recording"] and state["paused"]
    browser.execute_script("document.getElementById('timeline-previous').click()")
    wait_until(lambda: timeline()["note"] == "Nothing recorded this day.", 15, "yesterday: nothing recorded")
    assert not state["title"].startswith("Today") and state["runs"] == 0
    assert severe(browser, allowed=("status of 401",)) == []  # (before the token was given)


def test_the_events_are_paged_filtered_kept_marked_and_deleted_with_the_token(recording, browser):  # noqa: F811
    serve, first = recording
    log_in(browser, serve)
    browser.execute_script(SET, "filter-camera", "porch")
    state: dict = {}

    def events(count: str) -> bool:
        state.update(browser.execute_script(EVENTS))
        return state["count"] == count

    wait_until(lambda: events(f"{STORED} events (1–50 shown)"), 30, "the first page of porch's events")
    assert state["ids"] == [f"porch-{i:02d}" for i in range(STORED - 1, STORED - 51, -1)]  # newest first
    assert state["newer"] and not state["older"]
    shot(browser, "-events")
    browser.execute_script("document.getElementById('events-older').click()")
    wait_until(lambda: events(f"{STORED} events (51–60 shown)"), 15, "the second page")
    assert state["ids"] == [f"porch-{i:02d}" for i in range(9, -1, -1)] and state["older"] and not state["newer"]
    browser.execute_script("document.getElementById('events-newer').click()")
    wait_until(lambda: events(f"{STORED} events (1–50 shown)"), 15, "the first page again")

    browser.execute_script(SET, "filter-label", "person")
    wait_until(lambda: events("30 events"), 15, "the people")
    browser.execute_script(SET, "filter-zone", "door")
    wait_until(lambda: events("10 events"), 15, "the people in the door zone")  # i odd and a multiple of 3
    browser.execute_script(SET, "filter-after", browser.execute_script(LOCAL, first + 5 * 30 - 1))
    wait_until(lambda: events("5 events"), 15, "those from the 30th on")
    assert state["ids"] == ["porch-57", "porch-51", "porch-45", "porch-39", "porch-33"]
    browser.execute_script(SET, "filter-before", browser.execute_script(LOCAL, first + 5 * 45 - 1))
    wait_until(lambda: events("2 events"), 15, "those from the 30th to before the 45th")
    assert state["ids"] == ["porch-39", "porch-33"]

    browser.execute_script(ACT, "porch-39", "retain")
    wait_until(lambda: events("2 events") and state["marks"].get("porch-39") == "kept", 15, "kept")
    assert api(serve, "/api/events/porch-39")[1]["retain"] is True
    browser.execute_script(ACT, "porch-33", "false_positive")
    wait_until(lambda: events("2 events") and state["marks"].get("porch-33") == "false positive", 15, "marked")
    assert api(serve, "/api/events/porch-33")[1]["false_positive"] is True

    browser.execute_script(ACT, "porch-39", "delete")  # asks first
    assert events("2 events") and "porch-39" in state["ids"]
    browser.execute_script(ACT, "porch-39", "delete-sure")
    wait_until(lambda: events("1 event") and state["ids"] == ["porch-33"], 15, "the event deleted")
    assert state["said"].startswith("Deleted the person on porch at ")
    assert api(serve, "/api/events/porch-39")[0] == 404
    assert api(serve, "/api/events?camera=porch")[1]["total"] == STORED - 1
    assert severe(browser, allowed=("status of 401",)) == []


def test_without_a_token_the_page_says_why_a_change_is_refused_and_shows_line_counts(can_browse, tmp_path, browser,  # noqa: F811
                                                                                   face_model_path):
    clip = tmp_path / "passes.mp4"  # two people walking across, one after the other, as in test_serve_page
    write_passes_clip(clip, passes=2, walk_s=2.5, gap_s=2.0, fps=15, width=480, height=270)
    serve = Serve(tmp_path, f'[http]\nlisten = "127.0.0.1:0"\n[storage]\npath = "{tmp_path / "store"}"\n'
                            f'[defaults]\nmodel = "face"\ndetect_fps = 5\n[cameras.desk]\nurl = "{clip}"\nloop = true\n'
                            '[cameras.desk.lines.middle]\npoints = [0.5, 0, 0.5, 1]\n')
    try:
        serve.started()
        browser.get(f"http://{serve.address}/")
        lines = "return [...document.querySelectorAll('#cameras li[data-camera=\"desk\"] .lines li')]" \
                ".map((li) => [li.dataset.line, li.textContent]);"
        wait_until(lambda: browser.execute_script(lines), 60, "a crossing of the line counted")
        (name, text), = browser.execute_script(lines)
        counted = serve.cameras()["desk"]["lines"]["middle"]
        assert name == "middle" and text.startswith("middle: in ") and " · out " in text
        assert any(f"{n} face" in text for n in [*counted["in"].values(), *counted["out"].values()])

        state: dict = {}
        wait_until(lambda: state.update(browser.execute_script(EVENTS)) or state["ids"], 60, "an event listed")
        event = state["ids"][-1]
        browser.execute_script(ACT, event, "delete")
        browser.execute_script(ACT, event, "delete-sure")
        wait_until(lambda: state.update(browser.execute_script(EVENTS)) or state["said"], 15, "the refusal said")
        assert state["said"] == ("Not changed: changing an event needs a token, on the loopback too: set [http] token "
                                 "(allow_anonymous does not apply to changes)")
        assert event in browser.execute_script(EVENTS)["ids"] and serve.get(f"/api/events/{event}")[0] == 200
        assert severe(browser, allowed=("status of 403",)) == []
    finally:
        serve.kill()
