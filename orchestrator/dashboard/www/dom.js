// Building the page: elements from data, never HTML from strings, so nothing the daemon says
// (a reason, a table name) can become markup.

// h("a", {href: "#/x", class: "y"}, "text", child, [children]): an element. Attributes
// named on* are refused: behaviour is attached with addEventListener by the caller.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) throw new Error("h: no inline handlers (" + key + ")");
    if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Replaces what `el` holds.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// "2026-12-01 23:36:01 UTC" from RFC 3339, or an em dash.
export function when(rfc3339) {
  if (!rfc3339) return "—";
  return rfc3339.replace("T", " ").replace(/\.\d+Z$/, " UTC").replace(/Z$/, " UTC");
}

// 950 -> "950 ms", 61000 -> "1m 1s"; null -> an em dash.
export function duration(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return ms + " ms";
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + "m " + (s % 60) + "s";
  return Math.floor(m / 60) + "h " + (m % 60) + "m";
}

// A badge for a state word: its class names the state, its text says it.
export function badge(state) {
  const text = state === null || state === undefined ? "not compared" : String(state);
  return h("span", {class: "badge state-" + text.replace(/[^a-z_]/g, "_")}, text.replace(/_/g, " "));
}

// A table: headers, then rows of cells.
export function table(caption, headers, rows, attrs) {
  return h("table", attrs || {},
    caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", {scope: "col"}, x)))),
    h("tbody", {}, rows.length
      ? rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))
      : h("tr", {}, h("td", {colspan: headers.length, class: "empty"}, "nothing to show"))));
}

// A labelled form field: {label, name, type, value, required, options, hint}.
export function field(f) {
  const id = "f-" + f.name;
  let input;
  if (f.options) {
    input = h("select", {id, name: f.name, required: f.required},
      f.options.map((o) => h("option", {value: o.value, selected: o.value === f.value}, o.label)));
  } else if (f.type === "textarea") {
    input = h("textarea", {id, name: f.name, required: f.required, rows: 3});
    input.value = f.value || "";
  } else {
    input = h("input", {id, name: f.name, type: f.type || "text", required: f.required,
      placeholder: f.placeholder, autocomplete: f.autocomplete || "off"});
    input.value = f.value || "";
  }
  const hintId = f.hint ? id + "-hint" : null;
  if (hintId) input.setAttribute("aria-describedby", hintId);
  return h("div", {class: "field"}, h("label", {for: id}, f.label), input,
    f.hint ? h("small", {id: hintId}, f.hint) : null);
}

// The error of a refused request as people read it: the message, and the guards it names.
export function errorBox(reply) {
  const err = (reply.body && reply.body.error) || {};
  const guards = (reply.body && reply.body.guards) || [];
  return h("div", {class: "error", role: "alert"},
    h("p", {}, (reply.status > 0 ? reply.status + " " : "") + (err.code || "error") + ": " +
      (err.message || reply.text || "no answer from the daemon")),
    guards.length ? guardList(guards) : null);
}

// Guard results: [{guard, ok, reason, waived}].
export function guardList(guards) {
  return h("ul", {class: "guards"}, guards.map((g) =>
    h("li", {class: g.ok ? "ok" : "fail"},
      h("strong", {}, (g.ok ? "pass " : "FAIL ") + (g.guard || g.name)),
      g.waived ? " (waived)" : "", ": ", g.reason)));
}
