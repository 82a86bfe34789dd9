"""serve's page (zerocopy/serve/page/, docs/serve.md *The page*) in a real browser: headless Chromium from Debian's
packages driven by selenium through Debian's chromium-driver (tests/support/browser.py), against a real `zerocopy
serve` on the loopback whose cameras are a looped clip of people walking across (tests/support/passes.py) on the
`face` model. The page loads with no console error, shows every camera with its latest picture, refreshed; a pass
shows in the events list, ended, within 5 s of its end; its thumbnail and snapshot decode and its clip plays. With
`[http] token`, the page asks for it, works once it is given, and asks again when it stops working. And, without a
browser, the page's files as the server sends them.

Outside CI a machine without Chromium, its driver or selenium skips these tests saying which; in CI (`CI=true`)
that is a failure. `ZEROCOPY_PAGE_SHOTS=FOLDER` also saves screenshots there (docs/img/serve-page*.png)."""

from __future__ import annotations

import http.client
import io
import json
import os
from pathlib import Path

import pytest
from browser import chromium, console, missing, viewport
from conftest import wait_until
from passes import write_passes_clip
from PIL import Image
from test_serve import Serve

from zerocopy.serve.http import StatusServer
from zerocopy.serve.http_config import HttpConfig
from zerocopy.serve.page import HERE

# serial: each test times what a person sees (a pass shown within SHOWN_WITHIN_S), in a real browser
pytestmark = [pytest.mark.timeout(180), pytest.mark.serial]

TOKEN = "page-token-5f2c9a7e1b"
SHOTS = os.environ.get("ZEROCOPY_PAGE_SHOTS")
# The promise of the issue (29 §5): a pass shows in the list within 5 s of its end (measured: about 3.5 s, the
# tracker's 2 s `max_lost` and the page's 2 s polling being most of it)
SHOWN_WITHIN_S = 5.0

TILES = """return [...document.querySelectorAll('#cameras li')].map((li) => {
  const img = li.querySelector('img');
  return {name: li.dataset.camera, src: img.src, width: img.naturalWidth, state: li.querySelector('.badge').textContent,
          meta: li.querySelector('.meta').textContent, alt: img.alt};
});"""
EVENTS = """return [...document.querySelectorAll('#events li')].map((li) => ({
  id: li.dataset.id, camera: li.dataset.camera, thumb: li.querySelector('img').naturalWidth}));"""
# When each event in the list is first seen ended (the page's own clock, which is serve's: one machine)
WATCH_ENDS = """window.endedAt = {};
const mark = () => {
  for (const li of document.querySelectorAll('#events li')) {
    const button = li.querySelector('button.event');
    if (button && !button.classList.contains('ongoing') && !(li.dataset.id in window.endedAt)) {
      window.endedAt[li.dataset.id] = Date.now() / 1000;
    }
  }
};
mark();
new MutationObserver(mark).observe(document.getElementById('events'),
                                   {subtree: true, childList: true, attributes: true, characterData: true});
return Date.now() / 1000;"""
DETAIL = """const v = document.getElementById('detail-clip'), img = document.getElementById('detail-snapshot');
return {open: document.getElementById('detail').open, snapshot: img.naturalWidth, time: v.currentTime,
        snapshotNote: document.getElementById('detail-snapshot-note').textContent,
        clipNote: document.getElementById('detail-clip-note').textContent};"""


@pytest.fixture(scope="module")
def can_browse() -> None:
    """Skips (outside CI) or fails (in CI) where the browser cannot be driven, before anything is made."""
    if os.environ.get("ZEROCOPY_IN_VA_ROOT") == "1":  # (scripts/va-stack.sh: the page needs no VA stack)
        pytest.skip(reason="the VA stack root has no browser: the page's tests run on the host (make test)")
    why = missing()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}; CI must run the browser tests")
        pytest.skip(reason=why)


@pytest.fixture
def browser(can_browse):
    driver = chromium(1280, 800)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def passes_clip(can_browse, tmp_path_factory, face_model_path) -> Path:
    """Two people walking across, one after the other: a pass every 4.5 s of the 11 s loop. The face model is
    pulled before serve needs it."""
    path = tmp_path_factory.mktemp("page") / "passes.mp4"
    write_passes_clip(path, passes=2, walk_s=2.5, gap_s=2.0, fps=15, width=480, height=270)
    return path


def config(clip: Path, tmp_path: Path, cameras: tuple[str, ...], token: bool = False) -> str:
    text = '[http]\nlisten = "127.0.0.1:0"\n' + ('token = "${PAGE_TOKEN}"\n' if token else "") + \
        f'[storage]\npath = "{tmp_path / "store"}"\n[defaults]\nmodel = "face"\ndetect_fps = 5\n'
    for name in cameras:
        text += f'[cameras.{name}]\nurl = "{clip}"\nloop = true\n'
        if name == "desk":
            text += '[cameras.desk.zones.left]\npoints = [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]\n'
    return text


