// lookout dashboard: the away switch in the header (issue 41, docs/remote.md). While away, Codex's
// permission requests wait for an answer from afar before its own prompt; turning it off hands
// every waiting one back to that prompt at once. The page shows what the server says the switch
// is (the snapshot and the stream's `away` messages) and turns it with a signed POST.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const A = { state: null, busy: false };

  function clock(ms) {
    const at = new Date(ms);
    const same = at.toDateString() === new Date().toDateString();
    const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    return same ? time : `${at.toLocaleDateString()} ${time}`;
  }

  function draw() {
    const box = $("away");
    const s = A.state;
    box.hidden = !s;
    if (!s) return;
    const on = s.away === true && !(s.until_ms && Date.now() >= s.until_ms);
    const button = $("away-toggle");
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.textContent = on ? "Away: on" : "Away";
    button.title = on
      ? "You said you are away: Codex waits for your answer here. Click when you are back."
      : "Say you are away: Codex's permission requests then wait for your answer here";
    button.disabled = A.busy;
    $("away-for").hidden = on;
    $("away-state").textContent = on ? (s.until_ms ? `until ${clock(s.until_ms)}` : "until you are back") : "";
    box.dataset.on = on ? "true" : "false";
  }

  async function toggle() {
    const s = A.state;
    const on = !(s && s.away === true && !(s.until_ms && Date.now() >= s.until_ms));
    const body = { away: on };
    const duration = $("away-for").value;
    if (on && duration) body.for = duration;
    A.busy = true;
    draw();
    const response = await window.lookout.api("/api/away", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    }).catch(() => null);
    A.busy = false;
    const answer = response ? await response.json().catch(() => ({})) : {};
    if (response && response.ok) A.state = answer;
    else $("away-state").textContent = response ? (answer.error || `refused (${response.status})`) : "lookout is not reachable";
    if (response && response.ok) draw(); else $("away-toggle").disabled = false;
  }

  document.addEventListener("lookout:away", (e) => { A.state = e.detail; draw(); });
  document.addEventListener("DOMContentLoaded", () => {
    $("away-toggle").addEventListener("click", toggle);
    setInterval(() => { if (A.state && A.state.until_ms) draw(); }, 15000); // until_ms passing
  });
})();
