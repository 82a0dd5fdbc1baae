// Ownership (every table's owner, epoch and lag state; filtered and paged, so 100,000 tables
// stay fast) and lag per region pair.
import {get} from "./api.js";
import {h, fill, when, duration, badge, table, field, errorBox} from "./dom.js";

const PAGE = 100;
const STATES = ["", "diverged", "not_same_table", "unknown", "not_in_owner", "behind",
  "caught_up", "not_compared"];

// The query string of a filter form: only the fields that are set.
function formQuery(form, names) {
  const q = new URLSearchParams();
  for (const n of names) {
    const v = form.elements[n].value.trim();
    if (v) q.set(n, v);
  }
  return q;
}

async function regionOptions() {
  const r = await get("/api/v1/regions");
  const names = r.status === 200 ? r.body.regions.map((x) => x.name) : [];
  return [{value: "", label: "any region"}].concat(names.map((n) => ({value: n, label: n})));
}

// Pages are cursors (the last table of the page before); the ones behind are kept in the
// address so Back and Previous both work.
function pager(base, params, next) {
  const prev = params.getAll("prev");
  const links = [];
  if (params.get("after")) {
    const q = new URLSearchParams(params);
    q.delete("prev");
    prev.slice(0, -1).forEach((p) => q.append("prev", p));
    const back = prev.length ? prev[prev.length - 1] : "";
    if (back) q.set("after", back); else q.delete("after");
    links.push(h("a", {href: base + "?" + q, rel: "prev"}, "← Previous page"));
    const first = new URLSearchParams(params);
    first.delete("prev");
    first.delete("after");
    links.push(h("a", {href: base + "?" + first}, "First page"));
  }
  if (next) {
    const q = new URLSearchParams(params);
    q.append("prev", params.get("after") || "");
    q.set("after", next);
    links.push(h("a", {href: base + "?" + q, rel: "next"}, "Next page →"));
  }
  return h("nav", {class: "pager", "aria-label": "Pages of results"}, links);
}

export async function ownershipPage(el, ctx) {
  const p = ctx.params;
  const form = h("form", {class: "filters", "aria-label": "Filter tables"},
    field({label: "Namespace", name: "namespace", value: p.get("namespace"),
      placeholder: "sales.eu", hint: "this namespace and the ones inside it"}),
    field({label: "Owner", name: "owner", value: p.get("owner") || "",
      options: await regionOptions()}),
    field({label: "Lag state", name: "state", value: p.get("state") || "",
      options: STATES.map((s) => ({value: s, label: s ? s.replace(/_/g, " ") : "any state"}))}),
    h("button", {type: "submit"}, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    ctx.navigate("#/ownership?" + formQuery(form, ["namespace", "owner", "state"]));
  });
  const results = h("div", {"aria-live": "polite"});
  fill(el, h("h1", {}, "Ownership"), form, results);

  const q = new URLSearchParams({limit: String(PAGE)});
  for (const n of ["namespace", "owner", "state", "after"]) if (p.get(n)) q.set(n, p.get(n));
  const r = await get("/api/v1/ownership?" + q);
  if (r.status !== 200) return fill(results, errorBox(r));
  fill(results,
    table("Tables " + (p.get("after") ? "after " + p.get("after") : "from the first"),
      ["Table", "Owner", "Epoch", "Lag state", "Lag bound", "Last moved", "By failover"],
      r.body.tables.map((t) => [t.table, t.owner, String(t.epoch), badge(t.lag_state),
        duration(t.lag_bound_ms), when(t.updated_at),
        t.failover_id ? h("a", {href: "#/failovers/" + encodeURIComponent(t.failover_id)},
          t.failover_id) : "initial claim"]), {id: "ownership"}),
    pager("#/ownership", p, r.body.next_after));
  return null;
}

export async function lagPage(el, ctx) {
  const p = ctx.params;
  const form = h("form", {class: "filters", "aria-label": "Filter lag rows"},
    field({label: "Region", name: "region", value: p.get("region") || "",
      options: await regionOptions()}),
    field({label: "State", name: "state", value: p.get("state") || "",
      options: STATES.filter((s) => s !== "not_compared").map((s) =>
        ({value: s, label: s ? s.replace(/_/g, " ") : "any state"}))}),
    h("button", {type: "submit"}, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    ctx.navigate("#/lag?" + formQuery(form, ["region", "state"]));
  });
  const pairs = h("section", {"aria-labelledby": "pairs-h"});
  const rows = h("section", {"aria-labelledby": "rows-h"});
  fill(el, h("h1", {}, "Replication lag"), pairs, h("h2", {id: "rows-h"}, "Tables"), form, rows);

  async function refresh() {
    const q = new URLSearchParams({limit: String(PAGE)});
    for (const n of ["region", "state"]) if (p.get(n)) q.set(n, p.get(n));
    if (p.get("after")) {
      const [table, replica] = p.get("after").split(" ");
      q.set("after", table);
      q.set("after_replica", replica || "");
    }
    const r = await get("/api/v1/lag?" + q);
    if (r.status !== 200) {
      fill(pairs, h("h2", {id: "pairs-h"}, "Per region pair"), errorBox(r));
      return fill(rows);
    }
    const b = r.body;
    fill(pairs, h("h2", {id: "pairs-h"}, "Per region pair"),
      h("p", {}, "Round of " + when(b.at) + " (" + duration(b.duration_ms) + ")",
        b.summary.complete ? "" : "; incomplete: " + b.region_errors.join("; ")),
      table(null, ["Owner → replica", "Tables", "States", "Missing commits", "Worst bound",
        "Worst table", "Not bounded"],
      b.pairs.map((x) => [x.owner + " → " + x.replica, String(x.tables),
        Object.entries(x.states).map(([s, n]) => [badge(s), " " + n + " "]),
        String(x.missing_commits), duration(x.worst_bound_ms), x.worst_table || "—",
        String(x.unbounded)]), {id: "lag-pairs"}));
    const next = b.next_after ? b.next_after.table + " " + b.next_after.replica : null;
    fill(rows, table(null, ["Table", "Owner", "Replica", "State", "Missing", "Lag bound", "Why"],
      b.tables.map((t) => [t.table, t.owner, t.replica, badge(t.state),
        String(t.missing_commits), duration(t.lag_bound_ms), t.reason]), {id: "lag-rows"}),
    pager("#/lag", p, next));
  }
  await refresh();
  return {refresh, events: ["region", "failover"]};
}