def severe(driver, allowed: tuple[str, ...] = ()) -> list[str]:
    """The console's errors since the last call, but those holding one of `allowed`."""
    return [e["message"] for e in console(driver)
            if e["level"] == "SEVERE" and not any(a in e["message"] for a in allowed)]


def shot(driver, name: str) -> None:
    """With `ZEROCOPY_PAGE_SHOTS`, the page as it is now into that folder (256 colours: about 100 KB)."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        picture = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
        picture.quantize(256, Image.Quantize.FASTOCTREE).save(Path(SHOTS) / f"serve-page{name}.png", optimize=True)


def choose(driver, key: str, value: str) -> None:
    """Sets the events' `key` filter to `value` ("": all), as a user does."""
    driver.execute_script("const s = document.getElementById('filter-' + arguments[0]); s.value = arguments[1]; "
                          "s.dispatchEvent(new Event('change'));", key, value)


def shows_every_camera_refreshed(driver, names: set[str]) -> list[dict]:
    """Waits for a tile per camera with its latest picture decoded, then for each picture to be replaced by a newer
    one (the page asks about once a second); the tiles."""
    tiles: list[dict] = []

    def decoded() -> bool:
        tiles[:] = driver.execute_script(TILES)
        return {t["name"] for t in tiles} == names and all(t["width"] > 0 for t in tiles)

    wait_until(decoded, 60, "a tile per camera with its picture decoded")
    first = {t["name"]: t["src"] for t in tiles}
    wait_until(lambda: all(t["src"] != first[t["name"]] and t["width"] > 0 for t in driver.execute_script(TILES)), 15,
               "each camera's picture refreshed")
    assert all(t["src"].startswith("blob:") for t in tiles)  # fetched (with the token, when there is one), then shown
    return tiles


def test_the_page_shows_the_cameras_and_a_pass_with_its_snapshot_and_clip(tmp_path, passes_clip, browser):
    serve = Serve(tmp_path, config(passes_clip, tmp_path, ("desk", "door")))
    try:
        serve.started()
        browser.get(f"http://{serve.address}/")
        tiles = {t["name"]: t for t in shows_every_camera_refreshed(browser, {"desk", "door"})}
        assert tiles["desk"]["state"] == "running" and "software path" in tiles["desk"]["meta"]
        assert tiles["desk"]["alt"] == "desk: the latest picture, objects boxed"

        # a pass that ends while the page is open: in the list, ended, within 5 s of its end
        watching = browser.execute_script(WATCH_ENDS)
        found: dict = {}

        def a_pass_ended() -> bool:
            for ident, at in browser.execute_script("return window.endedAt").items():
                status, _, body = serve.get(f"/api/events/{ident}")
                event = json.loads(body)
                if status == 200 and event["end_time"] is not None and event["end_time"] > watching:
                    found.update(event, shown=at)
                    return True
            return False

        wait_until(a_pass_ended, 40, "a pass that ended while the page was open, in its list")
        late = found["shown"] - found["end_time"]
        assert late <= SHOWN_WITHIN_S, f"shown {late:.1f} s after its end"  # see SHOWN_WITHIN_S
        ident = found["id"]
        # desk's zone, counted once someone was in it
        tiles = {t["name"]: t for t in browser.execute_script(TILES)}
        assert "1 zone" in tiles["desk"]["meta"] and "zone" not in tiles["door"]["meta"]

        # the filters: filled from what was seen, each narrows the list
        options = browser.execute_script("return Object.fromEntries(['camera', 'label', 'zone'].map((k) => [k, "
                                         "[...document.getElementById('filter-' + k).options].map((o) => o.value)]))")
        assert options == {"camera": ["", "desk", "door"], "label": ["", "face"], "zone": ["", "left"]}
        choose(browser, "camera", found["camera"])
        wait_until(lambda: {e["camera"] for e in browser.execute_script(EVENTS)} == {found["camera"]}, 10,
                   "the list of one camera")
        choose(browser, "camera", "")
        wait_until(lambda: {e["camera"] for e in browser.execute_script(EVENTS)} == {"desk", "door"}, 10,
                   "every camera's events again")

        # its thumbnail in the list, its snapshot and clip in the detail: the snapshot its `end` promises, the clip
        # that too or that its camera records
        promised = dict(found["last_event"])
        promised["has_clip"] = promised.get("has_clip") or bool(serve.cameras()[found["camera"]].get("recording"))
        if promised.get("has_snapshot"):
            wait_until(lambda: any(e["id"] == ident and e["thumb"] > 0 for e in browser.execute_script(EVENTS)), 30,
                       "the event's thumbnail decoded")
        if SHOTS:  # a list worth showing
            wait_until(lambda: len(browser.execute_script(EVENTS)) >= 6, 30, "six events in the list")
            shot(browser, "")
        browser.find_element("css selector", f'#events li[data-id="{ident}"] button').click()
        wait_until(lambda: browser.execute_script(DETAIL)["open"], 5, "the event's detail")
        if promised.get("has_snapshot"):
            wait_until(lambda: browser.execute_script(DETAIL)["snapshot"] > 0, 15, "the snapshot decoded")
        else:
            assert browser.execute_script(DETAIL)["snapshotNote"] == "no snapshot"
        if promised["has_clip"]:  # (the page waits for a clip still being recorded: post_capture, then written)
            wait_until(lambda: browser.execute_script(DETAIL)["time"] > 0.3, 60, "the clip playing")
        else:
            assert browser.execute_script(DETAIL)["clipNote"] == "no clip"
        shot(browser, "-event")
        browser.find_element("css selector", "#detail-close").click()
        wait_until(lambda: not browser.execute_script(DETAIL)["open"], 5, "the detail closed")

        if SHOTS:  # as a phone shows it: one column
            viewport(browser, 390, 844, phone=True)
            shot(browser, "-phone")
        assert severe(browser) == []
    finally:
        serve.kill()
    missing = [(what, shown) for flag, what, shown in (
        ("has_snapshot", "snapshots (zerocopy/snapshots/)", "its thumbnail and snapshot"),
        ("has_clip", "clips (zerocopy/record/)", "its clip")) if not promised.get(flag)]
    if missing:  # the rest passed
        pytest.skip(reason=f"serve keeps no {' nor '.join(m[0] for m in missing)} of its events yet (the end of the "
                    "pass promised none, its camera shows no `recording`): the page showing "
                    f"{' nor '.join(m[1] for m in missing)} was not checked")


