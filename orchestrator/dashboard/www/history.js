// What happened: drill runs with their reports, and the audit log with filters.
import {get, post} from "./api.js";
import {h, fill, when, duration, badge, table, field, errorBox, guardList} from "./dom.js";

export async function drillsPage(el, ctx) {
  const r = await get("/api/v1/drills?limit=100");
  if (r.status !== 200) return fill(el, h("h1", {}, "Drills"), errorBox(r)) && null;
  const result = h("div", {"aria-live": "polite"});
  const rows = r.body.drills.map((d) => {
    const cells = [d.name, d.mode, d.route, d.schedule ? d.schedule + " (" + d.time_zone + ")" : "on demand",
      duration(d.rto_target_ms), d.last_run ? badge(d.last_run.verdict) : "never run"];
    if (ctx.can("run_drill")) {
      const b = h("button", {type: "button", dataset: {drill: d.name}}, "Run " + d.mode + " drill…");
      b.addEventListener("click", async () => {
        const what = d.mode === "live" ? "proposes a real failover of " + d.scope + " (people approve it)"
          : d.mode === "shadow" ? "runs the route's runbook against the drill targets only"
            : "plans the failover and checks every guard; nothing changes";
        if (!window.confirm("Run drill " + d.name + " now? It " + what + ".")) return;
        const x = await post("/api/v1/drills/" + encodeURIComponent(d.name) + "/runs", {});
        if (x.status === 201) return ctx.navigate("#/drills/runs/" + encodeURIComponent(x.body.run.id));
        fill(result, errorBox(x));
      });
      cells.push(b);
    }
    return cells;
  });
  const headers = ["Drill", "Mode", "Route", "Schedule", "RTO target", "Last run"];
  if (ctx.can("run_drill")) headers.push("Run");
  fill(el, h("h1", {}, "Drills"), result, table("Configured drills", headers, rows, {id: "drills"}),
    table("Runs, newest first", ["Run", "Drill", "Mode", "Started", "Phase", "Verdict", "Why"],
      r.body.runs.map((x) => [h("a", {href: "#/drills/runs/" + encodeURIComponent(x.id)}, x.id),
        x.drill, x.mode, when(x.started_at), badge(x.phase), badge(x.verdict),
        x.verdict_reason || ""]), {id: "drill-runs"}));
  return {refresh: () => drillsPage(el, ctx), events: ["drill"]};
}

export async function drillRunPage(el, ctx) {
  const id = ctx.args[0];
  async function refresh() {
    const r = await get("/api/v1/drills/runs/" + encodeURIComponent(id));
    if (r.status !== 200) return fill(el, h("h1", {}, "Drill run " + id), errorBox(r));
    const d = r.body;
    const run = d.run;
    fill(el, h("h1", {}, "Drill run " + run.id, " ", badge(run.verdict)),
      h("p", {class: "lead"}, run.mode + " drill " + run.drill + " of " + run.scope + " from " +
        run.from + " to " + run.to + ", " + run.trigger + ", " + when(run.started_at) + ": " +
        (run.verdict_reason || "")),
      run.failover_id ? h("p", {}, "Failover: ", h("a", {href: "#/failovers/" +
        encodeURIComponent(run.failover_id)}, run.failover_id)) : null,
      h("dl", {class: "facts"},
        h("dt", {}, "RTO"), h("dd", {}, duration(d.rto.measured_ms) + " (target " +
          duration(d.rto.target_ms) + (d.rto.within_target === null ? "" :
          d.rto.within_target ? ", met" : ", MISSED") + ")"),
        h("dt", {}, "RPO"), h("dd", {}, d.rpo.measured_ms === null ? d.rpo.detail || "—"
          : duration(d.rpo.measured_ms))),
      h("h2", {}, "Guards"), guardList(d.guards || []),
      h("h2", {}, "Steps"),
      table(null, ["Step", "State", "Reason"], (d.steps || []).map((s) =>
        [s.step_id || s.id || "", badge(s.state), s.reason || ""])),
      h("h2", {}, "Timeline"),
      table(null, ["When", "What", "Detail"], (d.timeline || []).map((t) =>
        [when(t.at), t.action || t.what || "", t.reason || t.detail || ""])),
      h("h2", {}, "Notes"),
      (d.notes || []).length ? h("ul", {}, d.notes.map((n) =>
        h("li", {}, when(n.at) + " " + n.by + ": " + n.text))) : h("p", {}, "No notes."));
  }
  await refresh();
  return {refresh, events: ["drill", "failover"]};
}

