// What every part of serve's page uses (docs/serve.md, "The page"): making and ordering elements, notes, and
// times in words, in the browser's own time zone.
"use strict";

window.zerocopyCommon = (() => {
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // Puts `nodes` first in `list`, in their order, moving only those out of place (a moved button loses focus).
  function arrange(list, nodes) {
    let at = list.firstChild;
    for (const node of nodes) {
      if (node === at) at = at.nextSibling;
      else list.insertBefore(node, at);
    }
  }

  // Shows `text` in `node`, or hides it when there is none.
  function note(node, text) {
    node.textContent = text;
    node.hidden = !text;
  }

  async function show(img, url) {
    img.src = url;
    try {
      await img.decode();
    } catch {
      // a picture that does not decode stays blank; the next one replaces it
    }
  }

  function timeOfDay(unix) {
    return new Date(unix * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }

  // A Unix time in words: its time of day, with its date unless it is today.
  function clock(unix) {
    const d = new Date(unix * 1000);
    const time = timeOfDay(unix);
    return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
  }

  function seconds(s) {
    if (s < 60) return `${s.toFixed(1)} s`;
    const m = Math.floor(s / 60);
    return m < 60 ? `${m} min ${Math.round(s - m * 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
  }

  // The browser's time zone in words ("Europe/Paris"), which every time the page shows is in.
  function zoneName() {
    try {
      return Intl.DateTimeFormat().resolvedOptions().timeZone || "the browser's local time";
    } catch {
      return "the browser's local time";
    }
  }

  // The local day `offset` days from the one holding `unix`: {start, end} in Unix seconds (23 to 25 hours across
  // a change of summer time).
  function day(unix, offset = 0) {
    const d = new Date(unix * 1000);
    const start = new Date(d.getFullYear(), d.getMonth(), d.getDate() + offset);
    const end = new Date(d.getFullYear(), d.getMonth(), d.getDate() + offset + 1);
    return { start: start.getTime() / 1000, end: end.getTime() / 1000 };
  }

  return { el, arrange, note, show, timeOfDay, clock, seconds, zoneName, day };
})();
