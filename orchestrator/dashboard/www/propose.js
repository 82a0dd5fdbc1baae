// Proposing a failover from the page: the dry run first (the plan, its hash and every guard's
// result, nothing created), then the proposal itself, which people approve on its own page.
import {get, post} from "./api.js";
import {h, fill, field, errorBox, guardList} from "./dom.js";

export async function proposePage(el, ctx) {
  if (!ctx.can("propose_failover")) {
    fill(el, h("h1", {}, "Propose a failover"),
      h("p", {}, "Your role (" + ctx.session.role + ") may not propose failovers."));
    return null;
  }
  const [regions, readiness] = await Promise.all([get("/api/v1/regions"), get("/api/v1/readiness")]);
  const names = regions.status === 200 ? regions.body.regions.map((r) => r.name) : [];
  const routes = readiness.status === 200 ? readiness.body.routes.map((r) => r.route) : [];
  const form = h("form", {class: "propose", "aria-labelledby": "propose-h"},
    field({label: "Kind", name: "kind", value: ctx.params.get("kind") || "failover", options: [
      {value: "failover", label: "failover (the owner is down)"},
      {value: "switchover", label: "switchover (planned, both healthy, loses nothing)"},
      {value: "failback", label: "failback (back to where the scope last left)"}]}),
    field({label: "To region", name: "to", value: ctx.params.get("to") || "",
      options: [{value: "", label: "— (a failback picks it)"}].concat(
        names.map((n) => ({value: n, label: n})))}),
    field({label: "Scope", name: "scope", value: ctx.params.get("scope") || "", required: true,
      placeholder: "owner:us-east-1", hint: "owner:REGION, namespace:NS or a table pattern"}),
    field({label: "Route", name: "route", value: "", options: [{value: "", label: "the first route that covers it"}]
      .concat(routes.map((n) => ({value: n, label: n})))}),
    field({label: "Reason", name: "reason", type: "textarea", required: true,
      value: ctx.params.get("reason") || ""}),
    h("div", {class: "buttons"}, h("button", {type: "submit", id: "dry-run"}, "Dry run")));
  const plan = h("div", {"aria-live": "polite"});
  fill(el, h("h1", {id: "propose-h"}, "Propose a failover"),
    h("p", {}, "A dry run shows the plan and the guards and creates nothing. Propose after it; " +
      "an approver approves on the failover's page."), form, plan);

  function request(dryRun) {
    const v = (n) => form.elements[n].value.trim();
    const body = {kind: v("kind"), scope: v("scope"), reason: v("reason"), dry_run: dryRun};
    if (v("kind") !== "failback") body.to = v("to");
    if (v("route") && v("kind") !== "failback") body.route = v("route");
    return body;
  }
  // A change to the form after a dry run needs another one.
  form.addEventListener("input", () => fill(plan));

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!form.reportValidity()) return;
    const body = request(true);
    const r = await post("/api/v1/failovers", body);
    if (r.status !== 200) return fill(plan, errorBox(r));
    const d = r.body;
    const propose = h("button", {type: "button", class: "primary", id: "propose"}, "Propose");
    propose.addEventListener("click", async () => {
      propose.disabled = true;
      const c = await post("/api/v1/failovers", request(false));
      if (c.status === 201) return ctx.navigate("#/failovers/" + encodeURIComponent(c.body.failover.id));
      propose.disabled = false;
      plan.append(errorBox(c));
    });
    const steps = (d.plan && d.plan.steps) || [];
    fill(plan, h("section", {"aria-labelledby": "plan-h", id: "dry-run-plan"},
      h("h2", {id: "plan-h"}, "Dry run: " + (d.guards_pass ? "guards pass" : "guards fail")),
      h("p", {}, d.decision),
      h("p", {}, "Plan hash ", h("code", {}, d.plan_hash), ", route ", (d.plan && d.plan.route) || "—",
        ", runbook ", (d.plan && d.plan.runbook) || "—", ", ",
        String(d.tables), " tables."),
      h("h3", {}, "Guards"), guardList(d.guards || []),
      h("h3", {}, "Steps"),
      h("ol", {}, steps.map((s) => h("li", {}, h("strong", {}, s.section + " · " + s.id),
        " (" + s.action + "): " + (s.plan || "")))),
      h("div", {class: "buttons"}, propose)));
  });
  return null;
}