export async function auditPage(el, ctx) {
  const p = ctx.params;
  const FILTERS = ["target", "action", "actor"];
  const form = h("form", {class: "filters", "aria-label": "Filter the audit log"},
    field({label: "Target", name: "target", value: p.get("target"),
      placeholder: "us-east-1 or fo-20261201-abc123", hint: "a region, a failover, a route…"}),
    field({label: "Action", name: "action", value: p.get("action"),
      placeholder: "failover.approve", hint: "ending in . for a family: failover."}),
    field({label: "Who", name: "actor", value: p.get("actor"), placeholder: "approver"}),
    h("button", {type: "submit"}, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const n of FILTERS) {
      const v = form.elements[n].value.trim();
      if (v) q.set(n, v);
    }
    ctx.navigate("#/audit" + (String(q) ? "?" + q : ""));
  });
  const out = h("div", {"aria-live": "polite"});
  fill(el, h("h1", {}, "Audit log"), form, out);
  const rows = (events) => table(null, ["#", "When", "Who", "From", "What", "Target", "Why"],
    events.map((e) => [String(e.seq), when(e.at), e.actor, e.source, e.action, e.target,
      e.reason]), {id: "audit"});
  const pager = (...links) => h("nav", {class: "pager", "aria-label": "Pages of results"}, links);

  if (FILTERS.some((n) => p.get(n))) {
    // Filtered: oldest first (a failover's story reads top to bottom), page after page.
    const q = new URLSearchParams({limit: "100"});
    for (const n of FILTERS.concat(["after_seq"])) if (p.get(n)) q.set(n, p.get(n));
    const r = await get("/api/v1/audit?" + q);
    if (r.status !== 200) return fill(out, errorBox(r)) && null;
    const next = new URLSearchParams(p);
    if (r.body.next_after_seq !== null) next.set("after_seq", String(r.body.next_after_seq));
    fill(out, h("p", {}, "Matching events, oldest first" +
      (p.get("after_seq") ? ", after event " + p.get("after_seq") : "") + "."), rows(r.body.events),
    r.body.next_after_seq !== null ? pager(h("a", {href: "#/audit?" + next, rel: "next"},
      "Later events →")) : null);
    return null;
  }
  // The whole log, newest first, 100 at a time: seqs are dense, so the page of events up to
  // seq U is after_seq = U - 100.
  const head = await get("/api/v1/audit?limit=1");
  if (head.status !== 200) return fill(out, errorBox(head)) && null;
  const last = head.body.last_seq;
  const upto = Math.min(Number(p.get("upto") || last), last);
  const after = Math.max(0, upto - 100);
  const r = await get("/api/v1/audit?" + new URLSearchParams({limit: "100", after_seq: String(after)}));
  if (r.status !== 200) return fill(out, errorBox(r)) && null;
  const links = [];
  if (upto < last) links.push(h("a", {href: "#/audit?upto=" + Math.min(last, upto + 100), rel: "prev"}, "← Newer"));
  if (after > 0) links.push(h("a", {href: "#/audit?upto=" + after, rel: "next"}, "Older →"));
  fill(out, h("p", {}, "Newest first: events " + (after + 1) + " to " + upto + " of " + last + "."),
    rows(r.body.events.filter((e) => e.seq <= upto).reverse()), links.length ? pager(links) : null);
  return null;
}
