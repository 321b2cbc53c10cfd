// lookout dashboard: signing in, and every request the page makes (window.lookout.api). Plain JS.
//
// Whatever answers on this port after `lookout serve` stops (another user may bind it) must get
// nothing it can use. So (docs/security.md, "Dashboard"):
// - A one-time sign-in link (#code=...) gives a session id and its key, once. The key is kept
//   where this origin's scripts can use it but not read it (a non-extractable WebCrypto key in
//   IndexedDB, so a new tab of an alert's link is signed in too) and is never sent again.
// - Before it sends anything signed to a server, the page has it prove it knows the key
//   (POST /api/hello with a fresh challenge): a server that cannot gets nothing more.
// - Each request carries `Authorization: Lookout SESSION TS NONCE MAC`: a MAC of the method,
//   path, body, the server's time and a fresh nonce. The server takes each nonce once, within
//   two minutes, and the key itself dies with the server process: a restart signs pages out.
"use strict";
(() => {
  const STORE = "auth";
  const ITEM = "session";
  const subtle = (window.crypto && window.crypto.subtle) || null; // absent on plain-HTTP pages
  const encoder = new TextEncoder();
  // Why the page is signed out, as the sign-in panel says it.
  const WHY = {
    link: "This sign-in link was used already or has expired.",
    restarted: "The dashboard restarted: sign in again.",
    expired: "Signing in lasts 12 hours: sign in again.",
    revoked: "This sign-in no longer works (`lookout serve --rotate` signs every browser out): sign in again.",
    impostor: "What answers at this address now could not prove it is your dashboard, so this page sent it nothing it could use."
      + " Close every tab of this address, then sign in again once `lookout serve` runs.",
  };

  let cred = null; // {session, key: CryptoKey (or raw bytes without WebCrypto), expires_ms}
  let offset = 0; // the server's clock minus ours
  let proven = null; // a promise of "ok" or why not, while the server stays the one proved
  let why = "";

  const b64 = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const unb64 = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const random = (n) => b64(crypto.getRandomValues(new Uint8Array(n)));
  const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

  // -- SHA-256 and HMAC for a page without WebCrypto (plain HTTP to a network address) ---------
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const ror = (x, n) => (x >>> n) | (x << (32 - n));

  function sha256(data) {
    const n = data.length;
    const words = new Uint32Array(((n + 72) >> 6) << 4);
    for (let i = 0; i < n; i++) words[i >> 2] |= data[i] << (24 - (i % 4) * 8);
    words[n >> 2] |= 0x80 << (24 - (n % 4) * 8);
    words[words.length - 2] = Math.floor(n / 0x20000000);
    words[words.length - 1] = (n * 8) >>> 0;
    const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
    const w = new Uint32Array(64);
    for (let j = 0; j < words.length; j += 16) {
      for (let t = 0; t < 64; t++) {
        if (t < 16) { w[t] = words[j + t]; continue; }
        const a = w[t - 15], b = w[t - 2];
        w[t] = w[t - 16] + (ror(a, 7) ^ ror(a, 18) ^ (a >>> 3)) + w[t - 7] + (ror(b, 17) ^ ror(b, 19) ^ (b >>> 10));
      }
      let [a, b, c, d, e, f, g, k] = h;
      for (let t = 0; t < 64; t++) {
        const t1 = (k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t]) >>> 0;
        const t2 = ((ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
        k = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
      }
      h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
    }
    const out = new Uint8Array(32);
    h.forEach((v, i) => { out[i * 4] = v >>> 24; out[i * 4 + 1] = v >>> 16; out[i * 4 + 2] = v >>> 8; out[i * 4 + 3] = v; });
    return out;
  }

  function hmacSha256(key, data) {
    const block = new Uint8Array(64);
    block.set(key.length > 64 ? sha256(key) : key);
    const inner = new Uint8Array(64 + data.length);
    const outer = new Uint8Array(64 + 32);
    for (let i = 0; i < 64; i++) { inner[i] = block[i] ^ 0x36; outer[i] = block[i] ^ 0x5c; }
    inner.set(data, 64);
    outer.set(sha256(inner), 64);
    return sha256(outer);
  }

  async function mac(key, text) {
    const data = encoder.encode(text);
    if (subtle && key instanceof CryptoKey) return new Uint8Array(await subtle.sign("HMAC", key, data));
    return hmacSha256(key, data);
  }

  async function digest(text) {
    const data = encoder.encode(text);
    return hex(subtle ? new Uint8Array(await subtle.digest("SHA-256", data)) : sha256(data));
  }

  // -- where the key is kept: this origin's IndexedDB, as an object scripts cannot read out ----
  function idb(mode, use) {
    return new Promise((resolve, reject) => {
      const open = indexedDB.open("lookout", 1);
      open.onupgradeneeded = () => open.result.createObjectStore(STORE);
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const tx = db.transaction(STORE, mode);
        const request = use(tx.objectStore(STORE));
        tx.oncomplete = () => { db.close(); resolve(request.result); };
        tx.onerror = tx.onabort = () => { db.close(); reject(tx.error); };
      };
    });
  }
  const load = () => idb("readonly", (s) => s.get(ITEM)).catch(() => null);
  const save = (c) => idb("readwrite", (s) => s.put(c, ITEM)).catch(() => null);
  // Only this session's: another tab may have signed in since.
  const drop = (session) => idb("readwrite", (s) => {
    const got = s.get(ITEM);
    got.onsuccess = () => { if (got.result && got.result.session === session) s.delete(ITEM); };
    return got;
  }).catch(() => null);

  // -- signing in and out ------------------------------------------------------------------------
  async function signIn(code) {
    const response = await fetch("/api/login", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }), cache: "no-store",
    }).catch(() => null);
    const body = response && response.ok ? await response.json().catch(() => null) : null;
    if (!body || typeof body.session !== "string" || typeof body.key !== "string") return false;
    const raw = unb64(body.key);
    const key = subtle ? await subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]) : raw;
    if (subtle) raw.fill(0);
    offset = (body.now_ms || Date.now()) - Date.now();
    cred = { session: body.session, key, expires_ms: body.expires_ms };
    await save(cred);
    return true;
  }

  function signOut(reason) {
    if (cred) drop(cred.session);
    cred = null;
    why = reason;
    proven = Promise.resolve(reason);
    document.dispatchEvent(new CustomEvent("lookout:signed-out", { detail: reason }));
    return reason;
  }

  async function hello() {
    if (!cred) return why ? why : "signed-out";
    if (cred.expires_ms <= Date.now() + offset) return signOut("expired");
    const challenge = random(24);
    const response = await fetch("/api/hello", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ session: cred.session, challenge }), cache: "no-store",
    }); // offline: throws, and the next call asks again
    if (response.status >= 500) throw new Error(`the server answered ${response.status}`);
    const body = await response.json().catch(() => null);
    if (response.status === 401 && body && WHY[body.reason]) return signOut(body.reason);
    const want = b64(await mac(cred.key, `lookout proof\0${challenge}`));
    if (!response.ok || !body || body.proof !== want) return signOut("impostor");
    offset = body.now_ms - Date.now();
    return "ok";
  }

  function prove() {
    if (!proven) proven = hello().catch((err) => { proven = null; throw err; });
    return proven;
  }

  function refused(reason) {
    const body = { error: WHY[reason] || "not signed in", reason };
    return new Response(JSON.stringify(body), { status: 401, headers: { "Content-Type": "application/json" } });
  }

  // fetch(), signed. Rejects when the server cannot be reached (as fetch does); 401 when this
  // page is signed out, without sending anything.
  async function api(path, options = {}) {
    const verdict = await prove();
    if (verdict !== "ok" || !cred) return refused(verdict);
    const url = new URL(path, location.href);
    const method = (options.method || "GET").toUpperCase();
    const ts = String(Date.now() + offset);
    const nonce = random(18);
    const body = typeof options.body === "string" ? options.body : "";
    const signed = await mac(cred.key, ["lookout request", method, url.pathname + url.search, ts, nonce, await digest(body)].join("\0"));
    const headers = new Headers(options.headers || {});
    headers.set("Authorization", `Lookout ${cred.session} ${ts} ${nonce} ${b64(signed)}`);
    let response;
    try {
      response = await fetch(url, { cache: "no-store", ...options, headers });
    } catch (err) {
      proven = null; // the server went away: whatever answers next must prove itself first
      throw err;
    }
    if (response.status === 401) {
      const answer = await response.clone().json().catch(() => null);
      if (answer && WHY[answer.reason]) signOut(answer.reason);
      else proven = null; // a clock that moved, say: prove again (and take the server's time)
    }
    return response;
  }

  async function start() {
    try { localStorage.removeItem("lookout.session"); } catch (err) { /* the old bearer secret */ }
    const match = /^#code=([A-Za-z0-9_-]+)$/.exec(location.hash);
    if (match) {
      history.replaceState(null, "", "/"); // the used code leaves the address bar at once
      if (await signIn(match[1])) return;
      why = "link";
    }
    cred = await load();
  }

  window.lookout = {
    api,
    ready: start(),
    // A stream ended or a new one opens: the next request proves the server again first.
    lost: () => { if (cred) proven = null; },
    why: () => (why ? { reason: why, text: WHY[why] || "" } : null),
    state: () => (cred ? "signed-in" : "signed-out"),
    // For the tests: the fallback without WebCrypto, checked against Python's hmac.
    hmacSha256: (key, text) => hex(hmacSha256(key, encoder.encode(text))),
  };
})();
