// The browser side of dashboard_bench (see dashboard_bench.cpp, which starts serve with
// TABLES tables and runs this). Prints the figures; exits 1 when something did not work.
//
// 1. Time to first render, each in a fresh browser context (nothing cached), R times: from
//    navigation start to the overview's tables, to the first ownership page (100 of all
//    tables), to a namespace's page, and to a lag-state filter that no table passes (the
//    daemon reads every table to say so: the worst case of a filtered page).
// 2. Phase changes with no browser connected, then with B browsers on the overview: C times a
//    proposal and its abort through the API. Per change, the time from the audit event (the
//    daemon's clock, the same machine's) to its arrival in each page's script, and to the
//    overview's table showing (or no longer showing) the failover.
// 3. The daemon's CPU (utime + stime from /proc) over each run of changes, and its resident
//    memory, without and with the browsers: what they add.
import fs from "node:fs";
import {createRequire} from "node:module";

const require = createRequire(process.env.UI_MODULES + "/package.json");
const {chromium} = require("playwright-core");
const URL_ = process.env.ICEWARDEN_URL;
const PID = process.env.SERVE_PID;
const BROWSERS = Number(process.env.BROWSERS || 20);
const CHANGES = Number(process.env.CHANGES || 40);
const RENDERS = Number(process.env.RENDERS || 10);
const TICK = 100;  // USER_HZ on Linux

function cpuSeconds() {
  const f = fs.readFileSync("/proc/" + PID + "/stat", "utf8");
  const fields = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICK;  // utime, stime
}
function rssMiB() {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync("/proc/" + PID + "/status", "utf8"));
  return Number(m[1]) / 1024;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function pct(values, p) {
  if (!values.length) return NaN;
  const s = values.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}
const fmt = (xs) => "p50 " + pct(xs, 50).toFixed(0) + " ms, p99 " + pct(xs, 99).toFixed(0) +
  " ms, max " + Math.max(...xs).toFixed(0) + " ms (n=" + xs.length + ")";

async function api(method, path, token, body) {
  const r = await fetch(URL_ + path, {method, headers: {Authorization: "Bearer " + token,
    "Content-Type": "application/json"}, body: body ? JSON.stringify(body) : undefined});
  return {status: r.status, body: await r.json()};
}

// In every page before its scripts: the token (no sign-in form), when a selector first
// appears, each event's arrival, and when a failover appears in or leaves the overview.
function instrument(token) {
  return `sessionStorage.setItem("icewarden.token", ${JSON.stringify(token)});
  window.__firstRender = {};
  window.__events = [];
  window.__shown = {};
  window.__gone = {};
  document.addEventListener("icewarden-event", (e) =>
    window.__events.push({action: e.detail.data.action, target: e.detail.data.target,
      at: e.detail.data.at, arrived: Date.now()}));
  new MutationObserver(() => {
    for (const sel of window.__watch || []) {
      if (window.__firstRender[sel] === undefined && document.querySelector(sel))
        window.__firstRender[sel] = performance.now();
    }
    const table = document.querySelector("#active-failovers");
    if (!table) return;
    const now = new Set([...table.querySelectorAll("a")].map((a) => a.textContent));
    for (const id of now) if (!(id in window.__shown)) window.__shown[id] = Date.now();
    for (const id of Object.keys(window.__shown))
      if (!now.has(id) && !(id in window.__gone)) window.__gone[id] = Date.now();
  }).observe(document, {subtree: true, childList: true});`;
}

