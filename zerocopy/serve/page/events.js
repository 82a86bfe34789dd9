// The stored events in serve's page (docs/serve.md, "The page"): a page of them at a time, newest first, paged by
// the API's cursor and filtered by camera, label, zone and time; each with its thumbnail, zones, its clip, and the
// three changes (delete, keep from retention, mark a false positive), sent with the token as a bearer header.
// app.js gives it the page's API (`page`) and starts its loop.
"use strict";

window.zerocopyEvents = (page) => {
  const { el, arrange, note, show, clock, seconds } = window.zerocopyCommon;
  const EVENTS_EVERY_MS = 2000;
  const LIMIT = 50;

  const $ = (id) => document.getElementById(id);
  const list = $("events");
  const listNote = $("events-note");
  const actionNote = $("events-action-note");
  const count = $("events-count");
  const newer = $("events-newer");
  const older = $("events-older");
  const filters = { camera: $("filter-camera"), label: $("filter-label"), zone: $("filter-zone") };
  const times = { after: $("filter-after"), before: $("filter-before") };
  const seen = { camera: new Set(), label: new Set(), zone: new Set() }; // the filters' choices
  const items = new Map(); // event id → its list item
  const paging = { before: [], cursor: null, next: null }; // the cursors of the pages before, this one's, the next
  let wake = () => {};
  let thumbnails = Promise.resolve(); // the thumbnails to fetch, in turn

  // ---- the list, a page at a time ----

  async function step(mine) {
    const asked = query();
    const answer = await page.get(`api/events?${asked}`);
    if (!page.current(mine)) return false;
    if (answer.status === 404) {
      note(listNote, "This server keeps no events (it has no event store).");
      showEvents([]);
      return false;
    }
    if (!answer.ok) throw new Error(`api/events: ${answer.status} ${await page.reason(answer)}`);
    const found = await answer.json();
    if (!page.current(mine) || asked !== query()) return undefined; // stale: the next pass shows them
    const events = found.events || [];
    if (!events.length && paging.cursor !== null) { // (its events were removed): the page before
      paging.cursor = paging.before.pop() ?? null;
      return 0;
    }
    for (const e of events) learn({ camera: e.camera, labels: [e.label], zones: e.zones || [] });
    paging.next = found.next ?? null;
    const filtered = Object.values(filters).some((s) => s.value) || Object.values(times).some((t) => t.value);
    note(listNote, events.length ? "" : filtered ? "No event matches these filters." : "No event yet.");
    const total = Number(found.total ?? events.length);
    const first = paging.before.length * LIMIT;
    count.textContent = `${total} event${total === 1 ? "" : "s"}` +
      (events.length && total > events.length ? ` (${first + 1}–${first + events.length} shown)` : "");
    newer.disabled = paging.cursor === null;
    older.disabled = paging.next === null;
    showEvents(events);
    return undefined;
  }

  function query() {
    const asked = new URLSearchParams({ limit: String(LIMIT) });
    for (const [key, select] of Object.entries(filters)) if (select.value) asked.set(key, select.value);
    for (const [key, input] of Object.entries(times)) {
      const unix = new Date(input.value).getTime() / 1000; // (a datetime-local's value: the browser's local time)
      if (input.value && Number.isFinite(unix)) asked.set(key, String(unix));
    }
    if (paging.cursor !== null) asked.set("cursor", paging.cursor);
    return asked.toString();
  }

  // The first page again (a filter changed).
  function restart() {
    paging.before = [];
    paging.cursor = null;
    paging.next = null;
    wake();
  }

  newer.addEventListener("click", () => {
    paging.cursor = paging.before.pop() ?? null;
    wake();
  });
  older.addEventListener("click", () => {
    if (paging.next === null) return;
    paging.before.push(paging.cursor);
    paging.cursor = paging.next;
    wake();
  });
  for (const input of [...Object.values(filters), ...Object.values(times)]) {
    input.addEventListener("change", () => restart());
  }

  // The cameras, labels and zones seen (in /api/cameras and the events): the filters' choices.
  function learn({ camera, labels = [], zones = [] }) {
    if (camera) seen.camera.add(camera);
    for (const label of labels) seen.label.add(label);
    for (const zone of zones) seen.zone.add(zone);
    for (const [key, select] of Object.entries(filters)) {
      const have = new Set([...select.options].map((o) => o.value));
      if (![...seen[key]].some((v) => v && !have.has(v))) continue;
      const chosen = select.value;
      select.replaceChildren(new Option("all", ""), ...[...seen[key]].filter(Boolean).sort().map((v) => new Option(v, v)));
      select.value = chosen;
    }
  }

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
    arrange(list, events.map((e) => items.get(e.id).li)); // newest first, as the server sends them
    for (const id of items.keys()) if (!keep.has(id)) forget(id);
  }

  function forget(id) {
    const item = items.get(id);
    if (!item) return;
    item.li.remove();
    if (item.thumbUrl) URL.revokeObjectURL(item.thumbUrl);
    items.delete(id);
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
    const marks = el("span", "marks");
    text.append(what, when, zones, length, marks);
    button.append(thumb, text);
    const actions = el("div", "event-actions");
    const clip = action("Clip", "clip", () => page.openDetail(item.event, button));
    const retain = action("Keep", "retain", () => change(item, "retain", !item.event.retain));
    const falsePositive = action("False positive", "false_positive",
                                 () => change(item, "false_positive", !item.event.false_positive));
    const remove = action("Delete", "delete", () => { confirm.hidden = false; sure.focus(); });
    const confirm = el("span", "confirm");
    confirm.hidden = true;
    confirm.append(el("span", "", "Delete it and its files?"));
    const sure = action("Delete", "delete-sure", () => { confirm.hidden = true; erase(item); });
    const cancel = action("Cancel", "delete-cancel", () => { confirm.hidden = true; remove.focus(); });
    cancel.classList.add("quiet");
    confirm.append(sure, cancel);
    actions.append(clip, retain, falsePositive, remove, confirm);
    li.append(button, actions);
    const item = { li, button, thumb, img, what, when, zones, length, marks, clip, retain, falsePositive, event: e,
                   thumbUrl: null, thumbFor: null };
    button.addEventListener("click", () => page.openDetail(item.event, button));
    return item;
  }

  function action(text, name, run) {
    const button = el("button", "quiet small", text);
    button.type = "button";
    button.dataset.action = name;
    button.addEventListener("click", run);
    return button;
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
    item.marks.textContent = [e.retain ? "kept" : "", e.false_positive ? "false positive" : ""].filter(Boolean)
      .join(" · ");
    item.button.classList.toggle("ongoing", e.end_time == null);
    item.li.classList.toggle("false-positive", Boolean(e.false_positive));
    item.clip.hidden = !e.has_clip;
    item.retain.textContent = e.retain ? "Unkeep" : "Keep";
    item.retain.setAttribute("aria-pressed", String(Boolean(e.retain)));
    item.retain.title = e.retain ? "let retention remove it again" : "keep it from retention";
    item.falsePositive.textContent = e.false_positive ? "Not a false positive" : "False positive";
    item.falsePositive.setAttribute("aria-pressed", String(Boolean(e.false_positive)));
    // the thumbnail: asked once it exists, and again when the event ends (its best picture is final then)
    const want = (e.has_thumbnail ?? e.has_snapshot) ? `${e.end_time != null}` : null;
    if (want !== null && item.thumbFor !== want) {
      item.thumbFor = want;
      thumbnails = thumbnails.then(() => loadThumbnail(item)); // one at a time: the pictures go on meanwhile
    }
  }

  async function loadThumbnail(item) {
    if (items.get(item.event.id) !== item) return;
    const got = await page.blobUrl(`api/events/${encodeURIComponent(item.event.id)}/thumbnail.jpg`)
      .catch(() => ({}));
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

  // ---- changes ----

  async function change(item, mark, value) {
    const e = item.event;
    const answer = await sent(`api/events/${encodeURIComponent(e.id)}/${mark}`, "POST", { [mark]: value });
    if (!answer) return;
    if (items.get(e.id) === item) showItem(item, await answer.json());
    note(actionNote, "");
    wake();
  }

  async function erase(item) {
    const e = item.event;
    const answer = await sent(`api/events/${encodeURIComponent(e.id)}`, "DELETE");
    if (!answer) return;
    forget(e.id);
    note(actionNote, `Deleted the ${e.label} on ${e.camera} at ${clock(e.start_time)}.`);
    wake();
  }

  // The answer to a change when it was done; else null, the server's reason said (without a token configured, a
  // 403 saying to set one).
  async function sent(path, method, body) {
    try {
      const answer = await page.send(method, path, body);
      if (answer.ok) return answer;
      const why = await page.reason(answer);
      note(actionNote, answer.status === 404 ? `It is gone already: ${why}` : `Not changed: ${why}`);
      if (answer.status === 404) wake();
    } catch (e) {
      if (!(e instanceof page.Unauthorised)) {
        note(actionNote, `Not changed: ${e instanceof TypeError ? "cannot reach the server" : e.message || e}`);
      }
    }
    return null;
  }

  // Begins the list's loop (at each new token).
  function start() {
    paging.before = [];
    paging.cursor = null;
    note(actionNote, "");
    wake = page.loop(EVENTS_EVERY_MS, step);
  }

  return { start, learn, wake: () => wake() };
};
