// The dashboard in a real browser: Playwright (playwright-core) driving Debian's chromium
// against `icewarden serve` in the lab stack that dashboard_ui_test.cpp started. Each check
// throws on failure; the process exits 1 with the first failure, 0 when all passed.
//
// Environment: ICEWARDEN_URL (serve), LAB_ADMIN_URL (fault injection), ICEWARDEN_{VIEWER,
// OPERATOR,APPROVER}_TOKEN, UI_ARTIFACTS (a folder for screenshots), CHROMIUM (default
// /usr/bin/chromium).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {createRequire} from "node:module";
import {chromium} from "playwright-core";

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const URL_ = process.env.ICEWARDEN_URL;
const LAB = process.env.LAB_ADMIN_URL;
const ART = process.env.UI_ARTIFACTS || "ui-artifacts";
const TOKENS = {viewer: process.env.ICEWARDEN_VIEWER_TOKEN,
  operator: process.env.ICEWARDEN_OPERATOR_TOKEN, approver: process.env.ICEWARDEN_APPROVER_TOKEN};
const LONG = 40_000;
fs.mkdirSync(ART, {recursive: true});

const step = (what) => console.log("ui: " + what);
const accessibility = [];

// Every serious or critical axe-core violation on the page as it is now.
async function axe(page, name) {
  // evaluate runs outside the page's Content-Security-Policy, which rightly refuses any
  // script the daemon did not serve.
  const result = await page.evaluate(async (source) => {
    if (!window.axe) (0, eval)(source);
    const r = await window.axe.run(document, {resultTypes: ["violations"]});
    return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5)}));
  }, AXE);
  const bad = result.filter((v) => v.impact === "serious" || v.impact === "critical");
  accessibility.push({page: name, violations: result});
  assert.deepEqual(bad, [], name + ": serious or critical accessibility violations");
}

async function shot(page, name) {
  await page.screenshot({path: path.join(ART, name + ".png"), fullPage: true});
}

async function signIn(page, role) {
  await page.goto(URL_ + "/");
  if (await page.locator("#signout").isVisible()) {
    await page.locator("#signout").click();
    await page.getByText("Signed out.").waitFor();
  }
  await page.getByLabel("API token").fill(TOKENS[role]);
  await page.getByRole("button", {name: "Sign in"}).click();
  await page.locator("#who").filter({hasText: "(" + role + ")"}).waitFor();
}

async function lab(method, p) {
  const r = await fetch(LAB + p, {method});
  assert.equal(r.status, 200, method + " " + p + " answered " + r.status);
}

