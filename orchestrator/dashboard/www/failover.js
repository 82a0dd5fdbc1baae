// Failovers: the list, and one failover's page (timeline, steps as they run, guards,
// evidence, the plan and its hash, the report) with the commands the signed-in role may use.
// Each command asks first, in a dialog that says what will change and takes the reason; the
// daemon checks the role again, so a hidden button is a convenience, not the protection.
import {get, post} from "./api.js";
import {h, fill, when, duration, badge, table, errorBox, guardList} from "./dom.js";

const TERMINAL = ["completed", "aborted", "rolled_back"];

export async function failoverListPage(el) {
  const r = await get("/api/v1/failovers?limit=200");
  fill(el, h("h1", {}, "Failovers"), r.status !== 200 ? errorBox(r) :
    table(null, ["Failover", "Kind", "Phase", "Scope", "From → to", "Created", "Reason"],
      r.body.failovers.map((x) => [h("a", {href: "#/failovers/" + encodeURIComponent(x.id)}, x.id),
        x.kind, badge(x.phase), x.scope, x.from + " → " + x.to, when(x.created_at), x.reason]),
      {id: "failovers"}));
  return {refresh: () => failoverListPage(el), events: ["failover"]};
}

// The commands a failover in this phase takes, and the permission each needs.
function commands(f) {
  const out = [];
  if (f.phase === "proposed" || (f.phase === "fenced" && f.promotion_hold)) {
    out.push({name: "approve", label: "Approve", permission: "approve_failover"});
  }
  if (f.phase === "fencing") {
    out.push({name: "fencing-confirmation", label: "Confirm fencing", permission: "confirm_fencing"});
  }
  if (["proposed", "approved", "fencing", "fenced"].includes(f.phase)) {
    out.push({name: "abort", label: "Abort", permission: "abort_failover"});
  }
  if ((TERMINAL.includes(f.phase) || f.phase === "needs_attention") && !f.ack) {
    out.push({name: "ack", label: "Acknowledge", permission: "ack_failover"});
  }
  return out;
}

// What a command will do, in words, for its confirmation.
function consequence(cmd, f) {
  const moves = f.kind + " of " + f.scope + " from " + f.from + " to " + f.to;
  switch (cmd.name) {
    case "approve":
      return ["Approves the " + moves + " as planned (plan " + f.plan.plan_hash + ").",
        "Once fenced, the executor promotes " + f.to + ": ownership moves, epochs go up, DNS " +
        "follows. Guards are checked again now; a failing one refuses the approval."];
    case "fencing-confirmation":
      return ["Records your word that " + f.from + " has stopped writing the tables of " +
        f.scope + ".", "This is the fencing evidence: promotion of " + f.to + " can follow. " +
        "If " + f.from + " is still writing, two regions will write the same tables."];
    case "abort":
      return ["Stops the " + moves + " before anything is promoted.",
        "Fence steps already taken are compensated; ownership and DNS stay with " + f.from + "."];
    default:
      return ["Acknowledges that you looked at this " + f.phase.replace(/_/g, " ") + " " +
        f.kind + ".", "It lifts the anti-flap block on " + f.scope + " early: a new failover of " +
        "it may be proposed at once."];
  }
}