const browser = await chromium.launch({executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-dev-shm-usage"]});
let ok = true;
try {
  // ---- 1. first render ----
  const renders = [
    ["overview", "#/", "#active-failovers"],
    ["ownership, first page", "#/ownership", "#ownership tbody tr"],
    ["ownership, one namespace", "#/ownership?namespace=ns500", "#ownership tbody tr"],
    ["ownership, a state no table is in (reads all)", "#/ownership?state=behind", "#ownership td.empty"],
  ];
  console.log("tables in the store: " + process.env.TABLES);
  for (const [name, hash, sel] of renders) {
    const times = [];
    for (let i = 0; i < RENDERS; ++i) {
      const ctx = await browser.newContext();
      await ctx.addInitScript(instrument(process.env.VIEWER_TOKEN) +
        `window.__watch = [${JSON.stringify(sel)}];`);
      const page = await ctx.newPage();
      await page.goto(URL_ + "/" + hash);
      await page.waitForSelector(sel, {timeout: 60000});
      times.push(await page.evaluate((s) => window.__firstRender[s], sel));
      await ctx.close();
    }
    console.log("first render, " + name + ": " + fmt(times));
  }

  // ---- 2 and 3. phase changes without and with browsers ----
  async function changes(pages) {
    const ids = [];
    const cpu0 = cpuSeconds(), t0 = Date.now();
    for (let i = 0; i < CHANGES; ++i) {
      const p = await api("POST", "/api/v1/failovers", process.env.OPERATOR_TOKEN, {
        to: "eu-central-1", from: "us-east-1", scope: "namespace:ns001", reason: "bench " + i});
      if (p.status !== 201) throw new Error("propose answered " + p.status + ": " + JSON.stringify(p.body));
      const id = p.body.failover.id;
      await sleep(500);
      const a = await api("POST", "/api/v1/failovers/" + id + "/abort", process.env.OPERATOR_TOKEN,
        {reason: "bench " + i});
      if (a.status !== 200) throw new Error("abort answered " + a.status);
      ids.push(id);
      await sleep(500);
    }
    await sleep(1500);
    const wall = (Date.now() - t0) / 1000, cpu = cpuSeconds() - cpu0;
    const delivery = [], dom = [];
    if (pages.length) {
      // When each proposal and abort happened, by the daemon's clock: its failover events.
      const atOf = {};
      let events = [];
      for (let next = 0; next !== null;) {
        const r = await api("GET", "/api/v1/audit?action=failover.&limit=1000&after_seq=" + next,
          process.env.OPERATOR_TOKEN);
        events = events.concat(r.body.events);
        next = r.body.next_after_seq;
      }
      for (const e of events) {
        if (e.action === "failover.propose") atOf["shown " + e.target] = e.at_unix_ms;
        if (e.action === "failover.abort") atOf["gone " + e.target] = e.at_unix_ms;
      }
      for (const page of pages) {
        const seen = await page.evaluate(() => ({events: window.__events, shown: window.__shown,
          gone: window.__gone}));
        for (const e of seen.events) {
          if ((e.action === "failover.propose" || e.action === "failover.abort") && ids.includes(e.target))
            delivery.push(e.arrived - Date.parse(e.at));
        }
        for (const id of ids) {
          if (seen.shown[id] && atOf["shown " + id]) dom.push(seen.shown[id] - atOf["shown " + id]);
          if (seen.gone[id] && atOf["gone " + id]) dom.push(seen.gone[id] - atOf["gone " + id]);
        }
      }
      const expected = ids.length * 2 * pages.length;
      if (delivery.length !== expected) {
        console.log("MISSING: " + delivery.length + " of " + expected + " events reached the pages");
        ok = false;
      }
    }
    return {wall, cpu, delivery, dom, rss: rssMiB()};
  }

  await sleep(2000);
  const idleCpu0 = cpuSeconds();
  await sleep(10000);
  const idleAlone = cpuSeconds() - idleCpu0;
  const alone = await changes([]);
  console.log("no browser: " + CHANGES + " changes x2 in " + alone.wall.toFixed(1) + " s, daemon CPU " +
    alone.cpu.toFixed(2) + " s (" + (100 * alone.cpu / alone.wall).toFixed(1) + "% of a core), RSS " +
    alone.rss.toFixed(1) + " MiB; idle 10 s: " + idleAlone.toFixed(2) + " s CPU");

  const pages = [];
  for (let i = 0; i < BROWSERS; ++i) {
    const ctx = await browser.newContext();
    await ctx.addInitScript(instrument(process.env.VIEWER_TOKEN));
    const page = await ctx.newPage();
    await page.goto(URL_ + "/#/");
    await page.waitForSelector("#live.live", {timeout: 60000});
    pages.push(page);
  }
  await sleep(2000);
  const idleCpu1 = cpuSeconds();
  await sleep(10000);
  const idleWith = cpuSeconds() - idleCpu1;
  const withPages = await changes(pages);
  console.log(BROWSERS + " browsers on the overview: " + CHANGES + " changes x2 in " +
    withPages.wall.toFixed(1) + " s, daemon CPU " + withPages.cpu.toFixed(2) + " s (" +
    (100 * withPages.cpu / withPages.wall).toFixed(1) + "% of a core), RSS " +
    withPages.rss.toFixed(1) + " MiB; idle 10 s: " + idleWith.toFixed(2) + " s CPU");
  console.log("added by " + BROWSERS + " browsers: CPU " +
    (100 * (withPages.cpu / withPages.wall - alone.cpu / alone.wall)).toFixed(1) +
    " points of a core while changing, " + (10 * (idleWith - idleAlone)).toFixed(1) +
    "% of a core idle; memory " + (withPages.rss - alone.rss).toFixed(1) + " MiB");
  console.log("stream delivery, audit event -> page script: " + fmt(withPages.delivery));
  console.log("to the page's table (event, then the page's reads): " + fmt(withPages.dom));
} catch (e) {
  console.log("FAILED: " + (e.stack || e));
  ok = false;
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
