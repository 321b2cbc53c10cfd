// lookout dashboard. Plain JS, no build step, no third-party code. Every text that comes from a
// session (prompts, commands, Claude's words, paths) reaches the page through textContent only.
"use strict";

const ORDER = ["attention", "working", "idle", "ended"];
const GROUP_TITLES = { attention: "Needs you", working: "Working", idle: "Idle", ended: "Ended" };
const REASONS = {
  permission: "needs permission", question: "has a question", plan: "plan to approve",
  elicitation: "form to fill in", input: "needs input", error: "turn failed",
};
const SINCE_WORDS = { attention: "waiting for", working: "working for", idle: "idle for", ended: "ended" };
const PAGE = 50;

const state = {
  sessions: new Map(),     // session_id -> session, as /api/sessions gives it
  host: "",
  offset: 0,               // server clock minus ours, so durations are right on a phone
  seen: new Set(),         // attention episodes already announced
  primed: false,           // the first snapshot announces nothing: it is what was already there
  open: null,              // session id whose timeline is shown
  oldest: null,            // paging cursor of the open timeline
  stream: null,
  lastMessage: 0,
};

const $ = (id) => document.getElementById(id);

// -- signing in ---------------------------------------------------------------------------------
// auth.js signs in with a one-time link (#code=...) and signs every request the page makes; no
// cookie carries any authority (a browser would send one to every port of this host).
const api = (path, options) => window.lookout.api(path, options);

// The page's one element builder: remote.js and steer.js build theirs with it too.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-") || key.startsWith("aria-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) if (child) node.append(child);
  return node;
}
window.lookout.node = el;

function now() { return Date.now() + state.offset; }