// The confirmation dialog: resolves with the request body, or null when cancelled.
function confirmDialog(cmd, f, latestGuards) {
  return new Promise((resolve) => {
    const reasonName = cmd.name === "ack" ? "comment" : "reason";
    const required = cmd.name !== "approve";
    const reason = h("textarea", {id: "confirm-reason", name: reasonName, rows: 3,
      required});
    const extra = [];
    const failed = (name) => latestGuards.some((g) => g.guard === name && !g.ok && !g.waived);
    let dataLoss = null, cooldown = null;
    if (cmd.name === "approve" && failed("rpo")) {
      dataLoss = h("textarea", {id: "confirm-data-loss", name: "accept_data_loss", rows: 2});
      extra.push(h("div", {class: "field"}, h("label", {for: "confirm-data-loss"},
        "Accept data loss: why (the RPO guard fails; leave empty to be refused)"), dataLoss));
    }
    if (cmd.name === "approve" && failed("cooldown")) {
      cooldown = h("textarea", {id: "confirm-cooldown", name: "cooldown_override", rows: 2});
      extra.push(h("div", {class: "field"}, h("label", {for: "confirm-cooldown"},
        "Override the cooldown: why"), cooldown));
    }
    const ok = h("button", {type: "submit", class: cmd.name === "abort" ? "danger" : "primary"},
      cmd.label);
    const cancel = h("button", {type: "button"}, "Cancel");
    const form = h("form", {method: "dialog"},
      h("h2", {id: "confirm-title"}, cmd.label + " " + f.id + "?"),
      h("div", {class: "consequence"}, consequence(cmd, f).map((t) => h("p", {}, t))),
      h("div", {class: "field"}, h("label", {for: "confirm-reason"},
        (cmd.name === "ack" ? "Comment" : "Reason") + (required ? " (required)" : " (optional)")),
        reason),
      extra, h("div", {class: "buttons"}, cancel, ok));
    const dialog = h("dialog", {id: "confirm", "aria-labelledby": "confirm-title"}, form);
    document.body.append(dialog);
    const close = (value) => { dialog.close(); dialog.remove(); resolve(value); };
    cancel.addEventListener("click", () => close(null));
    dialog.addEventListener("cancel", (e) => { e.preventDefault(); close(null); });
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = reason.value.trim();
      if (required && !text) { reason.focus(); return; }
      const body = {};
      if (text) body[reasonName] = text;
      if (cmd.name === "approve") body.plan_hash = f.plan.plan_hash;
      if (dataLoss && dataLoss.value.trim()) body.accept_data_loss = dataLoss.value.trim();
      if (cooldown && cooldown.value.trim()) body.cooldown_override = cooldown.value.trim();
      close(body);
    });
    dialog.showModal();
    reason.focus();
  });
}

function stepsTable(steps) {
  return table(null, ["Step", "Section", "Action", "State", "Attempt", "Started", "Finished",
    "Reason"], steps.map((s) => [s.step_id, s.section, s.action, badge(s.state),
    String(s.attempt), when(s.started_at), when(s.finished_at), s.reason || ""]), {id: "steps"});
}

function evidence(f) {
  if (!f.fencing) return h("p", {}, "No fencing confirmation yet.");
  const ev = f.fencing.evidence || {};
  return h("dl", {class: "facts"},
    h("dt", {}, "Kind"), h("dd", {}, f.fencing.kind),
    h("dt", {}, "By"), h("dd", {}, f.fencing.by + (ev.from ? " from " + ev.from : "")),
    h("dt", {}, "When"), h("dd", {}, when(f.fencing.at)),
    h("dt", {}, "Reason"), h("dd", {}, f.fencing.reason || "—"),
    h("dt", {}, "Evidence"), h("dd", {}, h("pre", {}, JSON.stringify(ev, null, 2))));
}

function reportSection(rep) {
  const d = rep.durations || {};
  const rpo = rep.rpo || {};
  return [
    h("dl", {class: "facts", id: "report-durations"},
      h("dt", {}, "RTO"), h("dd", {}, duration(d.rto_ms)),
      h("dt", {}, "Decision"), h("dd", {}, duration(d.decision_ms)),
      h("dt", {}, "Fencing"), h("dd", {}, duration(d.fencing_ms)),
      h("dt", {}, "Transfer"), h("dd", {}, duration(d.transfer_ms)),
      h("dt", {}, "DNS"), h("dd", {}, duration(d.dns_ms)),
      h("dt", {}, "Verification"), h("dd", {}, duration(d.verification_ms)),
      h("dt", {}, "RPO: commits missing"),
      h("dd", {}, rpo.missing_commits === undefined ? "—" : String(rpo.missing_commits) +
        (rpo.measured_at ? " (measured " + when(new Date(rpo.measured_at).toISOString()) + ")" : "")),
      h("dt", {}, "RPO: worst lag bound"), h("dd", {}, duration(rpo.worst_lag_ms)),
      h("dt", {}, "Lost commits"), h("dd", {id: "lost-commits"},
        rep.lost_commits === null || rep.lost_commits === undefined ? "none recorded"
          : JSON.stringify(rep.lost_commits)),
      h("dt", {}, "Demotion token"), h("dd", {}, rep.demotion_token
        ? JSON.stringify(rep.demotion_token) : "—"),
      h("dt", {}, "Split brain"), h("dd", {}, (rep.split_brain || []).length
        ? JSON.stringify(rep.split_brain) : "none seen")),
    h("h3", {}, "Timeline"),
    table(null, ["When", "What", "Who", "Phase", "Why"], (rep.timeline || []).map((t) =>
      [when(t.at), t.action, t.actor, t.phase ? badge(t.phase) : "", t.reason || ""]),
    {id: "timeline"}),
  ];
}