class NoEngine:
    """A source for the server that has nothing: the page's files need none."""

    latest = True
    storage = None


def ask(address: str, path: str, method: str = "GET", **headers: str) -> tuple[int, list[tuple[str, str]], bytes]:
    host, port = address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(method, path, headers=headers)
        answer = connection.getresponse()
        return answer.status, [(k.lower(), v) for k, v in answer.getheaders()], answer.read()
    finally:
        connection.close()


def test_the_page_files_are_served_without_the_token_cached_but_checked_at_each_use():
    """No browser: the files as the server sends them (one Cache-Control each, the policy, 304 for a tag the browser
    has), the API still needing the token, the Host check still applying."""
    with StatusServer("127.0.0.1:0", NoEngine(), HttpConfig(token=TOKEN)) as server:
        status, headers, body = ask(server.address, "/")
        assert status == 200 and body == (HERE / "index.html").read_bytes()
        fields = dict(headers)
        assert [k for k, _ in headers].count("cache-control") == 1 and fields["cache-control"] == "no-cache"
        assert fields["content-type"] == "text/html; charset=utf-8" and fields["x-content-type-options"] == "nosniff"
        assert fields["content-security-policy"].startswith("default-src 'none'")
        status, headers, body = ask(server.address, "/", **{"If-None-Match": fields["etag"]})
        assert status == 304 and body == b"" and dict(headers)["etag"] == fields["etag"]
        status, headers, body = ask(server.address, "/page/app.js", "HEAD")
        assert status == 200 and body == b"" and dict(headers)["content-type"] == "text/javascript; charset=utf-8"
        assert int(dict(headers)["content-length"]) == len((HERE / "app.js").read_bytes())
        status, headers, _ = ask(server.address, "/api/cameras")
        assert status == 401 and dict(headers)["cache-control"] == "no-store"
        assert ask(server.address, "/", Host="evil.example")[0] == 421


def test_with_a_token_the_page_asks_for_it_and_works_once_it_is_given(tmp_path, passes_clip, browser):
    serve = Serve(tmp_path, config(passes_clip, tmp_path, ("desk",), token=True), env={"PAGE_TOKEN": TOKEN})
    try:
        serve.started()
        assert serve.get("/api/cameras")[0] == 401 and serve.get("/")[0] == 200  # the page's files hold no data
        browser.get(f"http://{serve.address}/")
        form = browser.find_element("css selector", "#login")
        wait_until(form.is_displayed, 15, "the token form")
        assert not browser.find_element("css selector", "#main").is_displayed()
        shot(browser, "-token")

        field = browser.find_element("css selector", "#token")
        field.send_keys("not-the-token-at-all")
        field.submit()
        error = browser.find_element("css selector", "#login-error")
        wait_until(lambda: error.text == "That token was refused." and form.is_displayed(), 15, "the refusal")

        field.send_keys(TOKEN)
        field.submit()
        shows_every_camera_refreshed(browser, {"desk"})
        assert browser.execute_script("return sessionStorage.getItem('zerocopy-token')") == TOKEN
        assert not form.is_displayed()

        # a token that stops working (here: changed in the tab) brings the form back
        browser.execute_script("sessionStorage.setItem('zerocopy-token', 'an-old-token-0000')")
        wait_until(lambda: form.is_displayed() and error.text == "That token was refused.", 15, "the form again")
        # the only errors: the requests refused before a token was given or after it stopped working
        assert severe(browser, allowed=("status of 401",)) == []
    finally:
        serve.kill()
