// lookout dashboard: the "this week" panel. How long sessions waited on you each day of the last
// seven (GET /api/report), as a small inline SVG bar chart; no library. Text through textContent.
"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const REFRESH_MS = 60000;

  function duration(s) {
    if (s < 10) return `${s.toFixed(1)}s`;
    const whole = Math.round(s);
    const h = Math.floor(whole / 3600), m = Math.floor((whole % 3600) / 60), sec = whole % 60;
    if (h) return `${h}h ${String(m).padStart(2, "0")}m`;
    return m ? `${m}m ${String(sec).padStart(2, "0")}s` : `${sec}s`;
  }

  function el(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function chart(days) {
    const w = 280, h = 90, pad = 16, gap = 6;
    const bar = (w - gap * (days.length - 1)) / days.length;
    const top = Math.max(1, ...days.map((d) => d.wait_s));
    const svg = el("svg", { viewBox: `0 0 ${w} ${h + pad}`, width: w, height: h + pad,
      role: "img", "aria-label": "waiting on you per day, last 7 days", class: "week-chart" });
    days.forEach((d, i) => {
      const bh = Math.round((d.wait_s / top) * (h - 4));
      const x = i * (bar + gap);
      const r = el("rect", { x, y: h - bh, width: bar, height: Math.max(bh, 1), rx: 2,
        fill: "currentColor", "fill-opacity": d.wait_s ? 0.8 : 0.2 });
      r.append(el("title", {}, `${d.day}: ${d.episodes} waits, ${duration(d.wait_s)}`));
      svg.append(r);
      const label = new Date(`${d.day}T12:00:00`).toLocaleDateString(undefined, { weekday: "narrow" });
      svg.append(el("text", { x: x + bar / 2, y: h + pad - 3, "text-anchor": "middle",
        "font-size": 10, fill: "currentColor" }, label));
    });
    return svg;
  }

  function render(data) {
    let box = document.getElementById("week");
    if (!box) {
      box = document.createElement("section");
      box.id = "week";
      box.className = "week";
      const main = document.getElementById("main");
      if (!main) return;
      main.append(box);
    }
    box.replaceChildren();
    const h = document.createElement("h2");
    h.textContent = "This week";
    const p = document.createElement("p");
    p.className = "sub";
    p.textContent = data.episodes
      ? `${data.episodes} waits, ${duration(data.wait_s)} in all; median ${duration(data.p50_s)}, p95 ${duration(data.p95_s)}`
      : "nothing waited on you this week";
    box.append(h, p, chart(data.days || []));
  }

  async function load() {
    try {
      // Signed like every request of the page (auth.js); signed out, there is nothing to show.
      const res = await window.lookout.api("/api/report");
      if (res.ok) render(await res.json());
      else if (res.status === 401) document.getElementById("week")?.remove();
    } catch (e) { /* offline: the panel waits for the next try */ }
  }

  document.addEventListener("DOMContentLoaded", async () => {
    await window.lookout.ready; // a sign-in link is exchanged first
    load();
    setInterval(() => { if (!document.hidden) load(); }, REFRESH_MS);
  });
})();