// The health badge of a region's row on the overview.
function regionHealth(page, region, health) {
  return page.locator("#regions tr").filter({has: page.locator("strong", {hasText: region})})
    .locator(".badge.state-" + health);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
let failed = false;
try {
  const newPage = async () => {
    const context = await browser.newContext({viewport: {width: 1280, height: 900}});
    const page = await context.newPage();
    page.on("pageerror", (e) => { console.log("ui: page error: " + e.message); failed = true; });
    page.on("console", (m) => { if (m.type() === "error") console.log("ui: console: " + m.text()); });
    return page;
  };

  step("the page arrives with a strict Content-Security-Policy and no cookie");
  const op = await newPage();
  const response = await op.goto(URL_ + "/");
  const csp = response.headers()["content-security-policy"] || "";
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /default-src 'none'/);
  assert.equal(response.headers()["set-cookie"], undefined);
  await op.getByLabel("API token").waitFor();
  assert.equal(await op.locator("#signout").isVisible(), false,
    "no Sign out button for someone not signed in");
  await axe(op, "sign-in");
  await shot(op, "01-sign-in");

  step("a wrong token is refused and the page stays at sign-in");
  await op.getByLabel("API token").fill("not-a-token");
  await op.getByRole("button", {name: "Sign in"}).click();
  await op.getByText("That token was refused").waitFor();
  assert.equal(await op.evaluate(() => sessionStorage.getItem("icewarden.token")), null);

  step("the operator signs in and sees both regions healthy");
  await signIn(op, "operator");
  await regionHealth(op, "us-east-1", "healthy").waitFor({timeout: LONG});
  await regionHealth(op, "eu-central-1", "healthy").waitFor({timeout: LONG});
  assert.deepEqual(await op.context().cookies(), []);
  await op.locator("#live.live").waitFor();
  await axe(op, "overview");
  await shot(op, "02-overview-healthy");

  step("the operator pauses automation from the overview, sees who and why, and resumes");
  assert.match(await op.locator("#automation-status").innerText(), /^On:/);
  await op.locator("#pause-form").getByLabel("Reason").fill("change window (ui test)");
  await op.locator("#pause-form").getByLabel("Expected to resume in").fill("2h");
  await op.getByRole("button", {name: "Pause", exact: true}).click();
  await op.locator("#pauses").getByText("change window (ui test)").waitFor();
  assert.match(await op.locator("#automation-status").innerText(), /^Paused/);
  const paused = await op.request.get(URL_ + "/api/v1/pauses",
    {headers: {Authorization: "Bearer " + TOKENS.viewer}}).then((r) => r.json());
  assert.equal(paused.pauses.length, 1);
  assert.equal(paused.pauses[0].by, "operator");
  await axe(op, "overview-paused");
  await shot(op, "02b-overview-paused");
  await op.locator("#pause-form").getByLabel("Reason").fill("window over (ui test)");
  await op.getByRole("button", {name: "Resume all"}).click();
  await op.locator("#automation-status").getByText("On:").waitFor();

  step("the lab stops us-east-1's catalog: the overview shows it unreachable, no reload");
  await op.evaluate(() => { window.__sameDocument = true; });
  await lab("POST", "/lab/regions/us-east-1/stop");
  await regionHealth(op, "us-east-1", "unreachable").waitFor({timeout: LONG});
  assert.equal(await op.evaluate(() => window.__sameDocument), true, "the page reloaded");
  await shot(op, "03-overview-unreachable");

  step("the operator proposes from the page, dry run first");
  await op.getByRole("link", {name: "Propose", exact: true}).click();
  await op.getByLabel("To region").selectOption("eu-central-1");
  await op.getByLabel("Scope").fill("owner:us-east-1");
  await op.getByLabel("Reason").fill("us-east-1 catalog down (ui test)");
  await op.getByRole("button", {name: "Dry run"}).click();
  await op.locator("#dry-run-plan").waitFor();
  assert.match(await op.locator("#dry-run-plan").innerText(), /Plan hash sha256:/);
  await axe(op, "propose-dry-run");
  await shot(op, "04-propose-dry-run");
  assert.equal((await op.request.get(URL_ + "/api/v1/failovers",
    {headers: {Authorization: "Bearer " + TOKENS.viewer}}).then((r) => r.json())).failovers.length,
  0, "a dry run created a failover");
  await op.getByRole("button", {name: "Propose", exact: true}).click();
  await op.waitForURL(/#\/failovers\/fo-/);
  const id = decodeURIComponent(op.url().split("#/failovers/")[1]);
  await op.locator("#phase .state-proposed").waitFor();
  assert.equal(await op.locator("[data-command=approve]").count(), 0, "an operator sees Approve");
  assert.equal(await op.locator("[data-command=abort]").count(), 1, "an operator has no Abort");
  step("proposed " + id);

  step("a viewer sees no buttons, and a forged approval is refused");
  const viewer = await newPage();
  await signIn(viewer, "viewer");
  await viewer.goto(URL_ + "/#/failovers/" + encodeURIComponent(id));
  await viewer.locator("#phase .state-proposed").waitFor();
  assert.equal(await viewer.locator("[data-command]").count(), 0, "a viewer sees a button");
  assert.equal(await viewer.getByRole("link", {name: "Audit log"}).count(), 0);
  assert.equal(await viewer.getByRole("link", {name: "Propose", exact: true}).count(), 0);
  const forged = await viewer.evaluate(async (fid) => {
    const r = await fetch("/api/v1/failovers/" + encodeURIComponent(fid) + "/approve", {
      method: "POST", headers: {Authorization: "Bearer " + sessionStorage.getItem("icewarden.token"),
        "Content-Type": "application/json"}, body: JSON.stringify({plan_hash: "x", reason: "forged"})});
    return r.status;
  }, id);
  assert.equal(forged, 403, "a viewer's approval was not refused");
  await axe(viewer, "failover-viewer");
  await shot(viewer, "05-failover-viewer");

  step("the approver approves and confirms fencing from the page");
  const ap = await newPage();
  await signIn(ap, "approver");
  await ap.goto(URL_ + "/#/failovers/" + encodeURIComponent(id));
  await ap.evaluate(() => { window.__sameDocument = true; });
  await ap.locator("[data-command=approve]").click();
  const dialog = ap.locator("dialog#confirm");
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /Approves the failover of owner:us-east-1/);
  await axe(ap, "approve-dialog");
  await shot(ap, "06-approve-dialog");
  await dialog.getByLabel(/Reason/).fill("approved from the dashboard (ui test)");
  await dialog.getByRole("button", {name: "Approve"}).click();
  await ap.locator("[data-command=fencing-confirmation]").waitFor({timeout: LONG});
  await ap.locator("[data-command=fencing-confirmation]").click();
  await dialog.waitFor();
  await dialog.getByRole("button", {name: "Confirm fencing"}).click();  // no reason yet
  assert.equal(await dialog.isVisible(), true, "confirmed without a reason");
  await dialog.getByLabel(/Reason/).fill("us-east-1's catalog process is stopped (ui test)");
  await dialog.getByRole("button", {name: "Confirm fencing"}).click();
  // The daemon's answer, on the page: the confirmation was taken, not refused.
  await ap.locator(".actions .result p.ok").filter({hasText: "confirmed fencing"}).waitFor();

  step("the failover completes on the page without a reload");
  await ap.locator("#phase .state-completed").waitFor({timeout: LONG});
  await op.locator("#phase .state-completed").waitFor({timeout: LONG});
  assert.equal(await ap.evaluate(() => window.__sameDocument), true, "the page reloaded");
  const steps = await ap.locator("#steps tbody tr").count();
  assert.ok(steps >= 3, "steps shown: " + steps);
  assert.match(await ap.locator("#report-durations").innerText(), /RTO\s+\d/);
  assert.ok((await ap.locator("#timeline tbody tr").count()) >= 4);
  await axe(ap, "failover-completed");
  await shot(ap, "07-failover-completed");
  await op.locator("[data-command=ack]").waitFor();

  step("ownership, lag, drills and the audit log");
  await ap.goto(URL_ + "/#/ownership?namespace=sales");
  await ap.locator("#ownership tbody tr").first().waitFor();
  const tables = await ap.locator("#ownership tbody tr td:first-child").allInnerTexts();
  assert.ok(tables.length >= 2 && tables.every((t) => t.startsWith("sales.")), tables.join(","));
  assert.match(await ap.locator("#ownership").innerText(), /eu-central-1/);
  await axe(ap, "ownership");
  await shot(ap, "08-ownership");
  await ap.goto(URL_ + "/#/lag");
  await ap.locator("#lag-pairs tbody tr").first().waitFor({timeout: LONG});
  await axe(ap, "lag");
  await shot(ap, "09-lag");
  await op.goto(URL_ + "/#/drills");
  await op.locator("#drills").waitFor();
  await op.locator("[data-drill=lab-weekly-plan]").waitFor();
  op.once("dialog", (d) => d.accept());
  await op.locator("[data-drill=lab-weekly-plan]").click();
  await op.waitForURL(/#\/drills\/runs\//);
  await op.getByRole("heading", {name: /Drill run/}).waitFor();
  await axe(op, "drill-run");
  await shot(op, "10-drill-run");
  await op.goto(URL_ + "/#/drills");
  await op.locator("#drill-runs tbody tr a").first().waitFor();
  await axe(op, "drills");
  await shot(op, "11-drills");
  await ap.goto(URL_ + "/#/audit?target=" + encodeURIComponent(id));
  await ap.locator("#audit tbody tr").first().waitFor();
  assert.match(await ap.locator("#audit").innerText(), /failover\.approve/);
  await axe(ap, "audit");
  await shot(ap, "12-audit");
  await ap.goto(URL_ + "/#/audit");
  await ap.getByText(/^Newest first: events/).waitFor();
  const seqs = (await ap.locator("#audit tbody tr td:first-child").allInnerTexts()).map(Number);
  assert.ok(seqs.length >= 10 && seqs.every((s, i) => i === 0 || s < seqs[i - 1]),
    "the whole log is newest first: " + seqs.slice(0, 5).join(","));
  await ap.goto(URL_ + "/#/failovers");
  await ap.locator("#failovers").waitFor();
  await axe(ap, "failovers");

  step("a token that stops working leads back to sign-in");
  // A tab that kept a token the daemon no longer accepts (expired, revoked).
  const staleContext = await browser.newContext();
  await staleContext.addInitScript(() => sessionStorage.setItem("icewarden.token", "revoked-token"));
  const stale = await staleContext.newPage();
  await stale.goto(URL_ + "/#/ownership");
  await stale.getByText("Your token was refused (expired or revoked)").waitFor();
  await stale.getByLabel("API token").waitFor();
  await shot(stale, "13-token-refused");
  // Signed in, then the token stops working: the next request (this navigation, or the
  // event stream's if it comes first) signs the page out.
  await signIn(viewer, "viewer");
  await viewer.evaluate(() => {
    sessionStorage.setItem("icewarden.token", "expired-token");
    location.hash = "#/ownership";
  });
  await viewer.getByText(/Signed out: .* Sign in again/).waitFor();
  await viewer.getByLabel("API token").waitFor();
  assert.equal(await viewer.locator("#signout").isVisible(), false, "signed out: no Sign out");
  await shot(viewer, "14-signed-out");

  await lab("POST", "/lab/regions/us-east-1/start");
  assert.equal(failed, false, "a page threw an error (see above)");
  step("all passed");
} catch (e) {
  console.log("ui: FAILED: " + (e.stack || e));
  failed = true;
} finally {
  fs.writeFileSync(path.join(ART, "accessibility.json"), JSON.stringify(accessibility, null, 2));
  await browser.close();
}
process.exit(failed ? 1 : 0);
