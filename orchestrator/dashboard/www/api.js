// Talking to the daemon: the JSON API with the bearer token the person pasted, and the event
// stream. The token lives in session storage (this tab, until it closes), never in a cookie,
// so a request from another site carries nothing the daemon would accept.

const KEY = "icewarden.token";
const listeners = {signedOut: []};

export function token() { return sessionStorage.getItem(KEY) || ""; }
export function setToken(t) { sessionStorage.setItem(KEY, t); }
export function clearToken() { sessionStorage.removeItem(KEY); }

// Called with a reason when the daemon refuses the token (expired, revoked, wrong).
export function onSignedOut(fn) { listeners.signedOut.push(fn); }

function signedOut(reason) {
  clearToken();
  for (const fn of listeners.signedOut) fn(reason);
}

// {status, body, text}: status -1 when the daemon did not answer. A 401 signs out, unless
// `signIn` (the sign-in form's own check of a pasted token).
export async function call(method, path, body, signIn = false) {
  const headers = {"Authorization": "Bearer " + token(), "Accept": "application/json"};
  const init = {method, headers, cache: "no-store", credentials: "omit"};
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    return {status: -1, body: null, text: "the daemon did not answer: " + e.message};
  }
  const text = await res.text();
  let parsed = null;
  try { parsed = JSON.parse(text); } catch (e) { parsed = null; }
  if (res.status === 401 && !signIn) {
    signedOut((parsed && parsed.error && parsed.error.message) || "the token was refused");
  }
  return {status: res.status, body: parsed, text};
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
// Who the stored token belongs to, without signing out when it is refused.
export const session = () => call("GET", "/api/v1/session", undefined, true);

// Reads GET /api/v1/events (server-sent events) with the token, which EventSource cannot
// send, and calls onEvent({id, type, data}) for each; reconnects after a drop with
// Last-Event-ID, so nothing is missed. onState("live" | "reconnecting") says how it goes.
// Returns a function that stops it.
export function streamEvents(onEvent, onState) {
  let lastId = null;
  let stopped = false;
  let controller = null;
  let retryMs = 2000;

  async function once() {
    controller = new AbortController();
    const headers = {"Authorization": "Bearer " + token(), "Accept": "text/event-stream"};
    if (lastId !== null) headers["Last-Event-ID"] = lastId;
    const res = await fetch("/api/v1/events", {headers, signal: controller.signal,
      cache: "no-store", credentials: "omit"});
    if (res.status === 401) {
      signedOut("the token was refused");
      stopped = true;
      return;
    }
    if (!res.ok || !res.body) throw new Error("event stream answered " + res.status);
    onState("live");
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        dispatch(frame);
      }
    }
  }

  function dispatch(frame) {
    let id = null, type = "message", data = "";
    for (const line of frame.split("\n")) {
      if (line.startsWith(":")) continue;  // a keep-alive comment
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (name === "id") id = value;
      else if (name === "event") type = value;
      else if (name === "data") data += (data ? "\n" : "") + value;
      else if (name === "retry" && /^\d+$/.test(value)) retryMs = Number(value);
    }
    if (id !== null) lastId = id;
    if (!data) return;
    let parsed = null;
    try { parsed = JSON.parse(data); } catch (e) { return; }
    onEvent({id, type, data: parsed});
  }

  (async () => {
    while (!stopped) {
      try { await once(); } catch (e) { if (stopped) return; }
      if (stopped) return;
      onState("reconnecting");
      await new Promise((r) => setTimeout(r, retryMs));
    }
  })();
  return () => { stopped = true; if (controller) controller.abort(); };
}
