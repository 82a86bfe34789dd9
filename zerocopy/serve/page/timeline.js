// A camera's timeline in serve's page (docs/serve.md, "The page"): one local day on a bar, the camera's recorded
// segments (those with motion marked) and its events on it; a click plays the recording from that moment, in
// place of the live video, until "Back to live". The recording is an export (api/cameras/NAME/clip.mp4) of
// WINDOW_S from the click, fetched with the token as a blob (a <video> cannot send the header; an export is a
// plain MP4, index first, which Media Source Extensions do not take), played from the clicked time, and followed
// by the next one when it ends. app.js gives it the page's API (`page`) and fires zerocopy:camera-open/-close.
"use strict";

window.zerocopyTimeline = (page) => {
  const { el, note, timeOfDay, zoneName, day } = window.zerocopyCommon;
  const WINDOW_S = 120; // an export's length: at 4 Mbit/s, 60 MB of blob
  const TODAY_EVERY_MS = 10000; // today's timeline is asked again this often while it shows
  const JOIN_S = 2; // segments this close drawn as one run
  const MAX_DAY_S = 86400; // what one recordings request may cover
  const EVENT_PAGES = 4; // the day's events: at most this many pages of 500

  const $ = (id) => document.getElementById(id);
  const view = {
    section: $("camera-timeline"), title: $("timeline-day"), previous: $("timeline-previous"),
    next: $("timeline-next"), live: $("timeline-live"), bar: $("timeline-bar"), runs: $("timeline-runs"),
    marks: $("timeline-events"), playhead: $("timeline-playhead"), hours: $("timeline-hours"),
    note: $("timeline-note"), now: $("timeline-now"), picture: $("camera-view-picture"),
    recording: $("camera-view-recording"), video: $("timeline-video"), zoom: $("timeline-zoom"),
    earlier: $("timeline-earlier"), later: $("timeline-later"),
  };
  // the day shown, and the part of it the bar shows: `span` seconds around `center` (null: the whole day)
  const state = { camera: null, day: null, span: null, center: 0, segments: [], events: [], opened: 0, want: 0,
                  clip: null };

  // ---- the day's segments and events ----

  async function refresh(opened, shown) {
    const { camera } = state;
    const name = encodeURIComponent(camera);
    const segments = [];
    let why = "";
    for (let from = shown.start; from < shown.end && !why;) {
      const until = Math.min(shown.end, from + MAX_DAY_S);
      const answer = await page.get(`api/cameras/${name}/recordings?after=${from}&before=${until}`);
      if (!answer.ok) {
        why = await page.reason(answer);
        break;
      }
      const found = await answer.json();
      segments.push(...found.segments);
      from = found.more && found.segments.length ? found.segments[found.segments.length - 1].end : until;
    }
    const events = [];
    let cursor = null;
    for (let n = 0; n < EVENT_PAGES; n += 1) {
      const asked = new URLSearchParams({ camera, after: String(shown.start), before: String(shown.end),
                                          limit: "500" });
      if (cursor) asked.set("cursor", cursor);
      const answer = await page.get(`api/events?${asked}`);
      if (!answer.ok) break;
      const found = await answer.json();
      events.push(...found.events);
      cursor = found.next;
      if (!cursor) break;
    }
    if (opened !== state.opened || shown !== state.day) return false;
    state.segments = segments;
    state.events = events;
    draw();
    const recorded = segments.reduce((s, g) => s + Math.min(g.end, shown.end) - Math.max(g.start, shown.start), 0);
    view.section.dataset.segments = String(segments.length);
    note(view.note, why ? `No recordings: ${why}`
      : segments.length ? `${Math.round(recorded / 60)} min recorded this day, ${events.length} event` +
        `${events.length === 1 ? "" : "s"}; click the bar to play the recording from that moment.`
        : `Nothing recorded this day${events.length ? ` (${events.length} events)` : ""}.`);
    return shown.end > Date.now() / 1000 ? TODAY_EVERY_MS : false;
  }

  // What the bar shows: the whole day, or `span` seconds of it around `center`.
  function visible() {
    const { start, end } = state.day;
    if (!state.span || state.span >= end - start) return { start, end };
    const from = Math.max(start, Math.min(end - state.span, state.center - state.span / 2));
    return { start: from, end: from + state.span };
  }

  function at(t) {
    const { start, end } = visible();
    return `${Math.max(0, Math.min(100, ((t - start) / (end - start)) * 100))}%`;
  }

  function span(node, start, end) {
    node.style.left = at(start);
    node.style.width = `calc(${at(end)} - ${at(start)})`;
    return node;
  }

  // The segments as runs (those that meet, with the same motion, as one), the events as marks, the hours below.
  function draw() {
    const { segments, events } = state;
    const range = visible();
    view.section.dataset.viewStart = String(range.start);
    view.section.dataset.viewEnd = String(range.end);
    view.earlier.hidden = view.later.hidden = range.end - range.start >= state.day.end - state.day.start;
    view.earlier.disabled = range.start <= state.day.start;
    view.later.disabled = range.end >= state.day.end;
    drawHours(range);
    const runs = [];
    for (const s of segments) {
      const last = runs[runs.length - 1];
      if (last && s.start - last.end < JOIN_S && Boolean(s.motion) === last.motion) last.end = Math.max(last.end, s.end);
      else runs.push({ start: s.start, end: s.end, motion: Boolean(s.motion) });
    }
    const inside = (a, b) => b > range.start && a < range.end;
    view.runs.replaceChildren(...runs.filter((r) => inside(r.start, r.end)).map((r) => {
      const node = span(el("div", r.motion ? "run motion" : "run"), r.start, r.end);
      node.title = `${timeOfDay(r.start)} – ${timeOfDay(r.end)}${r.motion ? ", motion" : ""}`;
      return node;
    }));
    view.marks.replaceChildren(...events.filter((e) => inside(e.start_time, e.end_time ?? Infinity)).map((e) => {
      const node = span(el("div", e.false_positive ? "mark false-positive" : "mark"), e.start_time,
                        e.end_time ?? Date.now() / 1000);
      node.title = `${e.label} at ${timeOfDay(e.start_time)}`;
      return node;
    }));
    const now = Date.now() / 1000;
    view.now.hidden = !(range.start <= now && now < range.end);
    view.now.style.left = at(now);
    drawPlayhead();
  }

  // The times under the bar: every 3 hours of a whole day, every hour of 6, every 10 minutes of an hour, every
  // minute of 10 minutes (from the day's local midnight).
  function drawHours(range) {
    const width = range.end - range.start;
    const step = width > 6 * 3600 ? 3 * 3600 : width > 3600 ? 3600 : width > 600 ? 600 : 60;
    const marks = [];
    for (let t = state.day.start; t <= state.day.end; t += step) {
      if (t < range.start - 1 || t > range.end + 1) continue;
      const hhmm = new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
      const label = el("span", "", t >= state.day.end ? "24:00" : hhmm);
      label.style.left = at(t);
      label.classList.toggle("first", t <= range.start + 1);
      label.classList.toggle("last", t >= range.end - 1);
      marks.push(label);
    }
    view.hours.replaceChildren(...marks);
  }

  // Zooms to `span` seconds (null: the whole day) around what plays, else now (today), else what was shown.
  function zoom(span) {
    const playing = state.clip && !view.recording.hidden ? state.clip.start + view.video.currentTime : null;
    const now = Date.now() / 1000;
    const middle = (visible().start + visible().end) / 2;
    state.center = playing ?? (state.day.start <= now && now < state.day.end ? now - (span || 0) / 4 : middle);
    state.span = span;
    draw();
  }

  function pan(direction) {
    const range = visible();
    state.center = (range.start + range.end) / 2 + direction * (range.end - range.start) / 2;
    draw();
  }

  function showDay(shown) {
    state.day = shown;
    state.segments = [];
    const date = new Date(shown.start * 1000);
    const today = day(Date.now() / 1000);
    view.title.textContent = `${shown.start === today.start ? "Today, " : ""}${date.toLocaleDateString([], {
      weekday: "long", year: "numeric", month: "long", day: "numeric" })} (times in ${zoneName()})`;
    view.next.disabled = shown.end > Date.now() / 1000;
    view.section.dataset.dayStart = String(shown.start);
    view.section.dataset.dayEnd = String(shown.end);
    state.events = [];
    state.center = shown.start + (shown.end - shown.start) / 2;
    if (shown.start <= Date.now() / 1000 && Date.now() / 1000 < shown.end) {
      state.center = Date.now() / 1000 - (state.span || 0) / 4;
    }
    draw();
    note(view.note, "reading the day's recordings…");
    const opened = state.opened;
    page.loop(TODAY_EVERY_MS, () => refresh(opened, shown));
  }

  // ---- playing a moment ----

  // The time to play for a click at `t`: `t` in a segment, else the next segment's start (null: none that day).
  function snap(t) {
    const holding = state.segments.find((s) => s.start <= t && t < s.end);
    if (holding) return t;
    const later = state.segments.find((s) => s.start > t);
    return later ? later.start : null;
  }

  async function play(t) {
    const want = ++state.want;
    const clip = state.clip;
    view.section.dataset.clicked = String(t);
    if (clip && clip.start <= t && t < clip.start + clip.seconds - 0.5) { // in the export already: a seek
      showRecording();
      view.video.currentTime = t - clip.start;
      view.video.play().catch(() => {});
      return;
    }
    const end = Math.min(t + WINDOW_S, Date.now() / 1000);
    if (end - t < 1) {
      note(view.note, "That is now: the live video shows it.");
      return;
    }
    note(view.note, `fetching the recording from ${timeOfDay(t)}…`);
    const path = `api/cameras/${encodeURIComponent(state.camera)}/clip.mp4?start=${t}&end=${end}`;
    let answer;
    try {
      answer = await page.get(path);
    } catch (e) {
      if (!(e instanceof page.Unauthorised) && want === state.want) note(view.note, `No recording: ${e.message || e}`);
      return;
    }
    if (want !== state.want) return;
    if (!answer.ok) {
      const busy = answer.status === 503 ? ` (try again in ${answer.headers.get("retry-after") || 5} s)` : "";
      note(view.note, `No recording from ${timeOfDay(t)}: ${await page.reason(answer)}${busy}`);
      return;
    }
    const url = URL.createObjectURL(await answer.blob());
    if (want !== state.want) {
      URL.revokeObjectURL(url);
      return;
    }
    release();
    state.clip = { url, start: Number(answer.headers.get("x-zerocopy-start")),
                   seconds: Number(answer.headers.get("x-zerocopy-seconds")),
                   cut: answer.headers.get("x-zerocopy-cut-at-gap") === "1" };
    view.section.dataset.clipStart = String(state.clip.start);
    view.section.dataset.clipSeconds = String(state.clip.seconds);
    showRecording();
    view.video.src = url;
    view.video.addEventListener("loadedmetadata", () => {
      if (state.clip && state.clip.url === url) view.video.currentTime = Math.max(0, t - state.clip.start);
      view.video.play().catch(() => {});
    }, { once: true });
  }

  function showRecording() {
    view.picture.hidden = true;
    view.recording.hidden = false;
    view.live.hidden = false;
  }

  // Back to the live video: the recording stopped and let go.
  function backToLive() {
    state.want += 1;
    release();
    view.recording.hidden = true;
    view.picture.hidden = false;
    view.live.hidden = true;
    delete view.section.dataset.playingAt;
    drawPlayhead();
    note(view.note, "live");
  }

  function release() {
    view.video.pause();
    if (view.video.hasAttribute("src")) {
      view.video.removeAttribute("src");
      view.video.load();
    }
    if (state.clip) URL.revokeObjectURL(state.clip.url);
    state.clip = null;
  }

  function drawPlayhead() {
    const playing = state.clip && !view.recording.hidden ? state.clip.start + view.video.currentTime : null;
    view.playhead.hidden = playing === null || !state.day || playing < state.day.start || playing >= state.day.end;
    if (playing !== null && state.day) view.playhead.style.left = at(playing);
  }

  view.video.addEventListener("timeupdate", () => {
    if (!state.clip) return;
    const playing = state.clip.start + view.video.currentTime;
    view.section.dataset.playingAt = String(playing);
    note(view.note, `Recording at ${timeOfDay(playing)} (${zoneName()})`);
    drawPlayhead();
  });
  view.video.addEventListener("error", () => {
    if (state.clip) note(view.note, "This browser cannot play this recording (its codec: see the live video's note).");
  });
  view.video.addEventListener("ended", () => { // the next export, across a gap if there is one
    if (!state.clip) return;
    const next = snap(state.clip.start + state.clip.seconds + (state.clip.cut ? 1 : 0));
    if (next !== null && next < Date.now() / 1000 - 1) play(next);
    else backToLive();
  });

  view.bar.addEventListener("click", (e) => {
    const box = view.bar.getBoundingClientRect();
    const range = visible();
    const t = range.start + ((e.clientX - box.left) / box.width) * (range.end - range.start);
    const from = snap(t);
    if (from === null) note(view.note, `Nothing was recorded from ${timeOfDay(t)} on, this day.`);
    else play(from);
  });
  view.previous.addEventListener("click", () => showDay(day(state.day.start, -1)));
  view.next.addEventListener("click", () => showDay(day(state.day.start, 1)));
  view.live.addEventListener("click", () => backToLive());
  view.zoom.addEventListener("change", () => zoom(Number(view.zoom.value) || null));
  view.earlier.addEventListener("click", () => pan(-1));
  view.later.addEventListener("click", () => pan(1));
  view.bar.addEventListener("mousemove", (e) => { // the time under the pointer
    const box = view.bar.getBoundingClientRect();
    const range = visible();
    view.bar.title = `${timeOfDay(range.start + ((e.clientX - box.left) / box.width) * (range.end - range.start))}: ` +
      "click to play the recording from then";
  });

  document.addEventListener("zerocopy:camera-open", (e) => {
    state.opened += 1;
    state.camera = e.detail.camera;
    view.section.hidden = false;
    view.section.dataset.camera = state.camera;
    backToLive();
    showDay(day(Date.now() / 1000));
  });
  document.addEventListener("zerocopy:camera-close", () => {
    state.opened += 1;
    backToLive();
    view.section.hidden = true;
  });

  return {};
};