function duration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor(s % 3600 / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86400)}d${Math.floor(s % 86400 / 3600)}h`;
}

function sinceText(status, sinceMs) {
  const d = duration(now() - sinceMs);
  return status === "ended" ? `ended ${d} ago` : `${SINCE_WORDS[status] || status} ${d}`;
}

function statusLabel(status, reason) {
  if (status === "attention") return REASONS[reason] || "needs you";
  return status || "unknown";
}

// -- the session list ---------------------------------------------------------------------------

function sessionCard(s) {
  const since = Date.parse(s.since || s.updated_at);
  const who = el("div", { class: "who" },
    el("div", { class: "project", text: s.title || s.project || "?", title: s.project || "" }),
    el("div", { class: "meta", text: [s.agent !== "claude" ? s.agent : "", s.host || state.host, s.short_id || s.session_id.slice(0, 8)].filter(Boolean).join(" · ") }),
    // What proved the status (shown with the Evidence button): hook, client, transcript, process.
    el("div", { class: "evidence", text: `evidence: ${s.evidence || "?"}${s.hooks === false ? " · no hooks" : ""}` }));
  const stateBox = el("div", { class: "state" },
    el("span", { class: `pill ${s.status}`, text: statusLabel(s.status, s.reason) }),
    el("span", { class: "since", "data-since": String(since), "data-status": s.status, text: sinceText(s.status, since) }));
  const what = el("div", { class: "what" });
  if (s.detail) what.append(el("div", { class: "detail", text: s.detail }));
  if (s.summary) what.append(el("div", { class: s.detail === "Bash" ? "summary cmd" : "summary", text: s.summary, title: s.summary }));
  const actions = el("div", { class: "actions" });
  if (s.tmux_pane && s.status !== "ended") {
    const jump = el("button", { type: "button", class: "jump", text: "Jump", title: `tmux pane ${s.tmux_pane}` });
    jump.addEventListener("click", (e) => { e.stopPropagation(); jumpTo(s); });
    actions.append(jump);
  }
  const card = el("article", { class: s.stale ? "session stale" : "session", "data-id": s.session_id, "data-status": s.status, tabIndex: 0 },
    el("div", { class: "row" }, who, stateBox, what, actions));
  const children = (s.agents || []).filter((a) => a.status !== "done" || s.status === "attention");
  if (children.length) {
    const list = el("ul", { class: "agents" });
    for (const a of children) {
      list.append(el("li", {},
        el("span", { class: "kind", text: a.agent_type || "subagent" }),
        el("span", { class: `pill ${a.status || "ended"}`, text: statusLabel(a.status, a.reason) }),
        a.detail ? el("span", { class: "detail", text: a.detail }) : null));
    }
    card.append(list);
  }
  // The message box and Interrupt ([steer] on; steer.js): the same node across rebuilds.
  const steer = window.lookout.steerBox ? window.lookout.steerBox(s) : null;
  if (steer) card.append(steer);
  card.addEventListener("click", () => openTimeline(s.session_id));
  card.addEventListener("keydown", (e) => { if (e.key === "Enter") openTimeline(s.session_id); });
  return card;
}

// A card is rebuilt only when its session changed: the others stay the same DOM nodes (a click
// or a text selection survives an update of another session).
const cards = new Map(); // session id -> {key, node}
function cardFor(s) {
  const key = JSON.stringify([s.title, s.evidence, s.hooks, s.project, s.short_id, s.agent, s.host, s.status, s.reason, s.since,
    s.updated_at, s.detail, s.summary, s.stale, s.tmux_pane, s.agents]);
  const known = cards.get(s.session_id);
  if (known && known.key === key) return known.node;
  const node = sessionCard(s);
  cards.set(s.session_id, { key, node });
  return node;
}

// lookout.sessions.order, as every list of sessions: attention first, the one waiting longest
// on top; then by status, the most recently active first.
function rank(s) {
  const i = ORDER.indexOf(s.status);
  return i < 0 ? ORDER.length : i;
}
function sorted() {
  return [...state.sessions.values()].sort((a, b) => {
    if (rank(a) !== rank(b)) return rank(a) - rank(b);
    if (a.status === "attention") {
      return Date.parse(a.waiting_since || a.updated_at) - Date.parse(b.waiting_since || b.updated_at);
    }
    return Date.parse(b.updated_at) - Date.parse(a.updated_at);
  });
}

function render() {
  const groups = $("groups");
  // Redrawing moves every card, which takes the focus from a message box being typed into.
  const typing = groups.contains(document.activeElement) ? document.activeElement : null;
  const caret = typing && "selectionStart" in typing ? [typing.selectionStart, typing.selectionEnd] : null;
  const byStatus = new Map(ORDER.map((k) => [k, []]));
  for (const s of sorted()) (byStatus.get(s.status) || byStatus.get("ended")).push(s);
  const wasOpen = groups.querySelector("details.group")?.open || false;
  groups.replaceChildren();
  for (const status of ORDER) {
    const items = byStatus.get(status);
    if (!items.length) continue;
    const list = el("div", { class: "list" }, ...items.map(cardFor));
    const title = `${GROUP_TITLES[status]} (${items.length})`;
    if (status === "ended") {
      groups.append(el("details", { class: "group", open: wasOpen, "data-group": status }, el("summary", { text: title }), list));
    } else {
      groups.append(el("section", { class: "group", "data-group": status }, el("h2", { text: title }), list));
    }
  }
  for (const id of cards.keys()) if (!state.sessions.has(id)) cards.delete(id);
  if (window.lookout.steerPrune) window.lookout.steerPrune(state.sessions);
  if (typing && typing !== document.activeElement && groups.contains(typing)) {
    typing.focus({ preventScroll: true });
    if (caret) typing.setSelectionRange(caret[0], caret[1]);
  }
  $("empty").hidden = state.sessions.size > 0;
  const counts = $("counts");
  counts.replaceChildren();
  for (const status of ORDER) {
    const n = byStatus.get(status).length;
    if (n) counts.append(el("span", { class: `count ${status}`, text: `${n} ${status === "attention" ? "need you" : status}` }));
  }
  const waiting = byStatus.get("attention").length;
  document.title = waiting ? `(${waiting}) lookout` : "lookout";
}

function tick() {
  for (const node of document.querySelectorAll(".since[data-since]")) {
    node.textContent = sinceText(node.dataset.status, Number(node.dataset.since));
  }
  if (state.stream && Date.now() - state.lastMessage > 35000) setLive("reconnecting");
  if (state.stream && Date.now() - state.lastMessage > 50000) {
    // A stream silent past three heartbeats is dead (a fetch does not reconnect by itself).
    const dead = state.stream;
    state.stream = null;
    dead.abort();
    connect();
  }
}

// -- notifications ------------------------------------------------------------------------------

function announce(s) {
  if (s.status !== "attention" || !s.episode || state.seen.has(s.episode)) return;
  state.seen.add(s.episode);
  if (!state.primed || !("Notification" in window) || Notification.permission !== "granted") return;
  const title = `${s.title || s.project || "?"} · ${statusLabel(s.status, s.reason)}`;
  try {
    const note = new Notification(title, { body: s.summary || s.detail || "", tag: s.episode });
    note.onclick = () => { window.focus(); openTimeline(s.session_id); };
  } catch (err) {
    // Some mobile browsers only notify through a service worker; the title badge still counts.
  }
}

function setupNotify() {
  const button = $("notify");
  if (!("Notification" in window) || Notification.permission !== "default") return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    await Notification.requestPermission();
    button.hidden = Notification.permission !== "default";
  });
}

// -- data ---------------------------------------------------------------------------------------

function setLive(text) { const live = $("live"); live.dataset.state = text; live.textContent = text; }

function showLogin() {
  const why = window.lookout.why();
  $("login").hidden = false;
  $("login-failed").hidden = !why;
  $("login-failed").textContent = why ? why.text : "";
  $("login-failed").dataset.reason = why ? why.reason : "";
  $("notify").hidden = true; // nothing to be notified of until signed in
  $("groups").replaceChildren();
  $("empty").hidden = true;
  setLive("signed out");
  if (state.stream) { state.stream.abort(); state.stream = null; }
}
document.addEventListener("lookout:signed-out", showLogin);
// Steering turned on or off (steer.js): every card is drawn again, with or without its box.
document.addEventListener("lookout:steer", () => { cards.clear(); if (state.primed) render(); });

// The server's key for a session: its id, or host/id when it serves a fleet (two hosts may
// share an id); "removed" messages carry the same key.
function keyOf(s) {
  return s.host ? `${s.host}/${s.session_id}` : s.session_id;
}

function applySnapshot(data) {
  if (window.lookout.steerLoad) window.lookout.steerLoad(); // [steer] may have changed meanwhile
  state.offset = (data.now_ms || Date.now()) - Date.now();
  state.host = data.host || state.host;
  $("host").textContent = state.host;
  state.sessions = new Map(data.sessions.map((s) => [keyOf(s), s]));
  // away.js draws the header's away toggle from this host's switch (absent: no such switch).
  document.dispatchEvent(new CustomEvent("lookout:away", { detail: data.away === undefined ? null : data.away }));
  const banner = $("config-error");
  banner.hidden = !data.config_error;
  banner.textContent = data.config_error ? `Notifications are off: ${data.config_error}` : "";
  for (const s of state.sessions.values()) announce(s);
  state.primed = true;
  render();
}

function onMessage(name, data) {
  state.lastMessage = Date.now();
  if (name === "snapshot") { applySnapshot(data); setLive("live"); return; }
  if (name === "session") {
    state.offset = data.now_ms - Date.now();
    state.sessions.set(keyOf(data.session), data.session);
    announce(data.session);
    render();
    if (state.open === data.session.session_id) refreshTimeline();
  } else if (name === "removed") {
    state.sessions.delete(data.session_id);
    render();
  } else if (name === "away") {
    document.dispatchEvent(new CustomEvent("lookout:away", { detail: data.away }));
  } else if (name === "requests") {
    document.dispatchEvent(new CustomEvent("lookout:requests")); // remote.js reloads them
  } else if (name === "heartbeat") {
    state.offset = data.now_ms - Date.now();
    setLive("live");
  }
}

// Server-Sent Events read with fetch (EventSource cannot send the Authorization header).
async function connect() {
  window.lookout.lost(); // a new stream may reach another server: it proves itself first
  const controller = new AbortController();
  state.stream = controller;
  const response = await api("/api/stream", { signal: controller.signal }).catch(() => null);
  if (state.stream !== controller) return;
  if (response && response.status === 401) { showLogin(); return; }
  if (response && response.ok && response.body) {
    state.lastMessage = Date.now();
    setLive("live");
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let name = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (data.length) onMessage(name, JSON.parse(data.join("\n")));
        }
      }
    } catch (err) {
      // the network went away, or the stream was stopped: reconnect below unless stopped
    }
  }
  if (state.stream !== controller) return;
  state.stream = null;
  window.lookout.lost(); // the server may be gone: whatever answers next proves itself first
  setLive("reconnecting");
  setTimeout(connect, 2000);
}

async function start() {
  await window.lookout.ready;
  const response = await api("/api/sessions?all=1").catch(() => null);
  if (!response) { setLive("offline"); setTimeout(start, 3000); return; }
  if (response.status === 401) { showLogin(); return; }
  setupNotify();
  applySnapshot(await response.json());
  connect();
  setInterval(tick, 1000);
  window.addEventListener("hashchange", fromHash);
  fromHash();
}

// -- timeline -----------------------------------------------------------------------------------

function fromHash() {
  const match = /^#session=(.+)$/.exec(location.hash);
  if (match) openTimeline(decodeURIComponent(match[1]), false);
  else closeTimeline(false);
}

function eventItem(r) {
  const when = new Date(r.ts);
  const sameDay = when.toDateString() === new Date().toDateString();
  const time = el("time", { dateTime: r.ts, text: sameDay ? when.toLocaleTimeString() : when.toLocaleString() });
  const head = el("div", { class: "ev", text: r.event || "?" },
    r.status ? el("span", { class: `pill ${r.status}`, text: statusLabel(r.status, r.reason) }) : null);
  const bits = [r.detail ? `[${r.detail}]` : "", r.agent_id ? `<${r.agent_type || r.agent_id}>` : "", r.summary || ""].filter(Boolean);
  if (r.duplicate) bits.push("(duplicate)");
  if (r.late) bits.push("(late)");
  return el("li", { class: r.duplicate || r.late ? "dup" : "", "data-seq": String(r.seq) }, time, head,
    bits.length ? el("div", { class: "text", text: bits.join(" ") }) : null);
}

async function loadEvents(id, before) {
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (before !== null && before !== undefined) query.set("before", String(before));
  const response = await api(`/api/sessions/${encodeURIComponent(id)}/events?${query}`);
  if (response.status === 401) { showLogin(); return null; }
  if (!response.ok) return null;
  return response.json();
}

async function openTimeline(id, push = true) {
  if (push) { history.pushState(null, "", `#session=${encodeURIComponent(id)}`); }
  state.open = id;
  state.oldest = null;
  const s = state.sessions.get(id);
  $("tl-title").textContent = s ? `${s.title || s.project || "?"} · ${statusLabel(s.status, s.reason)}` : id;
  $("tl-sub").textContent = [id, s && s.cwd].filter(Boolean).join(" · ");
  $("tl-events").replaceChildren();
  $("timeline").hidden = false;
  const page = await loadEvents(id, null);
  if (!page || state.open !== id) return;
  $("tl-events").replaceChildren(...page.events.map(eventItem));
  state.oldest = page.next;
  $("tl-more").hidden = page.next === null;
  $("tl-close").focus();
}

