// The dashboard: signs in with a pasted token, routes #/… to a page, and keeps the page
// current from the event stream without reloading.
import * as api from "./api.js";
import {h, fill} from "./dom.js";
import {overviewPage} from "./overview.js";
import {ownershipPage, lagPage} from "./tables.js";
import {failoverListPage, failoverPage} from "./failover.js";
import {proposePage} from "./propose.js";
import {drillsPage, drillRunPage, auditPage} from "./history.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
const live = document.getElementById("live");
const signout = document.getElementById("signout");

let session = null;   // {name, role, permissions}
let page = null;      // what the current page asked for: {refresh, events, wants}
let stopStream = null;
let refreshTimer = null;

const routes = [
  [/^\/$/, overviewPage, "Overview"],
  [/^\/ownership$/, ownershipPage, "Ownership"],
  [/^\/lag$/, lagPage, "Lag"],
  [/^\/failovers$/, failoverListPage, "Failovers"],
  [/^\/failovers\/([^/]+)$/, failoverPage, "Failover"],
  [/^\/propose$/, proposePage, "Propose a failover"],
  [/^\/drills$/, drillsPage, "Drills"],
  [/^\/drills\/runs\/([^/]+)$/, drillRunPage, "Drill run"],
  [/^\/audit$/, auditPage, "Audit log"],
];

const can = (permission) => !!session && session.permissions.includes(permission);

function showNav() {
  const links = [["#/", "Overview"], ["#/ownership", "Ownership"], ["#/lag", "Lag"],
    ["#/failovers", "Failovers"], ["#/drills", "Drills"]];
  if (can("read_audit")) links.push(["#/audit", "Audit log"]);
  if (can("propose_failover")) links.push(["#/propose", "Propose"]);
  const here = location.hash.split("?")[0] || "#/";
  fill(nav, h("ul", {}, links.map(([href, text]) =>
    h("li", {}, h("a", {href, "aria-current": href === here ? "page" : null}, text)))));
  fill(who, session.name + " (" + session.role + ")");
  signout.hidden = false;
}

function signIn(message) {
  session = null;
  page = null;
  if (stopStream) { stopStream(); stopStream = null; }
  fill(nav);
  fill(who);
  fill(live);
  signout.hidden = true;
  document.title = "Sign in · icewarden";
  const input = h("input", {id: "token", name: "token", type: "password", required: true,
    autocomplete: "off", "aria-describedby": "token-hint"});
  const error = h("div", {"aria-live": "polite"},
    message ? h("p", {class: "error", role: "alert"}, message) : null);
  const form = h("form", {class: "signin", "aria-labelledby": "signin-title"},
    h("h1", {id: "signin-title"}, "Sign in to icewarden"),
    h("div", {class: "field"}, h("label", {for: "token"}, "API token"), input,
      h("small", {id: "token-hint"},
        "A token from the daemon's api.tokens. It stays in this tab's session storage " +
        "and goes only to this daemon.")),
    error,
    h("button", {type: "submit"}, "Sign in"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    api.setToken(input.value.trim());
    const r = await api.session();
    if (r.status !== 200) {
      api.clearToken();
      fill(error, h("p", {class: "error", role: "alert"},
        r.status === 401 ? "That token was refused: check it and try again."
          : "The daemon did not accept the sign-in (" + r.status + ")."));
      return;
    }
    session = r.body;
    start();
  });
  fill(main, form);
  input.focus();
}

function start() {
  showNav();
  stopStream = api.streamEvents(onEvent, (state) => {
    fill(live, state === "live" ? "live" : "reconnecting…");
    live.className = state === "live" ? "live" : "stale";
    // Whatever happened while the stream was down is in the page's next read.
    if (state === "live") scheduleRefresh();
  });
  route();
}

function onEvent(event) {
  document.dispatchEvent(new CustomEvent("icewarden-event", {detail: event}));
  if (page && page.refresh && (!page.events || page.events.includes(event.type)) &&
      (!page.wants || page.wants(event))) {
    scheduleRefresh(event.type);
  }
}

// Many events come in bursts (a failover's steps): one read after the burst, told which
// kinds of event it follows (null: everything, after a reconnection), so a page reads only
// what changed.
let pendingTypes = new Set();
function scheduleRefresh(type) {
  if (pendingTypes !== null) {
    if (type) pendingTypes.add(type); else pendingTypes = null;
  }
  if (refreshTimer) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = null;
    const types = pendingTypes;
    pendingTypes = new Set();
    if (page && page.refresh) await page.refresh(types);
  }, 50);
}

async function route() {
  if (!session) return;
  const [path, query] = (location.hash.slice(1) || "/").split("?");
  const params = new URLSearchParams(query || "");
  showNav();
  for (const [pattern, render, title] of routes) {
    const m = pattern.exec(path || "/");
    if (!m) continue;
    let args;
    try { args = m.slice(1).map(decodeURIComponent); } catch (e) { break; }  // a malformed %
    document.title = title + " · icewarden";
    const ctx = {session, can, params, args,
      navigate: (hash) => { location.hash = hash; }};
    const container = h("div", {class: "page"});
    fill(main, container);
    page = (await render(container, ctx)) || null;
    main.focus({preventScroll: true});
    return;
  }
  page = null;
  fill(main, h("h1", {}, "No such page"), h("p", {}, h("a", {href: "#/"}, "Back to the overview")));
}

signout.addEventListener("click", () => { api.clearToken(); signIn("Signed out."); });
api.onSignedOut((reason) => signIn("Signed out: " + reason + ". Sign in again."));
window.addEventListener("hashchange", route);

(async () => {
  if (!api.token()) return signIn();
  const r = await api.session();
  if (r.status !== 200) {
    api.clearToken();
    return signIn(r.status === 401 ? "Your token was refused (expired or revoked). Sign in again."
      : "The daemon answered " + r.status + ".");
  }
  session = r.body;
  start();
})();
