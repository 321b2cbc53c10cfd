// lookout dashboard: steering ([steer] enabled, docs/steer.md). A message box and an Interrupt
// button on each live session's card (on the fleet's hub also on the other hosts' cards, which
// their own hosts run through their own [steer]: fleet.js says when), and a "New session" form; each action shows back what the
// server's outcome says was delivered, to which session, which way, and what came of it, or the
// refusal's error and hint. Every check is the server's (lookout/steer/core.py): the page only
// sends what was typed, untouched. Text reaches the page through textContent only, invisible
// characters as visible escapes.
"use strict";
(() => {
  const S = { on: false, settings: null, boxes: new Map() }; // session id -> {node, text, send, stop, result, busy}

  // app.js's element builder and remote.js's escape (both loaded before this one).
  const node = (...args) => window.lookout.node(...args);
  const visible = (text) => window.lookout.visibleText(text);

  // -- showing back an outcome or a refusal ---------------------------------------------------
  // The same lines `lookout say`, `interrupt` and `start` print (lookout/commands/say.py).
  function outcomeLines(o) {
    const status = o.status ? ` (${o.status})` : "";
    const lines = [];
    if (o.action === "start") {
      lines.push(["head", `started ${o.agent}: tmux ${o.target}`]);
      lines.push(["session", `session: ${o.session}${status}`]);
    } else {
      let how;
      if (o.via === "socket") how = `sent to its inbox socket ${o.target}`;
      else if (o.text) how = `typed into tmux pane ${o.target}${o.keys.map((k) => `, then ${k}`).join("")}`;
      else how = `${o.keys.join(", ")} pressed in tmux pane ${o.target}`;
      lines.push(["head", `${o.session}: ${how}: ${o.result}${status}`]);
    }
    if (o.text) lines.push(["text", o.text]);
    if (o.via === "socket" && o.framing) lines.push(["framing", `note: ${o.framing}`]);
    if (o.note) lines.push(["note", `note: ${o.note}`]);
    return lines;
  }

  function show(result, kind, lines) {
    result.dataset.kind = kind;
    result.replaceChildren(...lines.map(([part, text]) => (part === "text"
      ? node("div", { class: "steer-line", "data-part": part }, node("span", { class: "steer-label", text: "text: " }),
        node("span", { class: "steer-text" }, ...visible(text)))
      : node("div", { class: "steer-line", "data-part": part }, ...visible(text)))));
  }

  // Another host's outcome: the two lines its own action shows (lookout.fleet.hub.steer).
  function remoteLines(lines) {
    return lines.map((line, i) => (i > 0 && line.startsWith("text: ") ? ["text", line.slice(6)] : [i ? "note" : "head", line]));
  }

  // POST, signed (auth.js), and what came back shown in `result`. True when it was done.
  async function post(path, body, result) {
    const response = await window.lookout.api(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    }).catch(() => null);
    if (!response) { show(result, "error", [["error", "lookout is not reachable: nothing was sent"]]); return false; }
    const answer = await response.json().catch(() => ({}));
    if (Array.isArray(answer.lines) && answer.lines.length && response.status !== 401) {
      show(result, response.ok ? "done" : "error", remoteLines(answer.lines));
      return response.ok;
    }
    if (response.ok) { show(result, "done", outcomeLines(answer)); return true; }
    if (response.status === 401 && window.lookout.state() !== "signed-in") return false; // app.js shows how to sign in
    show(result, "error", [["error", answer.error || `refused (${response.status})`], ...(answer.hint ? [["hint", `hint: ${answer.hint}`]] : [])]);
    if (answer.reason === "disabled") load();
    return false;
  }

  // -- on each card -----------------------------------------------------------------------------

  // The box for a session (the same node when its card is rebuilt: a draft, the focus and the
  // last outcome survive an update), or null when it cannot be steered from here.
  function box(s) {
    const hub = window.lookout.fleetHub; // this host's name when the page is the fleet's hub
    const local = !s.host || (hub && s.host === hub);
    // Another host's session, on the hub: its own host runs it through its own [steer].
    const remote = Boolean(hub && s.host && s.host !== hub && s.status !== "unknown");
    const can = s.status !== "ended" && (remote || (local && S.on && S.settings.steerable.includes(s.agent)));
    if (!can) return null;
    const key = s.host ? `${s.host}/${s.session_id}` : s.session_id; // app.js's keyOf
    let b = S.boxes.get(key);
    if (!b) b = makeBox(key);
    b.remote = remote ? s.host : null;
    b.session = s;
    // A refusal shown under the card answered the status it was sent in: once that changed
    // (the dialog answered, the turn over), it no longer holds.
    if (b.refusedAt !== null && b.refusedAt !== statusOf(s)) clear(b);
    const name = s.title || s.project || s.session_id.slice(0, 8);
    b.text.setAttribute("aria-label", `Message to ${name}`);
    // As the server judges (steer.core): a failed turn (`error`) waits on nothing on screen,
    // and a `stuck` turn is still running; any other attention is a dialog.
    const dialog = s.status === "attention" && s.reason !== "error" && s.reason !== "stuck";
    const running = s.status === "working" || (s.status === "attention" && s.reason === "stuck");
    b.text.placeholder = dialog
      ? "It waits on a dialog: answer it first"
      : `Message to ${name} (Enter sends, Shift+Enter: new line)`;
    // Interrupt stops a turn: there is none while idle (the server refuses it then too).
    b.stop.disabled = b.busy || !running;
    b.stop.title = running ? "Stop its current turn, as Esc does" : "It is not working: no turn to stop";
    return b.node;
  }

  const statusOf = (s) => `${s.status}/${s.reason || ""}`;

  function clear(b) {
    b.refusedAt = null;
    delete b.result.dataset.kind;
    b.result.replaceChildren();
  }

  function makeBox(id) {
    const text = node("textarea", { class: "steer-input", rows: 1, name: "text", spellcheck: true });
    const send = node("button", { type: "submit", class: "steer-send", text: "Send" });
    const stop = node("button", { type: "button", class: "steer-stop", text: "Interrupt" });
    const result = node("div", { class: "steer-result", role: "status", "aria-live": "polite" });
    const form = node("form", { class: "steer-say" }, text, send, stop);
    const b = { node: node("div", { class: "steer", "data-steer": id }, form, result), text, send, stop, result, busy: false, session: null, refusedAt: null, remote: null };
    // Typing and clicking here is not opening the timeline (the card's own click and Enter).
    for (const kind of ["click", "keydown"]) b.node.addEventListener(kind, (e) => e.stopPropagation());
    text.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
    });
    form.addEventListener("submit", (e) => { e.preventDefault(); say(b); });
    stop.addEventListener("click", () => interrupt(b));
    S.boxes.set(id, b);
    return b;
  }

  function busy(b, on, what) {
    b.busy = on;
    b.send.disabled = on;
    b.stop.disabled = on || !b.session || b.session.status !== "working";
    if (on) show(b.result, "pending", [["pending", what]]);
  }

  // After a refusal: kept under the card until the card's status changes from what it is now.
  function refused(b, done) {
    b.refusedAt = !done && b.result.dataset.kind === "error" ? statusOf(b.session) : null;
  }

  // Where a card's actions go: this host's steering, or the hub's route to the session's host.
  function base(b) {
    const id = encodeURIComponent(b.session.session_id);
    return b.remote ? `/api/fleet/sessions/${encodeURIComponent(b.remote)}/${id}` : `/api/sessions/${id}`;
  }

  async function say(b) {
    const text = b.text.value;
    if (b.busy || !text.trim()) return;
    busy(b, true, b.remote ? `sending to ${b.remote}…` : "sending…");
    const done = await post(`${base(b)}/say`, { text }, b.result);
    busy(b, false);
    refused(b, done);
    if (done && b.text.value === text) b.text.value = "";
  }

  async function interrupt(b) {
    if (b.busy) return;
    busy(b, true, b.remote ? `interrupting on ${b.remote}…` : "interrupting…");
    const done = await post(`${base(b)}/interrupt`, {}, b.result);
    busy(b, false);
    refused(b, done);
  }

  // -- the "New session" form ---------------------------------------------------------------------

  function panel() {
    const section = document.getElementById("newsession");
    const open = document.getElementById("newsession-open");
    if (!section || !open) return;
    open.hidden = !S.on;
    if (!S.on) { section.hidden = true; section.replaceChildren(); return; }
    const { projects, agents } = S.settings;
    // An agent whose program the server cannot find is shown, marked, and not offered.
    const missing = new Set(S.settings.not_on_path || []);
    const usable = agents.filter((a) => !missing.has(a));
    const project = node("select", { name: "project", id: "ns-project", required: true },
      ...projects.map((p) => node("option", { value: p.path, text: p.name })));
    const agent = node("select", { name: "agent", id: "ns-agent" }, ...agents.map((a) => (missing.has(a)
      ? node("option", { value: a, text: `${a} (not on PATH)`, disabled: true })
      : node("option", { value: a, text: a, selected: a === usable[0] }))));
    const prompt = node("textarea", { name: "prompt", id: "ns-prompt", rows: 3, placeholder: "What it should do first (optional)" });
    const go = node("button", { type: "submit", class: "steer-send", text: "Start", disabled: !projects.length || !usable.length });
    const close = node("button", { type: "button", class: "ghost", text: "Close" });
    const result = node("div", { class: "steer-result", id: "ns-result", role: "status", "aria-live": "polite" });
    const form = node("form", { class: "ns-form" },
      node("h2", { text: "New session" }),
      projects.length ? null : node("p", { class: "ns-none", text: "No directory of yours matches [steer] projects: add one to your config." }),
      usable.length ? null : node("p", { class: "ns-none", text: "No agent of [steer] agents is on the PATH lookout serve runs with." }),
      node("label", {}, node("span", { text: "Project" }), project),
      node("label", {}, node("span", { text: "Agent" }), agent),
      node("label", { class: "wide" }, node("span", { text: "Prompt" }), prompt),
      node("div", { class: "ns-actions" }, go, close), result);
    close.addEventListener("click", () => { section.hidden = true; });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (go.disabled) return;
      go.disabled = true;
      show(result, "pending", [["pending", "starting… (lookout waits for its first hook, up to 30 s)"]]);
      const body = { project: project.value, agent: agent.value };
      if (prompt.value) body.prompt = prompt.value;
      if (await post("/api/start", body, result)) prompt.value = "";
      go.disabled = false;
    });
    const wasOpen = !section.hidden;
    section.replaceChildren(form);
    section.hidden = !wasOpen;
  }

  // -- what the server allows -----------------------------------------------------------------

  async function load() {
    const response = await window.lookout.api("/api/steer").catch(() => null);
    if (!response || response.status === 401) return; // app.js shows how to sign in
    const body = response.ok ? await response.json().catch(() => null) : null;
    const settings = body && body.enabled ? body : null;
    if (JSON.stringify(settings) === JSON.stringify(S.settings)) return;
    S.settings = settings;
    S.on = Boolean(settings);
    if (!S.on) S.boxes.clear();
    panel();
    document.dispatchEvent(new CustomEvent("lookout:steer")); // app.js draws the cards again
  }

  window.lookout.steerBox = box;
  window.lookout.steerPrune = (sessions) => { for (const id of S.boxes.keys()) if (!sessions.has(id)) S.boxes.delete(id); };
  window.lookout.steerLoad = load; // app.js asks again at each snapshot (a new stream)

  document.addEventListener("lookout:signed-out", () => {
    S.settings = null; S.on = false; S.boxes.clear(); panel();
  });
  document.addEventListener("DOMContentLoaded", async () => {
    const open = document.getElementById("newsession-open");
    open.addEventListener("click", () => {
      const section = document.getElementById("newsession");
      section.hidden = !section.hidden;
      if (!section.hidden) document.getElementById("ns-project")?.focus();
    });
    await window.lookout.ready;
    load();
    document.addEventListener("visibilitychange", () => { if (!document.hidden) load(); });
  });
})();