async function refreshTimeline() {
  const id = state.open;
  const page = await loadEvents(id, null);
  if (!page || state.open !== id) return;
  const list = $("tl-events");
  const top = Number(list.firstElementChild?.dataset.seq || 0);
  const fresh = page.events.filter((r) => r.seq > top);
  list.prepend(...fresh.map(eventItem));
  const s = state.sessions.get(id);
  if (s) $("tl-title").textContent = `${s.title || s.project || "?"} · ${statusLabel(s.status, s.reason)}`;
}

async function olderEvents() {
  const id = state.open;
  const page = await loadEvents(id, state.oldest);
  if (!page || state.open !== id) return;
  $("tl-events").append(...page.events.map(eventItem));
  state.oldest = page.next;
  $("tl-more").hidden = page.next === null;
}

function closeTimeline(push = true) {
  state.open = null;
  $("timeline").hidden = true;
  if (push && location.hash) history.pushState(null, "", location.pathname);
}

// -- jump ---------------------------------------------------------------------------------------

let toastTimer = 0;
function toast(text) {
  const node = $("toast");
  node.textContent = text;
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, 4000);
}

async function jumpTo(s) {
  const response = await api(`/api/sessions/${encodeURIComponent(s.session_id)}/jump`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: "{}",
  }).catch(() => null);
  if (!response) { toast("lookout is not reachable"); return; }
  if (response.status === 401) { showLogin(); return; }
  const body = await response.json().catch(() => ({}));
  if (response.ok) toast(body.message || "switched");
  else toast([body.error || `jump failed (${response.status})`, body.hint].filter(Boolean).join("\n"));
}

document.addEventListener("DOMContentLoaded", () => {
  $("tl-close").addEventListener("click", () => closeTimeline());
  $("tl-more").addEventListener("click", olderEvents);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && state.open) closeTimeline(); });
  start();
});

// -- evidence on request ------------------------------------------------------------------------
// The Evidence button shows, on every card, what proved its status (docs/state-model.md).
(function evidenceToggle() {
  const button = $("evidence");
  if (!button) return;
  const show = (on) => {
    document.body.classList.toggle("show-evidence", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  };
  try { show(localStorage.getItem("lookout.evidence") === "1"); } catch (err) { show(false); }
  button.addEventListener("click", () => {
    const on = !document.body.classList.contains("show-evidence");
    try { localStorage.setItem("lookout.evidence", on ? "1" : "0"); } catch (err) { /* not kept */ }
    show(on);
  });
})();
