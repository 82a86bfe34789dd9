// A camera's live video in serve's page (docs/serve.md, "Live video"): the fragmented MP4 of
// api/cameras/NAME/live.mp4 (the camera's own stream, never re-encoded) played through Media Source Extensions,
// kept near the live edge, and the boxes of the camera's open objects drawn over it. app.js decides when to play.
"use strict";

window.zerocopyLive = (() => {
  const BEHIND_S = 1.5; // further than this behind the newest picture held: seek...
  const EDGE_S = 0.5; // ...to this far before it (a fragment comes every 0.5 s: playing on waits less than this)
  const KEEP_S = 10; // what was played more than this ago is removed from the buffer
  const STALLED_MS = 10000; // no picture for this long: the stream is given up (app.js opens it again)

  // The `codecs` of a Content-Type (`video/mp4; codecs="avc1.64001f"`), "" if none.
  function codecsOf(contentType) {
    const m = /codecs="?([^";]+)"?/i.exec(contentType || "");
    return m ? m[1].trim() : "";
  }

  // The codec's common name (H.264, H.265), for saying why a stream cannot be played.
  function codecName(codecs) {
    if (/^avc[13]/.test(codecs)) return "H.264";
    if (/^(hev1|hvc1)/.test(codecs)) return "H.265";
    return codecs || "this codec";
  }

  function mimeType(codecs) {
    return `video/mp4; codecs="${codecs}"`;
  }

  // Whether this browser can play `codecs` live; else why not (a sentence), as {ok, why}.
  function playable(codecs) {
    if (!window.MediaSource) return { ok: false, why: "this browser has no Media Source Extensions" };
    if (!codecs) return { ok: false, why: "the server did not say the stream's codec" };
    if (!MediaSource.isTypeSupported(mimeType(codecs))) {
      return { ok: false, why: `${codecName(codecs)} (${codecs}): this browser cannot play it live` };
    }
    return { ok: true, why: "" };
  }

  function updated(buffer) {
    return new Promise((done, fail) => {
      const end = () => { buffer.removeEventListener("error", error); done(); };
      const error = () => { buffer.removeEventListener("updateend", end); fail(new Error("the browser refused the video")); };
      buffer.addEventListener("updateend", end, { once: true });
      buffer.addEventListener("error", error, { once: true });
    });
  }

  // Seeks to the live edge when behind, removes what was played long ago, and plays.
  async function keepLive(video, buffer) {
    const held = buffer.buffered;
    if (!held.length) return;
    const end = held.end(held.length - 1);
    if (end - video.currentTime > BEHIND_S || video.currentTime < held.start(0)) {
      video.currentTime = Math.max(held.start(held.length - 1), end - EDGE_S);
    }
    if (video.currentTime - held.start(0) > KEEP_S * 1.5 && !buffer.updating) {
      buffer.remove(0, video.currentTime - KEEP_S);
      await updated(buffer);
    }
    if (video.paused) video.play().catch(() => {});
  }

  // Plays the fetched live.mp4 `answer` (of `codecs`) in `video` until it ends, fails, stalls or `signal` aborts;
  // `playing()` is called once its first picture shows. Resolves with why it stopped (a sentence).
  async function play(video, answer, codecs, signal, playing) {
    const source = new MediaSource();
    const url = URL.createObjectURL(source);
    video.src = url;
    await new Promise((done) => source.addEventListener("sourceopen", done, { once: true }));
    URL.revokeObjectURL(url);
    const buffer = source.addSourceBuffer(mimeType(codecs));
    const reader = answer.body.getReader();
    let shown = -1;
    let started = false; // (its first picture shown: a first look before any data sees 0, not a picture)
    let since = performance.now();
    const watch = setInterval(() => {
      if (video.currentTime !== shown) {
        if (!started && video.currentTime > 0) {
          started = true;
          playing();
        }
        shown = video.currentTime;
        since = performance.now();
      } else if (performance.now() - since > STALLED_MS) {
        reader.cancel().catch(() => {});
      }
    }, 250);
    try {
      for (;;) {
        if (signal.aborted) return "stopped";
        const { value, done } = await reader.read();
        if (done) return "the stream ended";
        buffer.appendBuffer(value);
        await updated(buffer);
        await keepLive(video, buffer);
      }
    } catch (e) {
      return signal.aborted ? "stopped" : String(e.message || e);
    } finally {
      clearInterval(watch);
      reader.cancel().catch(() => {});
      video.pause();
      video.removeAttribute("src");
      video.load();
    }
  }

  // Draws `objects` (open events: {label, box: [x1, y1, x2, y2] in the detect frame's pixels}) in `layer`, over
  // `video` shown with object-fit: contain in `frame`; `detect` is the detect frame's size ({width, height}; when
  // unknown, the video's own).
  function drawBoxes(layer, frame, video, objects, detect) {
    const vw = video.videoWidth;
    const vh = video.videoHeight;
    if (!vw || !vh) {
      layer.replaceChildren();
      return;
    }
    const dw = detect && detect.width ? detect.width : vw;
    const dh = detect && detect.height ? detect.height : vh;
    const fw = frame.clientWidth;
    const fh = frame.clientHeight;
    const scale = Math.min(fw / vw, fh / vh);
    const left = (fw - vw * scale) / 2;
    const top = (fh - vh * scale) / 2;
    const sx = (vw * scale) / dw;
    const sy = (vh * scale) / dh;
    layer.replaceChildren(...objects.map((o) => {
      const [x1, y1, x2, y2] = o.box;
      const box = document.createElement("div");
      box.className = "box";
      box.style.left = `${left + x1 * sx}px`;
      box.style.top = `${top + y1 * sy}px`;
      box.style.width = `${Math.max(0, x2 - x1) * sx}px`;
      box.style.height = `${Math.max(0, y2 - y1) * sy}px`;
      const label = document.createElement("span");
      label.textContent = o.label;
      box.append(label);
      return box;
    }));
  }

  return { codecsOf, codecName, playable, play, drawBoxes };
})();
