// lookout dashboard on the fleet's hub (issue 42, docs/dashboard.md): the other hosts' permission
// requests with Allow and Deny. The server says whether this page is the hub (GET
// /api/fleet/requests); off the hub nothing here shows and other hosts' cards stay read-only.
// Allow follows the one rule (lookout/remote/shown.py), as the owning host judged it: offered
// only when the card shows all of the input, and a folded card waits until it was unfolded.
// A press goes to the owning host (POST, signed like every other) and the card says what came
// of it: answered, refused, or no answer from that host. Text reaches the page through
// textContent only, invisible characters as visible escapes (remote.js's visibleText, whose
// section and countdown these cards share).
"use strict";
(() => {
  const POLL_MS = 2000;
  const KEEP_MS = 60000; // an answered card stays this long with its outcome
  const FOLD_LINES = 14;
  const FOLD_CHARS = 1200;
  const F = { hub: false, host: "", list: [], sending: new Set(), unfolded: new Set(), done: new Map(), problem: "", known: false };

  const node = (...args) => window.lookout.node(...args);
  const visible = (text) => window.lookout.visibleText(text);
  const keyOf = (r) => `${r.host}/${r.token}`;

  const box = () => window.lookout.requestSection("fleet-requests", "requests fleet-requests");
  const left = (r) => window.lookout.timeLeft(r.expires_ms - Date.now());

  async function load() {
    const response = await window.lookout.api("/api/fleet/requests").catch(() => null);
    if (!response || !response.ok) return; // 401: app.js shows how to sign in
    const body = await response.json().catch(() => ({}));
    F.known = true;
    const wasHub = F.hub;
    F.hub = Boolean(body.hub);
    F.host = body.host || "";
    F.list = body.requests || [];
    F.problem = body.problem || "";
    window.lookout.fleetHub = F.hub ? F.host : null; // steer.js: boxes on the other hosts' cards
    if (wasHub !== F.hub) document.dispatchEvent(new CustomEvent("lookout:steer")); // cards again
    render();
  }

  function outcomeOf(response, reply, r, decision) {
    if (!response) return ["error", "lookout is not reachable: nothing was sent"];
    if (response.ok) return ["done", `answered on ${r.host}: ${decision === "allow" ? "allowed" : "denied"}`];
    if (reply.outcome === "no_answer") return ["error", reply.error];
    return ["error", `refused: ${reply.error || response.status}`];
  }

  async function send(r, decision) {
    const key = keyOf(r);
    if (F.sending.has(key)) return;
    F.sending.add(key);
    F.done.set(key, { r, kind: "pending", text: `sending to ${r.host}…`, at: Date.now() });
    render();
    const path = `/api/fleet/requests/${encodeURIComponent(r.host)}/${encodeURIComponent(r.token)}`;
    const response = await window.lookout.api(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ decision }),
    }).catch(() => null);
    F.sending.delete(key);
    if (response && response.status === 401) { F.done.delete(key); render(); return; } // app.js: sign in
    const reply = response ? await response.json().catch(() => ({})) : {};
    const [kind, text] = outcomeOf(response, reply, r, decision);
    F.done.set(key, { r, kind, text, at: Date.now() });
    await load();
  }

  function card(r) {
    const key = keyOf(r);
    const live = F.list.some((x) => keyOf(x) === key);
    const outcome = F.done.get(key);
    const text = r.detail || "";
    const lines = text.split("\n").length;
    const long = lines > FOLD_LINES || text.length > FOLD_CHARS;
    const folded = long && !F.unfolded.has(key);
    const head = node("div", { class: "req-head" },
      node("span", { class: "req-host", text: r.host }),
      node("span", { class: "req-tool", text: r.tool_name || "?" }),
      node("span", { class: "req-project", text: [r.project || "?", (r.session_id || "").slice(0, 8)].filter(Boolean).join(" · "), title: r.project || "" }),
      node("span", { class: live ? "req-left" : "req-state", text: live ? `answer within ${left(r)}` : "no longer waiting", "data-expires-ms": String(r.expires_ms || 0) }));
    const parts = [head, node("pre", { class: folded ? "req-detail folded" : "req-detail" }, ...visible(text))];
    if (folded) {
      const more = node("button", { type: "button", class: "req-more", text: `Show all of it (${lines} lines, ${text.length} characters) before answering` });
      more.addEventListener("click", () => { F.unfolded.add(key); render(); });
      parts.push(more);
    }
    const actions = node("div", { class: "req-actions" });
    if (live) {
      const sending = F.sending.has(key);
      const blocked = !r.offers_allow || folded;
      const allow = node("button", { type: "button", class: "allow", text: "Allow", "data-decision": "allow", disabled: sending || blocked,
        title: !r.offers_allow ? (r.why_no_allow || "not here") : (folded ? "show all of it first" : null) });
      allow.addEventListener("click", () => send(r, "allow"));
      const deny = node("button", { type: "button", class: "deny", text: "Deny", "data-decision": "deny", disabled: sending });
      deny.addEventListener("click", () => send(r, "deny"));
      actions.append(allow, deny);
      if (!r.offers_allow) actions.append(node("div", { class: "req-by", text: r.why_no_allow || "" }));
    }
    parts.push(actions);
    const result = node("div", { class: "req-result", role: "status" });
    if (outcome) { result.textContent = outcome.text; result.dataset.kind = outcome.kind; }
    parts.push(result);
    return node("article", { class: `request ${live ? "open" : "closed"}`, "data-fleet-request": key, "data-host": r.host }, ...parts);
  }

  function render() {
    const b = box();
    b.replaceChildren();
    if (!F.hub) { b.hidden = true; return; }
    const cutoff = Date.now() - KEEP_MS;
    for (const [key, d] of F.done) if (d.at < cutoff && !F.sending.has(key)) F.done.delete(key);
    const shown = [...F.list];
    for (const [key, d] of F.done) if (!F.list.some((x) => keyOf(x) === key)) shown.push(d.r);
    if (!shown.length && !F.problem) { b.hidden = true; return; }
    b.hidden = false;
    b.append(node("h2", { text: `Waiting on other hosts (${F.list.length})` }));
    if (F.problem) b.append(node("p", { class: "banner", text: `The other hosts' requests are not shown: ${F.problem}` }));
    b.append(...shown.map(card));
  }

  function tick() {
    for (const n of document.querySelectorAll("#fleet-requests .req-left[data-expires-ms]")) {
      const ms = Number(n.dataset.expiresMs);
      if (ms) n.textContent = `answer within ${left({ expires_ms: ms })}`;
    }
  }

  document.addEventListener("lookout:signed-out", () => { F.hub = false; F.known = false; F.list = []; window.lookout.fleetHub = null; render(); });
  document.addEventListener("DOMContentLoaded", async () => {
    await window.lookout.ready;
    load(); // off the hub this one answer is all: a server does not become the hub while it runs
    setInterval(() => { if ((F.hub || !F.known) && !document.hidden) load(); }, POLL_MS);
    document.addEventListener("lookout:requests", () => { if (F.hub) load(); }); // pushed by the stream
    setInterval(tick, 1000);
  });
})();