export async function failoverPage(el, ctx) {
  const id = ctx.args[0];
  const path = "/api/v1/failovers/" + encodeURIComponent(id);
  const head = h("div");
  const actions = h("div", {class: "actions", "aria-live": "polite"});
  const body = h("div");
  fill(el, head, actions, body);
  let current = null;

  async function refresh() {
    const [r, rep] = await Promise.all([get(path), get(path + "/report")]);
    if (r.status !== 200) { fill(head, h("h1", {}, "Failover " + id)); return fill(body, errorBox(r)); }
    const f = r.body;
    current = f;
    const checks = f.guard_checks || [];
    const latest = checks.length ? checks[checks.length - 1] : null;
    fill(head, h("h1", {}, "Failover " + f.id, " ", h("span", {id: "phase"}, badge(f.phase))),
      h("p", {class: "lead"}, f.kind + " of ", h("strong", {}, f.scope), " from ",
        h("strong", {}, f.from), " to ", h("strong", {}, f.to), ", proposed by " +
        f.proposed_by + " " + when(f.created_at) + ": " + f.reason),
      h("p", {id: "last-reason"}, f.last_reason));
    const allowed = commands(f).filter((c) => ctx.can(c.permission));
    const buttons = allowed.map((c) => {
      const b = h("button", {type: "button", class: c.name === "abort" ? "danger" : "primary",
        dataset: {command: c.name}}, c.label + "…");
      b.addEventListener("click", () => run(c, latest ? latest.results : []));
      return b;
    });
    fill(actions, buttons.length ? h("div", {class: "buttons"}, buttons) : null,
      actions.querySelector(".result"));
    fill(body,
      h("section", {"aria-labelledby": "steps-h"}, h("h2", {id: "steps-h"}, "Steps"),
        stepsTable(f.steps || [])),
      h("section", {"aria-labelledby": "guards-h"}, h("h2", {id: "guards-h"}, "Guards"),
        checks.length ? checks.slice().reverse().map((c) => h("div", {},
          h("h3", {}, "At " + c.point + " by " + c.by + ", " + when(new Date(c.at).toISOString())),
          guardList(c.results))) : h("p", {}, "No guard check recorded.")),
      h("section", {"aria-labelledby": "fencing-h"}, h("h2", {id: "fencing-h"}, "Fencing"),
        evidence(f)),
      h("section", {"aria-labelledby": "plan-h"}, h("h2", {id: "plan-h"}, "Plan"),
        h("dl", {class: "facts"},
          h("dt", {}, "Plan hash"), h("dd", {}, h("code", {id: "plan-hash"}, f.plan.plan_hash)),
          h("dt", {}, "Route"), h("dd", {}, f.plan.route || "—"),
          h("dt", {}, "Runbook"), h("dd", {}, f.runbook),
          h("dt", {}, "Runbook hash"), h("dd", {}, h("code", {}, f.plan.runbook_hash || "—")),
          h("dt", {}, "Parameters"), h("dd", {}, h("pre", {}, JSON.stringify(f.plan.params || {}, null, 2)))),
        f.approvals.length ? h("ul", {}, f.approvals.map((a) =>
          h("li", {}, "Approved by " + a.by + " " + when(a.at) + (a.reason ? ": " + a.reason : "")))) : null),
      h("section", {"aria-labelledby": "report-h"}, h("h2", {id: "report-h"}, "Report"),
        rep.status === 200 ? reportSection(rep.body) : errorBox(rep)));
  }

  async function run(cmd, guards) {
    const payload = await confirmDialog(cmd, current, guards);
    if (!payload) return;
    const r = await post(path + "/" + cmd.name, payload);
    const result = h("div", {class: "result"}, r.status === 200
      ? h("p", {class: "ok", role: "status"}, r.body.decision || "done")
      : errorBox(r));
    await refresh();
    const old = actions.querySelector(".result");
    if (old) old.remove();
    actions.append(result);
  }

  await refresh();
  // This failover's phase and steps; while it runs, any audit event (its steps' effects,
  // ownership moves, alerts) may belong in its report.
  const wants = (e) => e.type === "step" ? e.data.failover_id === id
    : e.type === "failover" ? e.data.target === id
      : !!current && !TERMINAL.includes(current.phase);
  return {refresh, events: ["failover", "step", "audit"], wants};
}
