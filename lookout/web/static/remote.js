// lookout dashboard: permission requests that may be answered from here ([remote] enabled).
// Text from the session (commands, diffs, questions) reaches the page through textContent only.
// An answer is a POST with the page's session secret (app.js) and the request's nonce; the dialog in the terminal stays up
// until one answer wins, so a late tap is told "answered in the terminal".
"use strict";
(() => {
  const POLL_MS = 2000;
  const WORDS = {
    pending: "waiting", allowed: "allowed", denied: "denied",
    answered_locally: "answered in the terminal", ended: "session ended",
    expired: "expired: the terminal decides", abandoned: "no longer waiting",
    released: "back at the terminal: its own prompt decides",
  };
  const R = { list: [], focus: null, sending: new Set(), picked: new Map(), offset: 0, unfolded: new Set(), mine: new Map() };
  // A detail this long is shown folded: Allow waits until it was unfolded, so no part of what
  // would run is ever out of sight when it is approved.
  const FOLD_LINES = 14;
  const FOLD_CHARS = 1200;
  // Controls, bidi overrides and isolates, zero-width and other invisible characters: shown as
  // visible escapes (they could hide or reorder what a command really says), written as
  // `lookout answer` and the alerts write them (lookout/remote/shown.py escape): \x1b, \u200b.
  const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\u115f\u1160\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;

  const node = (...args) => window.lookout.node(...args); // app.js's element builder

  // A section of request cards above the session groups, made on first use (fleet.js's too).
  function section(id, cls) {
    let b = document.getElementById(id);
    if (!b) {
      b = node("section", { id, class: cls, "aria-live": "polite", hidden: true });
      const main = document.getElementById("main");
      main.insertBefore(b, document.getElementById("groups"));
    }
    return b;
  }

  // The time left to answer, `ms` from now: "2m05s", "45s" (fleet.js counts the same way).
  function timeLeft(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
  }

  const box = () => section("requests", "requests");
  const left = (r) => timeLeft(Date.parse(r.expires_at) - Date.now() - R.offset);

  function fromHash() {
    const m = /^#request=([0-9a-f]+)$/.exec(location.hash);
    R.focus = m ? m[1] : null;
    render();
    if (R.focus) document.querySelector(`[data-request-id="${R.focus}"]`)?.scrollIntoView({ block: "start" });
  }

  async function load() {
    const response = await window.lookout.api("/api/requests?all=1").catch(() => null);
    if (!response || !response.ok) return; // 401: app.js shows how to sign in
    const date = Date.parse(response.headers.get("Date") || "");
    if (!Number.isNaN(date)) R.offset = 0; // expiry is computed from the server's timestamps
    const body = await response.json().catch(() => ({}));
    R.list = body.requests || [];
    render();
  }

  function say(r, text, kind) {
    const card = document.querySelector(`[data-request-id="${r.id}"]`);
    const line = card?.querySelector(".req-result");
    if (line) { line.textContent = text; line.dataset.kind = kind; }
  }

  async function send(r, decision, answers) {
    if (R.sending.has(r.id)) return;
    R.sending.add(r.id);
    render();
    const body = { decision, nonce: r.nonce };
    if (answers) body.answers = answers;
    const response = await window.lookout.api(`/api/requests/${encodeURIComponent(r.id)}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    }).catch(() => null);
    R.sending.delete(r.id);
    const reply = response ? await response.json().catch(() => ({})) : {};
    if (!response) say(r, "lookout is not reachable: try again", "error");
    else if (response.ok) { R.focus = r.id; R.mine.set(r.id, decision); }
    else if (response.status === 401) { return; } // app.js shows how to sign in (never a reload)
    else {
      R.focus = r.id;
      const item = R.list.find((x) => x.id === r.id);
      if (item && response.status === 409) { item.status = "closed"; item.reason = reply.error; }
    }
    await load();
    if (response && !response.ok) say(r, reply.error || `refused (${response.status})`, "error");
  }

  function questionBlock(r) {
    const out = [];
    const single = r.questions.length === 1 && !r.questions[0].multi_select;
    for (const q of r.questions) {
      const chosen = R.picked.get(`${r.id}\n${q.question}`) || new Set();
      const opts = node("div", { class: "req-options" });
      q.options.forEach((label, i) => {
        const about = (q.descriptions || [])[i] || "";
        const b = node("button", { type: "button", class: chosen.has(label) ? "opt on" : "opt", "data-option": label, disabled: R.sending.has(r.id) },
          node("span", { class: "opt-label" }, ...visibleText(label)),
          about ? node("span", { class: "opt-desc" }, ...visibleText(about)) : null);
        b.addEventListener("click", () => {
          if (single) { send(r, "allow", { [q.question]: label }); return; }
          const set = new Set(chosen);
          if (q.multi_select) { set.has(label) ? set.delete(label) : set.add(label); } else { set.clear(); set.add(label); }
          R.picked.set(`${r.id}\n${q.question}`, set);
          render();
        });
        opts.append(b);
      });
      out.push(node("div", { class: "req-q" }, node("div", { class: "req-qtext" }, ...visibleText(q.question)), opts));
    }
    if (!single) {
      const go = node("button", { type: "button", class: "allow", text: "Send answers", "data-decision": "allow", disabled: R.sending.has(r.id) });
      go.addEventListener("click", () => {
        const answers = {};
        for (const q of r.questions) {
          const set = R.picked.get(`${r.id}\n${q.question}`);
          if (!set || !set.size) { say(r, `pick an answer for "${q.question}"`, "error"); return; }
          answers[q.question] = q.multi_select ? [...set] : [...set][0];
        }
        send(r, "allow", answers);
      });
      out.push(go);
    }
    return out;
  }

  // The text as nodes: plain runs as text, each invisible character as a marked escape.
  function visibleText(text) {
    const out = [];
    let run = "";
    for (const ch of text) {
      if (ch !== "\n" && INVISIBLE.test(ch)) {
        if (run) { out.push(document.createTextNode(run)); run = ""; }
        const point = ch.codePointAt(0);
        const code = point < 0x100 ? `x${point.toString(16).padStart(2, "0")}` : `u${point.toString(16).padStart(4, "0")}`;
        out.push(node("span", { class: "esc", text: `\\${code}`, title: "an invisible character" }));
      } else run += ch;
    }
    if (run) out.push(document.createTextNode(run));
    return out;
  }

  function detailBlock(r) {
    // A question's text is shown once, with its options (questionBlock); the box holds the rest.
    const asked = Boolean(r.questions && r.questions.length);
    const text = (asked ? r.detail : r.detail || r.summary) || "";
    const lines = text.split("\n").length;
    const long = lines > FOLD_LINES || text.length > FOLD_CHARS;
    const folded = long && !R.unfolded.has(r.id);
    const pre = node("pre", { class: folded ? "req-detail folded" : "req-detail" }, ...visibleText(text));
    const out = [];
    if (r.flags && r.flags.length) {
      out.push(node("div", { class: "req-flags" }, ...r.flags.map((f) =>
        node("span", { class: f.risky ? "req-flag risky" : "req-flag", text: f.risky ? `⚠ ${f.name}` : f.name, "data-flag": f.name }))));
    }
    if (text || !asked) out.push(pre);
    if (folded) {
      const more = node("button", { type: "button", class: "req-more", text: `Show all of it (${lines} lines, ${text.length} characters) before answering` });
      more.addEventListener("click", () => { R.unfolded.add(r.id); render(); });
      out.push(more);
    }
    return { nodes: out, folded };
  }

  // A question's answer is the option chosen: "SQLite", never "allowed".
  function chosenText(r) {
    if (!r.answers || r.decision === "deny") return "";
    return Object.values(r.answers).map((v) => (Array.isArray(v) ? v.join(", ") : String(v))).join("; ");
  }

  // This page's own click answered it: say so, not "already answered" (as if someone else had).
  function mineText(r) {
    if (!R.mine.has(r.id) || (r.status !== "allowed" && r.status !== "denied")) return "";
    const said = chosenText(r);
    const verb = said ? `answered “${said}”` : (r.decision === "deny" ? "denied" : "allowed");
    return `${verb} by you (this page)`;
  }

  function card(r) {
    const open = r.status === "pending";
    const said = chosenText(r);
    const head = node("div", { class: "req-head" },
      node("span", { class: "req-tool", text: r.tool_name || "?" }),
      node("span", { class: "req-project", text: [r.project || "?", (r.session_id || "").slice(0, 8)].join(" · "), title: r.project || "" }),
      node("span", { class: open ? "req-left" : `req-state ${r.status}`, text: open ? `answer within ${left(r)}` : (mineText(r) || (said ? `answered: ${said}` : (r.reason || WORDS[r.status] || r.status))), "data-expires": r.expires_at }));
    const what = detailBlock(r);
    const actions = node("div", { class: "req-actions" });
    if (open && r.questions) {
      actions.append(...questionBlock(r));
      const deny = node("button", { type: "button", class: "deny", text: "Dismiss", "data-decision": "deny", title: "Refuse to answer (Claude is told it was denied)", disabled: R.sending.has(r.id) });
      deny.addEventListener("click", () => send(r, "deny"));
      actions.append(deny);
    } else if (open) {
      // The server says whether Allow may be offered (lookout/remote/shown.py); folded, it waits.
      const blocked = !r.offers_allow || what.folded;
      const allow = node("button", { type: "button", class: "allow", text: "Allow", "data-decision": "allow", disabled: R.sending.has(r.id) || blocked, title: !r.offers_allow ? (r.why_no_allow || "not here") : (what.folded ? "show all of it first" : null) });
      allow.addEventListener("click", () => send(r, "allow"));
      const deny = node("button", { type: "button", class: "deny", text: "Deny", "data-decision": "deny", disabled: R.sending.has(r.id) });
      deny.addEventListener("click", () => send(r, "deny"));
      actions.append(allow, deny);
      if (r.allow_always && !blocked) {
        const always = node("button", { type: "button", class: "always", text: "Allow always", "data-decision": "allow_always", disabled: R.sending.has(r.id) });
        always.addEventListener("click", () => send(r, "allow_always"));
        actions.append(always);
      }
    } else if (r.decided_by) {
      const verb = said ? `answered “${said}”` : (r.decision === "deny" ? "denied" : "allowed");
      actions.append(node("div", { class: "req-by", text: `${verb} by ${r.decided_by}` }));
    }
    return node("article", { class: `request ${open ? "open" : "closed"}${r.id === R.focus ? " focus" : ""}`, "data-request-id": r.id, "data-status": r.status },
      head, ...what.nodes, actions, node("div", { class: "req-result", role: "status" }));
  }

  function render() {
    const b = box();
    const shown = R.list.filter((r) => r.status === "pending" || r.id === R.focus);
    b.replaceChildren();
    if (!shown.length) { b.hidden = true; return; }
    b.hidden = false;
    const waiting = shown.filter((r) => r.status === "pending").length;
    b.append(node("h2", { text: waiting ? `Waiting for your answer (${waiting})` : "Request" }), ...shown.map(card));
  }

  function tick() {
    for (const n of document.querySelectorAll(".req-left[data-expires]")) {
      const r = R.list.find((x) => x.expires_at === n.dataset.expires);
      if (r) n.textContent = `answer within ${left(r)}`;
    }
  }

  window.lookout.visibleText = visibleText; // steer.js shows what was delivered the same way
  window.lookout.requestSection = section; // fleet.js: the other hosts' requests
  window.lookout.timeLeft = timeLeft;

  document.addEventListener("DOMContentLoaded", async () => {
    await window.lookout.ready; // a sign-in link is exchanged first
    window.addEventListener("hashchange", fromHash);
    fromHash();
    load();
    setInterval(() => { if (!document.hidden) load(); }, POLL_MS);
    document.addEventListener("lookout:requests", () => load()); // pushed by the stream
    setInterval(tick, 1000);
    document.addEventListener("visibilitychange", () => { if (!document.hidden) load(); });
  });
})();
