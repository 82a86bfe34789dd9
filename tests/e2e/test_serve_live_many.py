"""Many recording cameras on serve's page (docs/serve.md, *Live video*): a browser keeps 6 HTTP/1.1 connections to
serve and each live video holds one for as long as it plays, so the page plays at most 3 at once. With 8 looped
recording cameras in headless Chromium, at most 3 tiles play live, the others keep their pictures and say why, the
page's state keeps coming (its "updated" time moves: /api/cameras answers), and the 8th camera opened large plays
live."""

from __future__ import annotations

import pytest
from conftest import wait_until
from livesource import LiveServer, make_ts_clip
from test_serve import Serve
from test_serve_page import browser, can_browse, severe  # noqa: F401 (fixtures: the page's browser)

pytestmark = [pytest.mark.timeout(180)]

CAMERAS = [f"cam{i}" for i in range(1, 9)]
MAX_LIVE = 3
TILES = """return [...document.querySelectorAll('#cameras li')].map((li) => {
  const picture = document.querySelector(`.picture[data-camera="${li.dataset.camera}"]`);
  const v = picture.querySelector('video'), img = picture.querySelector('img');
  return {name: li.dataset.camera, live: !v.hidden && v.currentTime > 0, time: v.currentTime,
          picture: img.naturalWidth, note: li.querySelector('.live-note').textContent,
          large: document.getElementById('camera-view-picture').contains(v)};
});"""
STATUS = "return document.getElementById('status').textContent"


@pytest.fixture
def many_serve(can_browse, tmp_path, face_model_path):  # noqa: F811
    """serve with 8 recording cameras (320×180), each reading the same looped loopback live stream."""
    with LiveServer(make_ts_clip(tmp_path / "loop.ts", seconds=4.0, keyint=25), "http", lifetime=300,
                    loops=60) as source:
        text = (f'[http]\nlisten = "127.0.0.1:0"\n[storage]\npath = "{tmp_path / "store"}"\n'
                f'[defaults]\nmodel = "face"\ndetect_fps = 1\n')
        text += "".join(f'[cameras.{name}]\nurl = "{source.url}"\n' for name in CAMERAS)
        serve = Serve(tmp_path, text)
        try:
            serve.started()
            serve.until(lambda: all((c.get("recording") or {}).get("recording") and c["state"] == "running"
                                    for c in serve.cameras().values()), 60, "every camera running and recording")
            yield serve
        finally:
            serve.kill()


def test_the_page_plays_at_most_3_live_tiles_keeps_its_state_coming_and_plays_a_camera_opened_large(
        many_serve, browser):  # noqa: F811
    browser.get(f"http://{many_serve.address}/")
    tiles: list[dict] = []

    def seen() -> list[dict]:
        tiles[:] = browser.execute_script(TILES) or []
        assert sum(t["live"] for t in tiles) <= MAX_LIVE, tiles
        return tiles

    wait_until(lambda: len(seen()) == 8 and sum(t["live"] for t in tiles) == MAX_LIVE
               and all(t["picture"] > 0 for t in tiles if not t["live"]), 60,
               f"3 tiles playing live and the 5 others showing their pictures: {tiles}")
    assert [t["name"] for t in tiles if t["live"]] == CAMERAS[:MAX_LIVE]
    assert all(t["note"] == "live video on 3 cameras at once: open this camera to watch it live"
               for t in tiles[MAX_LIVE:])
    for _ in range(2):  # the page's state keeps coming: /api/cameras answers while the videos play
        status = browser.execute_script(STATUS)
        wait_until(lambda before=status: seen() and browser.execute_script(STATUS) != before, 10,
                   f"the page's state updated again (it said {status!r})")
    assert status.startswith("updated ")

    browser.execute_script('document.querySelector(\'#cameras li[data-camera="cam8"] .picture\').click()')
    wait_until(lambda: any(t["name"] == "cam8" and t["live"] and t["large"] for t in seen()), 30,
               f"cam8 playing live, large: {tiles}")
    browser.execute_script("document.getElementById('camera-view-close').click()")
    wait_until(lambda: [t["name"] for t in seen() if t["live"]] == CAMERAS[:MAX_LIVE], 30,
               f"the first 3 tiles playing live again, cam8 back to its pictures: {tiles}")
    assert severe(browser) == []
