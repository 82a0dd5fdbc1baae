// The overview: every region's health and why, whether automation is paused, each failover
// route's readiness, the failovers in flight, and the worst lag.
import {get, post} from "./api.js";
import {h, fill, when, duration, badge, table, field, errorBox} from "./dom.js";

const TERMINAL = ["completed", "aborted", "rolled_back"];

export async function overviewPage(el, ctx) {
  const regions = h("section", {"aria-labelledby": "regions-h"});
  const active = h("section", {"aria-labelledby": "active-h"});
  const readiness = h("section", {"aria-labelledby": "readiness-h"});
  const lag = h("section", {"aria-labelledby": "lag-h"});
  const automation = h("section", {"aria-labelledby": "automation-h"});
  fill(el, h("h1", {}, "Overview"),
    ctx.can("propose_failover")
      ? h("p", {}, h("a", {class: "button", href: "#/propose"}, "Propose a failover…")) : null,
    automation, regions, active, lag, readiness);

  // types: the kinds of event since the last read (region, failover, step, readiness), or
  // null for everything: a page reads only what changed.
  async function refresh(types) {
    const wants = (...kinds) => !types || kinds.some((k) => types.has(k));
    await Promise.all([
      wants("region") ? get("/api/v1/regions").then(showRegions) : null,
      wants("failover", "step") ? get("/api/v1/failovers?active=true&limit=50").then(showFailovers) : null,
      wants("region") ? get("/api/v1/lag?limit=1").then(showLag) : null,
      wants("readiness") ? get("/api/v1/readiness").then(showReadiness) : null,
      wants("automation") ? get("/api/v1/pauses").then(showPauses) : null,
    ]);
  }

  // Paused automation (icewarden pause): who, why, until when; pause and resume when the
  // role may. A person's own commands are never paused, so the page says what still works.
  function showPauses(r) {
    const title = h("h2", {id: "automation-h"}, "Automation");
    if (r.status !== 200) return fill(automation, title, errorBox(r));
    const pauses = r.body.pauses;
    const status = h("p", {id: "automation-status", role: "status"}, pauses.length === 0
      ? "On: webhooks and scheduled drills may propose failovers."
      : [h("strong", {}, "Paused"), ": webhooks and scheduled drills propose nothing where a " +
        "pause covers them; probes, lag and people's commands go on."]);
    const may = ctx.can("pause_automation");
    const rows = pauses.map((p) => {
      const until = p.expected_end ? when(p.expected_end) +
        (p.overdue_seconds > 0 ? " (overdue by " + duration(p.overdue_seconds * 1000) + ")" : "")
        : "until resumed";
      let resume = null;
      if (may) {
        resume = h("button", {type: "button", "data-scope": p.scope}, "Resume " + p.scope);
        resume.addEventListener("click", async () => {
          const reason = pauseForm.elements.reason.value.trim();
          if (!reason) { pauseForm.elements.reason.focus(); return; }
          const x = await post("/api/v1/pauses/resume", {scope: p.scope, reason});
          if (x.status !== 200) return automation.append(errorBox(x));
          refresh(new Set(["automation"]));
        });
      }
      return [h("strong", {}, p.scope), p.by, when(p.since), until, p.reason, resume];
    });
    const pauseForm = h("form", {id: "pause-form", "aria-label": "Pause automation"},
      field({label: "Scope", name: "scope", value: "all", hint: "all, region:NAME, route:NAME or drill:NAME"}),
      field({label: "Reason", name: "reason", type: "textarea", required: true}),
      field({label: "Expected to resume in", name: "for", value: "", placeholder: "2h",
        hint: "past it the pause alerts as overdue; it is not lifted"}),
      h("div", {class: "buttons"}, h("button", {type: "submit", id: "pause"}, "Pause")));
    pauseForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!pauseForm.reportValidity()) return;
      const v = (n) => pauseForm.elements[n].value.trim();
      const body = {scope: v("scope") || "all", reason: v("reason")};
      if (v("for")) body.for = v("for");
      const x = await post("/api/v1/pauses", body);
      if (x.status !== 201) return automation.append(errorBox(x));
      refresh(new Set(["automation"]));
    });
    fill(automation, title, status,
      pauses.length ? table(null, ["Scope", "By", "Since", "Until", "Reason", "Action"], rows,
        {id: "pauses"}) : null,
      may ? pauseForm : null);
  }

  function showRegions(r) {
    fill(regions, h("h2", {id: "regions-h"}, "Regions"), r.status !== 200 ? errorBox(r) :
      table(null, ["Region", "Health", "Overlays", "Since", "Reason"],
        r.body.regions.map((x) => [h("strong", {}, x.name), badge(x.health),
          [x.fenced ? badge("fenced") : null, x.maintenance ? badge("maintenance") : null],
          when(x.since), x.reason]), {id: "regions"}));
  }

  function showFailovers(f) {
    const inFlight = f.status === 200
      ? f.body.failovers.filter((x) => !TERMINAL.includes(x.phase) && !(x.ack)) : [];
    fill(active, h("h2", {id: "active-h"}, "Active failovers"), f.status !== 200 ? errorBox(f) :
      table(null, ["Failover", "Kind", "Phase", "Scope", "From → to", "Proposed by", "Reason"],
        inFlight.map((x) => [h("a", {href: "#/failovers/" + encodeURIComponent(x.id)}, x.id),
          x.kind, badge(x.phase), x.scope, x.from + " → " + x.to, x.proposed_by, x.reason]),
        {id: "active-failovers"}));
  }

  function showLag(l) {
    if (l.status !== 200) return fill(lag, h("h2", {id: "lag-h"}, "Worst lag"), errorBox(l));
    const s = l.body.summary;
    fill(lag, h("h2", {id: "lag-h"}, "Worst lag"),
      h("p", {id: "worst-lag"}, s.worst_bound_table
        ? [h("strong", {}, duration(s.worst_bound_ms)), " — ", s.worst_bound_table, " in ",
          s.worst_bound_replica, "; ", String(s.total_missing), " commits missing over ",
          String(s.tables), " tables", s.unbounded ? "; " + s.unbounded + " not bounded" : "",
          s.any_divergence ? "; DIVERGENCE" : "", s.complete ? "" : " (round incomplete)"]
        : "no replica trails its owner"),
      h("p", {}, "Measured " + when(l.body.at) + ". ", h("a", {href: "#/lag"}, "Lag per region pair")));
  }

  function showReadiness(ready) {
    fill(readiness, h("h2", {id: "readiness-h"}, "Failover routes"), ready.status !== 200
      ? errorBox(ready)
      : table(null, ["Route", "Ready", "Checked", "Not ready because"],
        ready.body.routes.map((x) => [x.route, badge(x.ready ? "ready" : "not_ready"),
          when(x.checked_at), (x.checks || []).filter((c) => !c.ok).map((c) =>
            h("div", {}, c.name + ": " + c.reason))]), {id: "readiness"}));
  }

  await refresh(null);
  return {refresh, events: ["region", "failover", "readiness", "step", "automation"]};
}
