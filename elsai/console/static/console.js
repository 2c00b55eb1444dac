// elsai console: refresh a running job's or active session's parts in place (polling), nothing else.
// The server renders and escapes every part; this script only swaps whole parts whose
// version changed, so a form being filled in is left alone until its interrupts change.
"use strict";
(function () {
  const POLL_MS = 1000;

  function swap(live, html) {
    const fresh = document.createElement("template");
    fresh.innerHTML = html;
    for (const part of fresh.content.querySelectorAll("section[data-part]")) {
      const name = part.getAttribute("data-part");
      const old = live.querySelector('section[data-part="' + CSS.escape(name) + '"]');
      if (!old) {
        live.appendChild(part);
      } else if (old.getAttribute("data-version") !== part.getAttribute("data-version")) {
        old.replaceWith(part);
      }
    }
  }

  async function poll(live) {
    try {
      const response = await fetch(live.getAttribute("data-src"), {
        credentials: "same-origin",
        headers: { Accept: "text/html" },
      });
      if (response.ok) {
        swap(live, await response.text());
        if (response.headers.get("X-Live-Ended") === "1") {
          live.setAttribute("data-ended", "1");
          return;
        }
      }
    } catch (err) {
      // the console stopped or the network blinked: try again on the next tick
    }
    setTimeout(() => poll(live), POLL_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const live = document.getElementById("live");
    if (live && live.getAttribute("data-ended") !== "1") {
      setTimeout(() => poll(live), POLL_MS);
    }
  });
})();
