// An event's detail in serve's page (docs/serve.md, "The page"): its snapshot shown and its clip played, from
// blobs fetched with the token, waiting for a file still being written; a link saves the clip. app.js gives it
// the page's API (`page`: get, json, blobUrl, and the tiles, to know whether the event's camera records).
"use strict";

window.zerocopyDetail = (page) => {
  const { note, show, clock, seconds } = window.zerocopyCommon;
  const DETAIL_EVERY_MS = 2000; // an open event whose snapshot or clip is still being written: asked again...
  const PROMISED_MS = 120000; // ...until it is there, or for this long
  const CLIP_LATE_S = 60; // a recording camera's clip may come this long after its event's end

  const $ = (id) => document.getElementById(id);
  const dialog = $("detail");
  const detail = {
    title: $("detail-title"), meta: $("detail-meta"), img: $("detail-snapshot"), imgNote: $("detail-snapshot-note"),
    video: $("detail-clip"), videoNote: $("detail-clip-note"), save: $("detail-clip-save"), urls: [], opener: null,
    shown: 0,
  };

  // Shows the event `e` (opened from `opener`, focused again when it closes): its snapshot and clip. A file still
  // being written is waited for, asking about the event every DETAIL_EVERY_MS, for at most PROMISED_MS: one its
  // last event promises (`has_snapshot`, `has_clip`), or the clip of an event of a recording camera that is going
  // on or ended within CLIP_LATE_S (its last seconds are recorded after its end).
  async function open(e, opener) {
    release();
    const shown = ++detail.shown;
    detail.opener = opener;
    detail.title.textContent = `${e.label} on ${e.camera}`;
    const parts = [`${clock(e.start_time)}`, e.end_time == null ? "going on" : seconds(e.end_time - e.start_time)];
    if ((e.zones || []).length) parts.push(`zones: ${e.zones.join(", ")}`);
    if (e.top_score != null) parts.push(`best score ${Number(e.top_score).toFixed(2)}`);
    if (e.retain) parts.push("kept from retention");
    if (e.false_positive) parts.push("marked a false positive");
    detail.meta.textContent = parts.join(" · ");
    detail.img.hidden = true;
    detail.img.alt = `snapshot of the ${e.label} on ${e.camera} at ${clock(e.start_time)}`;
    detail.video.hidden = true;
    detail.save.hidden = true;
    const tile = page.tiles.get(e.camera);
    const records = Boolean(tile && tile.camera && tile.camera.recording);
    const recent = e.end_time == null || Date.now() / 1000 - e.end_time < CLIP_LATE_S;
    const promised = { ...(e.last_event || {}) };
    promised.has_clip = Boolean(promised.has_clip || (records && recent));
    detail.imgNote.textContent = e.has_snapshot ? "loading the snapshot…"
      : promised.has_snapshot ? "the snapshot is being written…" : "no snapshot";
    note(detail.videoNote, e.has_clip ? "loading the clip…"
      : promised.has_clip ? "the clip is being recorded…" : "no clip");
    if (!dialog.open) dialog.showModal();
    const id = encodeURIComponent(e.id);
    const until = performance.now() + PROMISED_MS;
    let snapshot = false;
    let clip = false;
    for (;;) {
      if (e.has_snapshot && !snapshot) snapshot = await showSnapshot(id, shown);
      if (e.has_clip && !clip) clip = await playClip(id, shown, e);
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
        e = await page.json(`api/events/${id}`);
      } catch {
        // asked again at the next turn (a 401 brings the form back and closes this)
      }
    }
  }

  async function showSnapshot(id, shown) {
    const got = await page.blobUrl(`api/events/${id}/snapshot.jpg`)
      .catch(() => ({ error: "cannot reach the server" }));
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

  async function playClip(id, shown, e) {
    const got = await page.blobUrl(`api/events/${id}/clip.mp4`).catch(() => ({ error: "cannot reach the server" }));
    if (shown !== detail.shown) return drop(got);
    if (!got.url) {
      note(detail.videoNote, `no clip: ${got.error}`);
      return true;
    }
    detail.urls.push(got.url);
    detail.video.src = got.url;
    detail.video.hidden = false;
    detail.save.href = got.url;
    detail.save.download = `${e.camera}-${e.label}-${e.id}.mp4`.replace(/[^\w.-]+/g, "_");
    detail.save.hidden = false;
    note(detail.videoNote, "clip");
    detail.video.play().catch(() => {}); // muted: allowed to start; the controls are there otherwise
    return true;
  }

  function drop(got) {
    if (got.url) URL.revokeObjectURL(got.url);
    return true;
  }

  function close() {
    if (dialog.open) dialog.close(); // its "close" event releases what it showed
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
    detail.save.removeAttribute("href");
    for (const url of detail.urls.splice(0)) URL.revokeObjectURL(url);
  }

  $("detail-close").addEventListener("click", () => close());
  dialog.addEventListener("close", () => {
    if (!dialog.open) release(); // (not when opened again meanwhile)
    if (detail.opener && document.contains(detail.opener)) detail.opener.focus();
  });
  dialog.addEventListener("click", (e) => { if (e.target === dialog) close(); }); // the backdrop

  return { open, close };
};
