// zerocopy serve's page (docs/serve.md, "The page"): every camera's live video (live.js; its latest picture where
// the video cannot be played), state and path, large on a click; the stored events, newest first, with filters; an
// event's snapshot and clip. Plain JS, no build step, no outside URL.
//
// The token: when the server answers 401, the page asks for it (a small form), keeps it in sessionStorage (this
// tab only) and sends it as `Authorization: Bearer` on every fetch(); pictures and clips are shown from the
// fetched blobs (object URLs), so the header applies to them too. A 401 later brings the form back.
"use strict";

(() => {
  const TOKEN_KEY = "zerocopy-token";
  const PICTURE_EVERY_MS = 1000; // each camera's latest.jpg: asked again 1 s after the previous was asked...
  const MIN_GAP_MS = 250; // ...or this long after it ended, when it took longer: requests never pile up
  const CAMERAS_EVERY_MS = 2000;
  const EVENTS_EVERY_MS = 2000;
  const EVENTS_LIMIT = 50;
  const MISSING_RETRY_MS = 10000; // a picture the server says it does not have (404): asked again after this
  const DETAIL_EVERY_MS = 2000; // an open event whose snapshot or clip is still being written: asked again...
  const PROMISED_MS = 120000; // ...until it is there, or for this long
  const CLIP_LATE_S = 60; // a recording camera's clip may come this long after its event's end
  const LIVE_AGAIN_MS = 2000; // a live video that ended (a reconnection, a slow network) is opened again after this
  const BOXES_EVERY_MS = 1000; // the open objects of each camera playing live, asked again after this
  const BOXES_LIMIT = 20;
  const LIVE_PICTURE_EVERY_MS = 5000; // while the video plays, the latest picture (hidden: the detect frame's size,
  // and what shows if the video stops) is asked for less often

  const $ = (id) => document.getElementById(id);
  const view = {
    status: $("status"), forget: $("forget"), login: $("login"), token: $("token"), loginError: $("login-error"),
    main: $("main"), tiles: $("cameras"), camerasNote: $("cameras-note"), events: $("events"),
    eventsNote: $("events-note"), detail: $("detail"), camera: $("camera-view"),
  };
  const live = window.zerocopyLive;
  const filters = { camera: $("filter-camera"), label: $("filter-label"), zone: $("filter-zone") };

  let generation = 0; // bumped to stop every loop (a 401, a new token); a loop ends when it sees a newer one
  const tiles = new Map(); // camera name → its tile
  const seen = { camera: new Set(), label: new Set(), zone: new Set() }; // the filters' choices
  const items = new Map(); // event id → its list item
  let wakeEvents = () => {};
  let wakeBoxes = () => {};
  let thumbnails = Promise.resolve(); // the thumbnails to fetch, in turn

  class Unauthorised extends Error {}

  // ---- the API, with the token ----

  async function get(path, signal) {
    const mine = generation;
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    // credentials "omit": the browser adds no credentials of its own, and a 401's Basic challenge does not open
    // its login dialog (the page asks instead)
    const answer = await fetch(path, { headers, credentials: "omit", cache: "no-store", signal });
    if (answer.status === 401) {
      if (mine === generation) askToken(token ? "That token was refused." : "");
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
    closeDetail();
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
      seen.camera.add(camera.name);
      for (const label of Object.keys(camera.objects || {})) seen.label.add(label);
      for (const zone of Object.keys(camera.zones || {})) seen.zone.add(zone);
    }
    arrange(view.tiles, cameras.map((c) => tiles.get(c.name).li)); // in the server's order
    view.camerasNote.hidden = cameras.length > 0;
    view.camerasNote.textContent = "No camera is configured.";
    fillFilters();
  }

  // Puts `nodes` first in `list`, in their order, moving only those out of place (a moved button loses focus).
  function arrange(list, nodes) {
    let at = list.firstChild;
    for (const node of nodes) {
      if (node === at) at = at.nextSibling;
      else list.insertBefore(node, at);
    }
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
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
    const liveNote = el("p", "live-note");
    const error = el("p", "error");
    li.append(picture, head, meta, liveNote, error);
    const tile = { name, li, picture, img, video, boxes, missing, badge, meta, liveNote, error, camera: null,
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
    tile.error.textContent = camera.error || "";
    considerLive(tile);
    if (cameraView.tile === tile) cameraView.meta.textContent = tile.meta.textContent;
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

  async function show(img, url) {
    img.src = url;
    try {
      await img.decode();
    } catch {
      // a picture that does not decode stays blank; the next one replaces it
    }
  }

  // ---- live video ----

  // Opens the camera's live video when it records, unless it is playing, was refused (its codec, until that
  // changes) or ended less than LIVE_AGAIN_MS ago.
  function considerLive(tile) {
    const recording = tile.camera && tile.camera.recording;
    const state = tile.live;
    if (tile.gone || state.state !== "off" || performance.now() < state.again) return;
    if (!recording || !recording.recording) return;
    if (state.refused !== null && state.refused === recording.codec) return;
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
      state.again = performance.now() + wait;
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

  // A tile's picture (its live video, or its latest picture) moved into the dialog, and back when it closes. The
  // timeline (issue 38, item 4) hooks in here: "zerocopy:camera-open" carries the camera's name and the dialog's
  // (hidden, empty) timeline section; "zerocopy:camera-close" follows.
  const cameraView = {
    title: $("camera-view-title"), slot: $("camera-view-picture"), meta: $("camera-view-meta"),
    timeline: $("camera-timeline"), tile: null,
  };

  function openCamera(tile) {
    if (cameraView.tile) return; // (a click on the picture while it is large)
    cameraView.tile = tile;
    cameraView.title.textContent = tile.name;
    cameraView.meta.textContent = tile.meta.textContent;
    cameraView.slot.append(tile.picture);
    tile.picture.classList.add("large");
    if (tile.live.state === "playing") tile.video.play().catch(() => {});
    view.camera.showModal();
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
    document.dispatchEvent(new CustomEvent("zerocopy:camera-close", { detail: { camera: tile.name } }));
    tile.picture.focus();
  }

  $("camera-view-close").addEventListener("click", () => view.camera.close());
  view.camera.addEventListener("close", () => closeCamera());
  view.camera.addEventListener("click", (e) => { if (e.target === view.camera) view.camera.close(); });

  // ---- events ----

  async function eventsStep(mine) {
    const asked = filtersQuery();
    const answer = await get(`api/events?${asked}`);
    if (mine !== generation) return false;
    if (answer.status === 404) {
      note(view.eventsNote, "This server keeps no events (it has no event store).");
      showEvents([]);
      return false;
    }
    if (!answer.ok) throw new Error(`api/events: ${answer.status} ${await reason(answer)}`);
    const found = await answer.json();
    if (mine !== generation || asked !== filtersQuery()) return undefined; // stale: the next pass shows them
    const events = Array.isArray(found) ? found : found.events || [];
    for (const e of events) {
      seen.camera.add(e.camera);
      seen.label.add(e.label);
      for (const zone of e.zones || []) seen.zone.add(zone);
    }
    fillFilters();
    const filtered = Object.values(filters).some((s) => s.value);
    note(view.eventsNote, events.length ? "" : filtered ? "No event matches these filters." : "No event yet.");
    showEvents(events);
    return undefined;
  }

  function filtersQuery() {
    const query = new URLSearchParams({ limit: String(EVENTS_LIMIT) });
    for (const [key, select] of Object.entries(filters)) if (select.value) query.set(key, select.value);
    return query.toString();
  }

  function note(node, text) {
    node.textContent = text;
    node.hidden = !text;
  }

  function fillFilters() {
    for (const [key, select] of Object.entries(filters)) {
      const have = new Set([...select.options].map((o) => o.value));
      const values = [...seen[key]].filter((v) => v && !have.has(v));
      if (!values.length) continue;
      const all = [...seen[key]].filter(Boolean).sort();
      const chosen = select.value;
      select.replaceChildren(new Option("all", ""), ...all.map((v) => new Option(v, v)));
      select.value = chosen;
    }
  }

  for (const select of Object.values(filters)) select.addEventListener("change", () => wakeEvents());

  function showEvents(events) {
    const keep = new Set();
    for (const e of events) {
      keep.add(e.id);
      let item = items.get(e.id);
      if (!item) {
        item = makeItem(e);
        items.set(e.id, item);
      }
      showItem(item, e);
    }
    arrange(view.events, events.map((e) => items.get(e.id).li)); // newest first, as the server sends them
    for (const [id, item] of items) {
      if (!keep.has(id)) {
        item.li.remove();
        if (item.thumbUrl) URL.revokeObjectURL(item.thumbUrl);
        items.delete(id);
      }
    }
  }

  function makeItem(e) {
    const li = el("li");
    const button = el("button", "event");
    button.type = "button";
    button.dataset.id = e.id;
    const thumb = el("span", "thumb empty");
    const img = el("img");
    img.alt = ""; // the button's text says what it shows
    thumb.append(img);
    const text = el("span", "event-text");
    const what = el("span", "what");
    const when = el("time", "when");
    const zones = el("span", "zones");
    const length = el("span", "length");
    text.append(what, when, zones, length);
    button.append(thumb, text);
    li.append(button);
    const item = { li, button, thumb, img, what, when, zones, length, event: e, thumbUrl: null, thumbFor: null };
    button.addEventListener("click", () => openDetail(item));
    return item;
  }

  function showItem(item, e) {
    item.event = e;
    item.li.dataset.id = e.id;
    item.li.dataset.camera = e.camera;
    item.what.textContent = `${e.label} on ${e.camera}`;
    item.when.textContent = clock(e.start_time);
    item.when.dateTime = new Date(e.start_time * 1000).toISOString();
    item.zones.textContent = (e.zones || []).length ? `in ${e.zones.join(", ")}` : "";
    item.length.textContent = e.end_time == null ? "going on" : seconds(e.end_time - e.start_time);
    item.button.classList.toggle("ongoing", e.end_time == null);
    // the thumbnail: asked once it exists, and again when the event ends (its best picture is final then)
    const want = (e.has_thumbnail ?? e.has_snapshot) ? `${e.end_time != null}` : null;
    if (want !== null && item.thumbFor !== want) {
      item.thumbFor = want;
      thumbnails = thumbnails.then(() => loadThumbnail(item)); // one at a time: the pictures go on meanwhile
    }
  }

  async function loadThumbnail(item) {
    if (items.get(item.event.id) !== item) return;
    const got = await blobUrl(`api/events/${encodeURIComponent(item.event.id)}/thumbnail.jpg`).catch(() => ({}));
    if (got.url === undefined) {
      item.thumbFor = null; // asked again at the next pass
      return;
    }
    await show(item.img, got.url);
    if (item.thumbUrl) URL.revokeObjectURL(item.thumbUrl);
    item.thumbUrl = got.url;
    item.thumb.classList.remove("empty");
    if (!items.has(item.event.id)) URL.revokeObjectURL(got.url);
  }

  // ---- an event's detail: its snapshot and clip ----

  const detail = {
    title: $("detail-title"), meta: $("detail-meta"), img: $("detail-snapshot"), imgNote: $("detail-snapshot-note"),
    video: $("detail-clip"), videoNote: $("detail-clip-note"), urls: [], opener: null, shown: 0,
  };

  // Shows the event's snapshot and plays its clip. A file still being written is waited for, asking about the event
  // every DETAIL_EVERY_MS, for at most PROMISED_MS: one its last event promises (`has_snapshot`, `has_clip`), or the
  // clip of an event of a recording camera that is going on or ended within CLIP_LATE_S (its last seconds are
  // recorded after its end).
  async function openDetail(item) {
    release();
    let e = item.event;
    const shown = ++detail.shown;
    detail.opener = item.button;
    detail.title.textContent = `${e.label} on ${e.camera}`;
    const parts = [`${clock(e.start_time)}`, e.end_time == null ? "going on" : seconds(e.end_time - e.start_time)];
    if ((e.zones || []).length) parts.push(`zones: ${e.zones.join(", ")}`);
    if (e.top_score != null) parts.push(`best score ${Number(e.top_score).toFixed(2)}`);
    detail.meta.textContent = parts.join(" · ");
    detail.img.hidden = true;
    detail.img.alt = `snapshot of the ${e.label} on ${e.camera} at ${clock(e.start_time)}`;
    detail.video.hidden = true;
    const tile = tiles.get(e.camera);
    const records = Boolean(tile && tile.camera && tile.camera.recording);
    const recent = e.end_time == null || Date.now() / 1000 - e.end_time < CLIP_LATE_S;
    const promised = { ...(e.last_event || {}) };
    promised.has_clip = Boolean(promised.has_clip || (records && recent));
    detail.imgNote.textContent = e.has_snapshot ? "loading the snapshot…"
      : promised.has_snapshot ? "the snapshot is being written…" : "no snapshot";
    note(detail.videoNote, e.has_clip ? "loading the clip…"
      : promised.has_clip ? "the clip is being recorded…" : "no clip");
    if (!view.detail.open) view.detail.showModal();
    const id = encodeURIComponent(e.id);
    const until = performance.now() + PROMISED_MS;
    let snapshot = false;
    let clip = false;
    for (;;) {
      if (e.has_snapshot && !snapshot) snapshot = await showSnapshot(id, shown);
      if (e.has_clip && !clip) clip = await playClip(id, shown);
      const waiting = (!snapshot && promised.has_snapshot) || (!clip && promised.has_clip);
      if (shown !== detail.shown || !waiting) return;
      if (performance.now() > until) {
        if (!snapshot && promised.has_snapshot) detail.imgNote.textContent = "no snapshot (it was not written)";
        if (!clip && promised.has_clip) note(detail.videoNote, "no clip (it was not recorded)");
        return;
      }
      await new Promise((done) => setTimeout(done, DETAIL_EVERY_MS));
      if (shown !== detail.shown) return;
      try {
        e = await json(`api/events/${id}`);
      } catch {
        // asked again at the next turn (a 401 brings the form back and closes this)
      }
    }
  }

  async function showSnapshot(id, shown) {
    const got = await blobUrl(`api/events/${id}/snapshot.jpg`).catch(() => ({ error: "cannot reach the server" }));
    if (shown !== detail.shown) return drop(got);
    if (!got.url) {
      detail.imgNote.textContent = `no snapshot: ${got.error}`;
      return true;
    }
    detail.urls.push(got.url);
    await show(detail.img, got.url);
    detail.img.hidden = false;
    detail.imgNote.textContent = "snapshot";
    return true;
  }

  async function playClip(id, shown) {
    const got = await blobUrl(`api/events/${id}/clip.mp4`).catch(() => ({ error: "cannot reach the server" }));
    if (shown !== detail.shown) return drop(got);
    if (!got.url) {
      note(detail.videoNote, `no clip: ${got.error}`);
      return true;
    }
    detail.urls.push(got.url);
    detail.video.src = got.url;
    detail.video.hidden = false;
    note(detail.videoNote, "clip");
    detail.video.play().catch(() => {}); // muted: allowed to start; the controls are there otherwise
    return true;
  }

  function drop(got) {
    if (got.url) URL.revokeObjectURL(got.url);
    return true;
  }

  function closeDetail() {
    if (view.detail.open) view.detail.close(); // its "close" event releases what it showed
    else release();
  }

  // Stops the clip and lets go of the snapshot's and the clip's blobs (a load under way is dropped when it ends).
  function release() {
    detail.shown += 1;
    detail.video.pause();
    if (detail.video.hasAttribute("src")) {
      detail.video.removeAttribute("src");
      detail.video.load();
    }
    detail.img.removeAttribute("src");
    for (const url of detail.urls.splice(0)) URL.revokeObjectURL(url);
  }

  $("detail-close").addEventListener("click", () => closeDetail());
  view.detail.addEventListener("close", () => {
    if (!view.detail.open) release(); // (not when opened again meanwhile)
    if (detail.opener && document.contains(detail.opener)) detail.opener.focus();
  });
  view.detail.addEventListener("click", (e) => { if (e.target === view.detail) closeDetail(); }); // the backdrop

  // ---- words ----

  function clock(unix) {
    const d = new Date(unix * 1000);
    const today = d.toDateString() === new Date().toDateString();
    const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    return today ? time : `${d.toLocaleDateString()} ${time}`;
  }

  function seconds(s) {
    if (s < 60) return `${s.toFixed(1)} s`;
    const m = Math.floor(s / 60);
    return m < 60 ? `${m} min ${Math.round(s - m * 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
  }

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
    wakeEvents = loop(EVENTS_EVERY_MS, eventsStep);
    wakeBoxes = loop(BOXES_EVERY_MS, boxesStep);
  }

  start();
})();
