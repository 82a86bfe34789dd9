// zerocopy serve's page (docs/serve.md, "The page"): every camera's live video (live.js; its latest picture where
// the video cannot be played), state, path and line counts, large on a click with its timeline (timeline.js); the
// stored events (events.js), an event's snapshot and clip (detail.js). Plain JS, no build step, no outside URL.
// This file holds the token, the API and the cameras, and gives the other parts `page`: what they need of it.
//
// The token: when the server answers 401, the page asks for it (a small form), keeps it in sessionStorage (this
// tab only) and sends it as `Authorization: Bearer` on every fetch(); pictures and clips are shown from the
// fetched blobs (object URLs), so the header applies to them too. A 401 later brings the form back; so does a
// change (which needs the token even where reading does not) refused for want of one.
"use strict";

(() => {
  const TOKEN_KEY = "zerocopy-token";
  const PICTURE_EVERY_MS = 1000; // each camera's latest.jpg: asked again 1 s after the previous was asked...
  const MIN_GAP_MS = 250; // ...or this long after it ended, when it took longer: requests never pile up
  const CAMERAS_EVERY_MS = 2000;
  const MISSING_RETRY_MS = 10000; // a picture the server says it does not have (404): asked again after this
  const LIVE_AGAIN_MS = 2000; // a live video that ended (a reconnection, a slow network) is opened again after this
  const BOXES_EVERY_MS = 1000; // the open objects of each camera playing live, asked again after this
  const BOXES_LIMIT = 20;
  const MAX_LIVE = 3; // live videos at once: each holds one of the browser's 6 HTTP/1.1 connections to serve for
  // as long as it plays, so more would leave none for the API, the pictures and the other tiles
  const CROWDED = `live video on ${MAX_LIVE} cameras at once: open this camera to watch it live`;
  const LIVE_PICTURE_EVERY_MS = 5000; // while the video plays, the latest picture (hidden: the detect frame's size,
  // and what shows if the video stops) is asked for less often

  const $ = (id) => document.getElementById(id);
  const view = {
    status: $("status"), forget: $("forget"), login: $("login"), token: $("token"), loginError: $("login-error"),
    main: $("main"), tiles: $("cameras"), camerasNote: $("cameras-note"), camera: $("camera-view"),
  };
  const live = window.zerocopyLive;
  const { el, arrange, show, clock } = window.zerocopyCommon;

  let generation = 0; // bumped to stop every loop (a 401, a new token); a loop ends when it sees a newer one
  const tiles = new Map(); // camera name → its tile
  let wakeBoxes = () => {};

  class Unauthorised extends Error {}

  // ---- the API, with the token ----

  async function get(path, signal) {
    return request(path, { signal });
  }

  // A change (`method`: DELETE, POST) with `body` as JSON; its answer, whatever its status but 401.
  async function send(method, path, body) {
    const headers = body === undefined ? {} : { "Content-Type": "application/json" };
    return request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) },
                   "Changing an event needs the server's token.");
  }

  async function request(path, options, needed = "") {
    const mine = generation;
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = { ...(options.headers || {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) };
    // credentials "omit": the browser adds no credentials of its own, and a 401's Basic challenge does not open
    // its login dialog (the page asks instead)
    const answer = await fetch(path, { ...options, headers, credentials: "omit", cache: "no-store" });
    if (answer.status === 401) {
      if (mine === generation) askToken(token ? "That token was refused." : needed);
      throw new Unauthorised();
    }
    return answer;
  }

  async function json(path) {
    const answer = await get(path);
    if (!answer.ok) throw new Error(`${path}: ${answer.status} ${await reason(answer)}`);
    return answer.json();
  }

  async function reason(answer) {
    try {
      return (await answer.json()).error || answer.statusText;
    } catch {
      return answer.statusText;
    }
  }

  // A blob's object URL for `path`, or the answer that was not 200 (`{status, error}`).
  async function blobUrl(path) {
    const answer = await get(path);
    if (!answer.ok) return { status: answer.status, error: await reason(answer) };
    return { url: URL.createObjectURL(await answer.blob()) };
  }

  // ---- the token ----

  function askToken(message) {
    generation += 1;
    for (const tile of tiles.values()) stopLive(tile);
    if (view.camera.open) view.camera.close();
    sessionStorage.removeItem(TOKEN_KEY);
    detail.close();
    view.main.hidden = true;
    view.forget.hidden = true;
    view.login.hidden = false;
    view.loginError.textContent = message;
    view.status.textContent = "a token is needed";
    view.token.value = "";
    view.token.focus();
  }

  view.login.addEventListener("submit", (e) => {
    e.preventDefault();
    const token = view.token.value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    view.login.hidden = true;
    start();
  });

  view.forget.addEventListener("click", () => askToken(""));

  // ---- loops that never pile up requests ----

  function whenVisible() {
    if (!document.hidden) return Promise.resolve();
    return new Promise((done) => document.addEventListener("visibilitychange", function on() {
      if (!document.hidden) {
        document.removeEventListener("visibilitychange", on);
        done();
      }
    }));
  }

  // Runs `step` again and again, the next run `every` ms after the previous began (at least MIN_GAP_MS after it
  // ended), until the generation changes or `step` returns false (a number: wait that long instead). Returns a
  // function that starts the next run at once.
  function loop(every, step) {
    const mine = generation;
    let wake = null;
    let kicked = false;
    (async () => {
      while (mine === generation) {
        await whenVisible();
        kicked = false;
        const began = performance.now();
        let next = every;
        try {
          const said = await step(mine);
          if (said === false || mine !== generation) return;
          if (typeof said === "number") next = said;
        } catch (e) {
          if (e instanceof Unauthorised) return;
          trouble(e);
        }
        if (kicked) continue;
        await new Promise((done) => {
          const timer = setTimeout(done, Math.max(MIN_GAP_MS, next - (performance.now() - began)));
          wake = () => { clearTimeout(timer); done(); };
        });
        wake = null;
      }
    })();
    return () => { kicked = true; if (wake) wake(); };
  }

  function trouble(e) {
    view.status.textContent = e instanceof TypeError ? "cannot reach the server; trying again" : String(e.message || e);
    view.status.classList.add("bad");
  }

  function fine() {
    view.status.textContent = `updated ${clock(Date.now() / 1000)}`;
    view.status.classList.remove("bad");
  }

  // ---- cameras ----

  async function camerasStep(mine) {
    const cameras = await json("api/cameras");
    if (mine !== generation) return false;
    fine();
    const names = new Set(cameras.map((c) => c.name));
    for (const [name, tile] of tiles) {
      if (!names.has(name)) {
        tile.gone = true;
        stopLive(tile);
        tile.li.remove();
        tiles.delete(name);
      }
    }
    for (const camera of cameras) {
      let tile = tiles.get(camera.name);
      if (!tile) {
        tile = makeTile(camera.name);
        tiles.set(camera.name, tile);
        loop(PICTURE_EVERY_MS, () => pictureStep(tile));
      }
      showCamera(tile, camera);
      events.learn({ camera: camera.name, labels: Object.keys(camera.objects || {}),
                     zones: Object.keys(camera.zones || {}) });
    }
    arrange(view.tiles, cameras.map((c) => tiles.get(c.name).li)); // in the server's order
    shareLive();
    view.camerasNote.hidden = cameras.length > 0;
    view.camerasNote.textContent = "No camera is configured.";
  }

  function makeTile(name) {
    const li = el("li", "tile");
    li.dataset.camera = name;
    const picture = el("div", "picture empty");
    picture.dataset.camera = name; // (it moves into the large view and back)
    picture.tabIndex = 0;
    picture.setAttribute("role", "button");
    picture.setAttribute("aria-label", `${name}: open it large`);
    const img = el("img");
    img.alt = `${name}: the latest picture, objects boxed`;
    const video = el("video");
    video.muted = true;
    video.playsInline = true;
    video.hidden = true;
    video.setAttribute("aria-label", `${name}: live video`);
    const boxes = el("div", "boxes");
    const missing = el("p", "missing", "no picture yet");
    picture.append(img, video, boxes, missing);
    const head = el("div", "tile-head");
    const title = el("h3", "", name);
    const badge = el("span", "badge");
    head.append(title, badge);
    const meta = el("p", "meta");
    const lines = el("ul", "lines");
    lines.setAttribute("aria-label", `${name}: line crossings since serve started`);
    const liveNote = el("p", "live-note");
    const error = el("p", "error");
    li.append(picture, head, meta, lines, liveNote, error);
    const tile = { name, li, picture, img, video, boxes, missing, badge, meta, lines, liveNote, error, camera: null,
                   url: null, gone: false, live: { state: "off", again: 0, refused: null, stop: null, objects: [] } };
    picture.addEventListener("click", () => openCamera(tile));
    picture.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        openCamera(tile);
      }
    });
    video.addEventListener("resize", () => drawBoxes(tile));
    return tile;
  }

  function showCamera(tile, camera) {
    tile.camera = camera;
    tile.badge.textContent = camera.state;
    tile.badge.className = `badge state-${camera.state}`;
    const parts = [camera.path ? `${camera.path} path` : "no path yet", `${Number(camera.fps || 0).toFixed(1)} fps`];
    const zones = Object.keys(camera.zones || {}).length;
    const lines = Object.keys(camera.lines || {}).length;
    if (zones) parts.push(`${zones} zone${zones === 1 ? "" : "s"}`);
    if (lines) parts.push(`${lines} line${lines === 1 ? "" : "s"}`);
    if (camera.motion && camera.motion.measured) parts.push(camera.motion.active ? "motion" : "still");
    if (camera.recording && camera.recording.recording) parts.push("recording");
    tile.meta.textContent = parts.join(" · ");
    showLines(tile.lines, camera.lines || {});
    tile.error.textContent = camera.error || "";
    if (cameraView.tile === tile) showLarge(tile);
  }

  // Each line's crossings since serve started, in and out, per label: "door: in 3 person, 1 car · out 2 person".
  function showLines(list, lines) {
    const counts = (byLabel) => Object.entries(byLabel || {}).map(([label, n]) => `${n} ${label}`).join(", ") || "0";
    const said = Object.entries(lines).map(([name, ways]) => [name, `${name}: in ${counts(ways.in)} · out ${counts(
      ways.out)}`]);
    const now = said.map(([, text]) => text).join("\n");
    if (list.dataset.said === now) return;
    list.dataset.said = now;
    list.replaceChildren(...said.map(([name, text]) => {
      const item = el("li", "", text);
      item.dataset.line = name;
      return item;
    }));
    list.hidden = !said.length;
  }

  async function pictureStep(tile) {
    if (tile.gone) return false;
    if (!tile.camera || tile.camera.last_frame_time == null) return undefined; // no frame yet: nothing to ask
    const got = await blobUrl(`api/cameras/${encodeURIComponent(tile.name)}/latest.jpg`);
    if (got.url === undefined) {
      tile.missing.textContent = got.error;
      tile.picture.classList.add("empty");
      return got.status === 404 ? MISSING_RETRY_MS : undefined;
    }
    await show(tile.img, got.url);
    if (tile.url) URL.revokeObjectURL(tile.url);
    tile.url = got.url;
    tile.picture.classList.remove("empty");
    drawBoxes(tile); // (the picture's size is the detect frame's: the boxes' scale)
    return tile.live.state === "playing" ? LIVE_PICTURE_EVERY_MS : undefined;
  }

  // ---- live video ----

  // Whether the tile's camera records, in a codec the page was not refused.
  function wantsLive(tile) {
    const recording = tile.camera && tile.camera.recording;
    if (tile.gone || !recording || !recording.recording) return false;
    return tile.live.refused === null || tile.live.refused !== recording.codec;
  }

  // Gives the MAX_LIVE live videos to the camera open large and then to the first tiles in the server's order;
  // the others' videos are stopped (first, to free their connections) and their tiles show pictures.
  function shareLive() {
    const order = [...view.tiles.children].map((li) => tiles.get(li.dataset.camera)).filter((t) => t && wantsLive(t));
    const large = cameraView.tile && wantsLive(cameraView.tile) ? [cameraView.tile] : [];
    const chosen = new Set([...large, ...order.filter((t) => t !== cameraView.tile)].slice(0, MAX_LIVE));
    for (const tile of order) {
      if (chosen.has(tile)) continue;
      stopLive(tile);
      if (window.MediaSource) tile.liveNote.textContent = CROWDED;
    }
    for (const tile of chosen) considerLive(tile);
  }

  // Opens the camera's live video unless it is playing or ended less than LIVE_AGAIN_MS ago (not when stopped).
  function considerLive(tile) {
    const state = tile.live;
    if (state.state !== "off" || performance.now() < state.again) return;
    if (tile.liveNote.textContent === CROWDED) tile.liveNote.textContent = "";
    const can = window.MediaSource ? null : live.playable("");
    if (can) {
      tile.liveNote.textContent = `no live video: ${can.why}; showing pictures`;
      return;
    }
    playLive(tile, generation);
  }

  async function playLive(tile, mine) {
    const state = tile.live;
    const controller = new AbortController();
    state.state = "opening";
    state.stop = () => controller.abort();
    let why = "";
    let wait = LIVE_AGAIN_MS;
    try {
      const answer = await get(`api/cameras/${encodeURIComponent(tile.name)}/live.mp4`, controller.signal);
      if (!answer.ok) {
        why = await reason(answer);
        wait = Math.max(LIVE_AGAIN_MS, 1000 * Number(answer.headers.get("retry-after") || 10));
        if (answer.status === 404) state.refused = tile.camera.recording.codec; // until its codec changes
        return;
      }
      const codecs = live.codecsOf(answer.headers.get("content-type"));
      const can = live.playable(codecs);
      if (!can.ok) {
        controller.abort();
        state.refused = tile.camera.recording.codec;
        why = can.why;
        return;
      }
      tile.liveNote.textContent = "live video: starting…";
      why = await live.play(tile.video, answer, codecs, controller.signal, () => {
        if (mine !== generation || tile.gone) return;
        state.state = "playing";
        tile.video.hidden = false;
        tile.img.hidden = true;
        tile.picture.classList.remove("empty");
        tile.liveNote.textContent = `live video (${live.codecName(codecs)})`;
        wakeBoxes();
      });
    } catch (e) {
      if (e instanceof Unauthorised) return;
      why = controller.signal.aborted ? "stopped" : String(e.message || e);
    } finally {
      state.state = "off";
      state.stop = null;
      state.again = why === "stopped" ? 0 : performance.now() + wait;
      state.objects = [];
      tile.video.hidden = true;
      tile.img.hidden = false;
      tile.boxes.replaceChildren();
      if (why && why !== "stopped") tile.liveNote.textContent = `no live video: ${why}; showing pictures`;
    }
  }

  function stopLive(tile) {
    if (tile.live.stop) tile.live.stop();
  }

  // The open objects of each camera playing live (its newest events that have not ended), drawn over its video.
  async function boxesStep(mine) {
    const playing = [...tiles.values()].filter((t) => t.live.state === "playing");
    for (const tile of playing) {
      const answer = await get(`api/events?camera=${encodeURIComponent(tile.name)}&limit=${BOXES_LIMIT}`);
      if (mine !== generation) return false;
      if (answer.status === 404) return false; // no event store: no boxes
      if (!answer.ok) continue;
      const found = await answer.json();
      const events = Array.isArray(found) ? found : found.events || [];
      tile.live.objects = events.filter((e) => e.end_time == null)
        .map((e) => ({ label: e.label, box: (e.last_event && e.last_event.box) || e.box }))
        .filter((o) => Array.isArray(o.box) && o.box.length === 4);
      drawBoxes(tile);
    }
    return playing.length ? undefined : BOXES_EVERY_MS * 5;
  }

  function drawBoxes(tile) {
    if (tile.live.state !== "playing") return;
    const detect = tile.img.naturalWidth ? { width: tile.img.naturalWidth, height: tile.img.naturalHeight } : null;
    live.drawBoxes(tile.boxes, tile.picture, tile.video, tile.live.objects, detect);
  }

  window.addEventListener("resize", () => { for (const tile of tiles.values()) drawBoxes(tile); });

  // ---- a camera, large ----

  // A tile's picture (its live video, or its latest picture) moved into the dialog, and back when it closes.
  // "zerocopy:camera-open" carries the camera's name and the dialog's timeline section (timeline.js draws the
  // camera's day there); "zerocopy:camera-close" follows.
  const cameraView = {
    title: $("camera-view-title"), slot: $("camera-view-picture"), meta: $("camera-view-meta"),
    lines: $("camera-view-lines"), timeline: $("camera-timeline"), tile: null,
  };

  function showLarge(tile) {
    cameraView.meta.textContent = tile.meta.textContent;
    cameraView.lines.textContent = [...tile.lines.children].map((li) => li.textContent).join("; ");
    cameraView.lines.hidden = !tile.lines.children.length;
  }

  function openCamera(tile) {
    if (cameraView.tile) return; // (a click on the picture while it is large)
    cameraView.tile = tile;
    cameraView.title.textContent = tile.name;
    showLarge(tile);
    cameraView.slot.append(tile.picture);
    tile.picture.classList.add("large");
    if (tile.live.state === "playing") tile.video.play().catch(() => {});
    view.camera.showModal();
    shareLive(); // (its live video, at once)
    drawBoxes(tile);
    document.dispatchEvent(new CustomEvent("zerocopy:camera-open",
                                           { detail: { camera: tile.name, timeline: cameraView.timeline } }));
  }

  function closeCamera() {
    const tile = cameraView.tile;
    if (!tile) return;
    cameraView.tile = null;
    tile.picture.classList.remove("large");
    tile.li.prepend(tile.picture);
    if (tile.live.state === "playing") tile.video.play().catch(() => {});
    drawBoxes(tile);
    shareLive(); // (the first tiles' live videos again)
    document.dispatchEvent(new CustomEvent("zerocopy:camera-close", { detail: { camera: tile.name } }));
    tile.picture.focus();
  }

  $("camera-view-close").addEventListener("click", () => view.camera.close());
  view.camera.addEventListener("close", () => closeCamera());
  view.camera.addEventListener("click", (e) => { if (e.target === view.camera) view.camera.close(); });

  // ---- the other parts ----

  const page = { get, json, reason, blobUrl, send, loop, Unauthorised, tiles,
                 current: (mine) => mine === generation, openDetail: (e, opener) => detail.open(e, opener) };
  const detail = window.zerocopyDetail(page);
  const events = window.zerocopyEvents(page);
  window.zerocopyTimeline(page);

  // ---- start ----

  function start() {
    generation += 1;
    view.main.hidden = false;
    view.forget.hidden = !sessionStorage.getItem(TOKEN_KEY);
    view.status.textContent = "connecting…";
    for (const tile of tiles.values()) {
      tile.gone = true;
      stopLive(tile);
    }
    tiles.clear();
    view.tiles.replaceChildren();
    loop(CAMERAS_EVERY_MS, camerasStep);
    events.start();
    wakeBoxes = loop(BOXES_EVERY_MS, boxesStep);
  }

  start();
})();
