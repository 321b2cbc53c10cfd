// Hands OpenCode's bus events to lookout: one detached `python hooks/opencode.py` per event that
// changes a status, the JSON on its stdin. Never awaits it, never throws into OpenCode. Each
// event carries `ts`, strictly increasing: lookout orders records by it, so children that start
// out of order cannot make the status lie. The state kept here is only what the bus spreads
// over several events: turn edges, the last assistant text, a request's tool.
//
// With `[remote]` on (DECIDE names lookout's deciding hook, else ""), a permission whose whole
// input is known (a call of the tool it names, e.g. bash) also starts that hook as a child, as
// Claude Code runs it beside its dialog: it records the request and waits for an answer from
// afar; its decision is given to the open dialog through OpenCode's own client (once or reject).
// Answered at the terminal first (permission.replied), the child is sent SIGTERM: the request
// ends as answered there. Never awaited on the event loop, never thrown into OpenCode.
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
const inputs = new Map(); // callID -> {tool, input}: a running call's whole input
const deciding = new Map(); // permission id -> its deciding child
let client; // OpenCode's own client, given to the plugin

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
        const input = part.state && part.state.input;
        if (DECIDE && input && typeof input === "object") inputs.set(part.callID, { tool: part.tool, input });
        send({ type: "tool.start", ...base, ...tool });
      } else if ((status === "completed" || status === "error") && started.has(part.callID)) {
        started.delete(part.callID);
        inputs.delete(part.callID);
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
      const callID = (p.tool && p.tool.callID) || p.callID;
      const kind = p.permission || p.type;
      // The call's whole input when the permission is its own tool's (what runs, in full): the
      // same input for the record and the deciding hook, so both name one request.
      const call = inputs.get(callID);
      const whole = call && call.tool === kind ? call.input : undefined;
      const tool = {
        tool: kind,
        input: whole || brief({ command: meta.command || patterns.join(" "), filePath: meta.filepath }),
        callID,
      };
      requests.set(p.id, { ...base, ...tool });
      send({ type: "permission.asked", ...base, ...tool });
      if (whole && type === "permission.asked") decide(p.id, p.sessionID, { ...base, ...tool });
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
      stop(key); // answered at the terminal: the deciding child settles it as such
      const asked = requests.get(key);
      if (!asked) return;
      requests.delete(key);
      send({ ...asked, type });
      return;
    }
  }
}

function stop(id) {
  const child = deciding.get(id);
  if (!child) return;
  deciding.delete(id);
  try {
    child.kill("SIGTERM");
  } catch {
    // already gone
  }
}

function decide(id, sessionID, asked) {
  // Only where someone may answer it (not `opencode run`), and only with [remote] on.
  if (RUN || !DECIDE || !client || deciding.has(id)) return;
  const payload = {
    hook_event_name: "PermissionRequest",
    session_id: asked.sessionID,
    cwd: asked.directory,
    tool_name: asked.tool,
    tool_input: asked.input,
    tool_use_id: asked.callID,
  };
  const env = { ...process.env, LOOKOUT_AGENT: "opencode" };
  delete env.CLAUDE_PID; // the child's parent is OpenCode, not Claude Code
  delete env.CLAUDE_CODE_ENTRYPOINT;
  let child;
  try {
    child = spawn(PYTHON, ["-I", "-S", DECIDE], { env, stdio: ["pipe", "pipe", "ignore"] });
  } catch {
    return;
  }
  deciding.set(id, child);
  const out = [];
  child.on("error", () => deciding.delete(id));
  child.stdout.on("data", (chunk) => out.push(chunk));
  child.stdout.on("error", () => {});
  child.stdin.on("error", () => {});
  child.stdin.end(JSON.stringify(payload));
  child.on("close", () => {
    if (deciding.get(id) !== child) return; // answered at the terminal: nothing to give
    deciding.delete(id);
    let behavior;
    try {
      const doc = JSON.parse(Buffer.concat(out).toString("utf8"));
      behavior = doc.hookSpecificOutput.decision.behavior;
    } catch {
      return; // nothing said: the dialog decides
    }
    if (behavior !== "allow" && behavior !== "deny") return;
    try {
      Promise.resolve(
        client.postSessionIdPermissionsPermissionId({
          path: { id: sessionID, permissionID: id },
          body: { response: behavior === "allow" ? "once" : "reject" },
        }),
      ).catch(() => {});
    } catch {
      // never into OpenCode
    }
  });
}

export const Lookout = async ({ directory, client: given }) => {
  client = given;
  process.once("exit", () => {
    for (const id of [...deciding.keys()]) stop(id);
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
