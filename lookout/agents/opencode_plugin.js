// Hands OpenCode's bus events to lookout: one detached `python hooks/opencode.py` per event that
// changes a status, the JSON on its stdin. Never awaits it, never throws into OpenCode. Each
// event carries `ts`, strictly increasing: lookout orders records by it, so children that start
// out of order cannot make the status lie. The state kept here is only what the bus spreads
// over several events: turn edges, the last assistant text, a request's tool.
import { spawn } from "node:child_process";

const MAX = 2000;
const KEYS = ["command", "filePath", "pattern", "query", "url", "description"];
// `opencode run`: nobody sits at it, it rejects every permission itself. The plugin runs in that
// very process (argv: bun, its entry file, "run", the message); the TUI's runs in a worker with
// no arguments. Every event says so: lookout sends nothing for a dialog nobody can answer.
const RUN = process.argv.slice(2).find((arg) => !arg.startsWith("-")) === "run";
let last = 0;
const sessions = new Map(); // sessionID -> {busy, prompt, text, errored, directory}
const parents = new Map(); // child sessionID -> parent sessionID (subagents)
const roles = new Map(); // messageID -> "user" | "assistant"
const requests = new Map(); // permission/question id -> {sessionID, tool, input, callID}
const started = new Set(); // callIDs sent as tool.start

function clip(text) {
  return typeof text === "string" ? text.slice(0, MAX) : undefined;
}

function brief(input) {
  // Only what a summary needs: never a file's content.
  const out = {};
  if (input && typeof input === "object") {
    for (const key of KEYS) {
      if (typeof input[key] === "string") out[key] = input[key].slice(0, 500);
    }
  }
  return out;
}

function send(event, atExit) {
  const now = Date.now();
  last = now > last ? now : last + 1;
  const data = JSON.stringify(RUN ? { ...event, run: true, ts: last } : { ...event, ts: last });
  try {
    // At exit a pipe may never be flushed: the JSON goes in argv then.
    const child = spawn(PYTHON, atExit ? ["-I", "-S", SCRIPT, "--json", data] : ["-I", "-S", SCRIPT], {
      detached: true,
      stdio: [atExit ? "ignore" : "pipe", "ignore", "ignore"],
    });
    child.on("error", () => {});
    if (!atExit) {
      child.stdin.on("error", () => {});
      child.stdin.end(data);
    }
    child.unref();
  } catch {
    // lookout must never break OpenCode
  }
}

function state(id, directory) {
  let s = sessions.get(id);
  if (!s) {
    s = { busy: false, prompt: undefined, text: undefined, errored: false, directory };
    sessions.set(id, s);
  }
  return s;
}

function handle(event, directory) {
  const type = event && event.type;
  const p = (event && event.properties) || {};
  const info = p.info || {};
  let id = p.sessionID || info.sessionID || (p.part && p.part.sessionID);
  if (type === "session.created" || type === "session.updated") {
    id = info.id || id;
    if (info.parentID) parents.set(id, info.parentID);
  }
  if (!id) return;
  const parent = parents.get(id);
  if (parent) {
    // A subagent's session: only its dialogs matter, and they block the parent.
    if (!type.startsWith("permission.") && !type.startsWith("question.")) return;
    id = parent;
  }
  const dir = info.directory || (sessions.get(id) || {}).directory || directory;
  if (!sessions.has(id)) {
    state(id, dir);
    send({ type: type === "session.created" ? "session.created" : "lookout.resume", sessionID: id, directory: dir });
    if (type === "session.created") return;
  }
  const s = state(id, dir);
  const base = { sessionID: id, directory: s.directory };
  switch (type) {
    case "message.updated":
      if (info.id && info.role) roles.set(info.id, info.role);
      return;
    case "message.part.updated": {
      const part = p.part || {};
      if (part.type === "text" && typeof part.text === "string") {
        const role = roles.get(part.messageID);
        if (role === "user") s.prompt = part.text;
        else if (role === "assistant" && part.text) s.text = part.text;
        return;
      }
      if (part.type !== "tool" || part.tool === "question" || !part.callID) return;
      const status = part.state && part.state.status;
      const tool = { tool: part.tool, input: brief(part.state && part.state.input), callID: part.callID };
      if (status === "running" && !started.has(part.callID)) {
        started.add(part.callID);
        send({ type: "tool.start", ...base, ...tool });
      } else if ((status === "completed" || status === "error") && started.has(part.callID)) {
        started.delete(part.callID);
        send({ type: status === "completed" ? "tool.end" : "tool.error", ...base, ...tool });
      }
      return;
    }
    case "session.status":
    case "session.idle": {
      const busy = type === "session.status" && p.status && p.status.type === "busy";
      const idle = type === "session.idle" || (p.status && p.status.type === "idle");
      if (busy && !s.busy) {
        s.busy = true;
        s.errored = false;
        s.text = undefined;
        send({ type: "turn.start", ...base, prompt: clip(s.prompt) });
      } else if (idle && s.busy) {
        s.busy = false;
        // After session.error the turn already ended, as a failure: idle must not hide it.
        if (!s.errored) send({ type: "turn.end", ...base, text: clip(s.text) });
      }
      return;
    }
    case "session.error": {
      const error = p.error || {};
      s.errored = true;
      send({
        type: "session.error",
        ...base,
        error: typeof error.name === "string" ? error.name : "error",
        message: clip((error.data && error.data.message) || error.message),
      });
      return;
    }
    case "permission.asked":
    case "permission.updated": {
      const meta = p.metadata || {};
      const patterns = Array.isArray(p.patterns) ? p.patterns : [];
      const tool = {
        tool: p.permission || p.type,
        input: brief({ command: meta.command || patterns.join(" "), filePath: meta.filepath }),
        callID: (p.tool && p.tool.callID) || p.callID,
      };
      requests.set(p.id, { ...base, ...tool });
      send({ type: "permission.asked", ...base, ...tool });
      return;
    }
    case "question.asked": {
      const questions = Array.isArray(p.questions) ? p.questions : [];
      const tool = {
        tool: "question",
        input: { questions: questions.map((q) => ({ question: clip(q && q.question) })) },
        callID: p.tool && p.tool.callID,
      };
      requests.set(p.id, { ...base, ...tool });
      send({ type: "question.asked", ...base, ...tool });
      return;
    }
    case "permission.replied":
    case "question.replied":
    case "question.rejected": {
      const key = p.requestID || p.permissionID || p.id;
      const asked = requests.get(key);
      if (!asked) return;
      requests.delete(key);
      send({ ...asked, type });
      return;
    }
  }
}

export const Lookout = async ({ directory }) => {
  process.once("exit", () => {
    for (const [id, s] of sessions) {
      send({ type: "lookout.exit", sessionID: id, directory: s.directory }, true);
    }
  });
  return {
    event: async ({ event }) => {
      try {
        handle(event, directory);
      } catch {
        // never into OpenCode
      }
    },
  };
};
