#include "orchestrator/cli/cli.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "orchestrator/api/api.h"
#include "orchestrator/build_info.h"
#include "orchestrator/cli/audit.h"
#include "orchestrator/cli/client.h"
#include "orchestrator/cli/cluster.h"
#include "orchestrator/cli/completion.h"
#include "orchestrator/cli/drill.h"
#include "orchestrator/cli/failover.h"
#include "orchestrator/cli/pause.h"
#include "orchestrator/cli/readiness.h"
#include "orchestrator/cli/runbook.h"
#include "orchestrator/gateway/gateway.h"
#include "orchestrator/serve/serve.h"
#include "state/digest.h"

namespace icewarden {
namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::move(fallback);
}

// The options every read command shares. Defaults come from the environment so that a
// token never has to appear in shell history.
void AddClientOptions(CLI::App* cmd, ClientOptions& o, std::string& token_file) {
  cmd->add_option("--server", o.server, "daemon URL (env ICEWARDEN_SERVER)")->capture_default_str();
  cmd->add_option("--token", o.token, "API bearer token (env ICEWARDEN_TOKEN)");
  cmd->add_option("--token-file", token_file, "read the API token from this file");
  cmd->add_option("--cacert", o.ca_file,
                  "https:// server: trust its certificate by this CA (PEM; env ICEWARDEN_CACERT)");
  cmd->add_option("--cert", o.cert_file,
                  "client certificate (PEM) for a daemon that asks for one (env ICEWARDEN_CERT)");
  cmd->add_option("--key", o.key_file, "the client certificate's key (PEM; env ICEWARDEN_KEY)");
  cmd->add_option("--output,-o", o.output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

// Resolves --token-file after parsing; returns false (and says why) if it cannot be read.
bool ResolveToken(ClientOptions& o, const std::string& token_file) {
  if (token_file.empty()) return true;
  std::ifstream in(token_file);
  if (!in) {
    std::cerr << "icewarden: --token-file " << token_file << ": cannot read the file\n";
    return false;
  }
  std::getline(in, o.token);
  return true;
}

// `icewarden token hash`: the token is read from stdin (its first line; a trailing CR or
// newline is not part of it) so that it never sits in argv or shell history.
int RunTokenHash(std::istream& in, std::ostream& out, std::ostream& err) {
  std::string token;
  std::getline(in, token);
  if (!token.empty() && token.back() == '\r') token.pop_back();
  if (token.size() > kApiMaxAuthorizationBytes) {
    err << "icewarden: the token is " << token.size() << " bytes; the API reads Authorization "
        << "headers of at most " << kApiMaxAuthorizationBytes
        << " bytes, so it could never be sent\n";
    return kExitUsage;
  }
  if (token.empty()) {
    err << "icewarden: no token on stdin: run `printf %s \"$TOKEN\" | icewarden token hash`\n";
    return kExitUsage;
  }
  out << Sha256Hex(token) << "\n";
  return kExitOk;
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{"icewarden: multi-region failover orchestrator for Apache Iceberg lakehouses"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("icewarden ") + BuildVersion() + " (revision " +
                                        BuildRevision() + ")");

  ClientOptions client;
  client.server = EnvOr("ICEWARDEN_SERVER", client.server);
  client.token = EnvOr("ICEWARDEN_TOKEN", "");
  client.ca_file = EnvOr("ICEWARDEN_CACERT", "");
  client.cert_file = EnvOr("ICEWARDEN_CERT", "");
  client.key_file = EnvOr("ICEWARDEN_KEY", "");
  std::string token_file;
  int exit_code = kExitOk;

  ServeOptions serve;
  auto* serve_cmd = app.add_subcommand("serve", "run the daemon: probes, API, orchestrator");
  serve_cmd->add_option("--config,-c", serve.config_path, "config file (YAML)")->required();
  serve_cmd->add_option("--listen", serve.listen,
                        "HOST:PORT to serve the API on (overrides api.listen)");
  serve_cmd->add_option("--state", serve.state_path, "SQLite state file (overrides state.path)");
  serve_cmd->add_option("--replica", serve.replica,
                        "this replica's name with state.backend etcd (overrides "
                        "state.etcd.replica; default: the host name)");
  serve_cmd
      ->add_option("--dashboard-dir", serve.dashboard_dir,
                   "serve the dashboard's files from this directory, read on every request so "
                   "a change shows on reload (development; e.g. orchestrator/dashboard/www)")
      ->check(CLI::ExistingDirectory);
  serve_cmd
      ->add_option("--log-format", serve.log_format,
                   "text, or json: one object a line with failover, drill and region "
                   "fields")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  serve_cmd->callback([&] { exit_code = CmdServe(serve); });

  GatewayCommandOptions gateway;
  auto* gateway_cmd = app.add_subcommand(
      "gateway", "serve a catalog gateway: engines commit through it, to each table's owner only");
  gateway_cmd->add_option("--config,-c", gateway.config_path, "config file (YAML)")->required();
  gateway_cmd->add_option("--name", gateway.name,
                          "which entry of gateways: to serve (needed when there are several)");
  gateway_cmd->add_option("--listen", gateway.listen, "HOST:PORT to serve on (overrides listen)");
  gateway_cmd->add_option("--state", gateway.state_path,
                          "SQLite state file (overrides state.path)");
  gateway_cmd->add_option("--log-format", gateway.log_format, "text, or json: one object a line")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  gateway_cmd->callback([&] { exit_code = CmdGateway(gateway); });

  auto* config_cmd = app.add_subcommand("config", "work with config files");
  config_cmd->require_subcommand(1);
  std::string validate_path;
  bool validate_strict = false;
  auto* validate =
      config_cmd->add_subcommand("validate", "check a config file; errors as FILE:LINE:COL");
  validate->add_option("file", validate_path, "config file")->required();
  validate->add_flag("--strict", validate_strict,
                     "a secret (token_env, token_file, ...) that cannot be read here is an "
                     "error, as for serve, not a warning");
  validate->callback([&] { exit_code = CmdConfigValidate(validate_path, validate_strict); });

  auto* status = app.add_subcommand("status", "regions' health and active failovers");
  AddClientOptions(status, client, token_file);
  status->callback(
      [&] { exit_code = ResolveToken(client, token_file) ? CmdStatus(client) : kExitUsage; });

  auto* ownership = app.add_subcommand("ownership", "which region owns writes to which table");
  ownership->require_subcommand(1);
  std::string owner;
  int ownership_limit = 0;
  auto* ownership_list = ownership->add_subcommand("list", "list table owners and epochs");
  AddClientOptions(ownership_list, client, token_file);
  ownership_list->add_option("--owner", owner, "only tables owned by this region");
  ownership_list->add_option("--limit", ownership_limit, "at most this many tables (0: all)")
      ->check(CLI::NonNegativeNumber);
  ownership_list->callback([&] {
    exit_code = ResolveToken(client, token_file) ? CmdOwnershipList(client, owner, ownership_limit)
                                                 : kExitUsage;
  });

  auto* failover =
      app.add_subcommand("failover", "propose, approve, fence, watch and inspect failovers");
  failover->require_subcommand(1);
  int failover_limit = 50;
  auto* failover_list = failover->add_subcommand("list", "failovers, newest first");
  AddClientOptions(failover_list, client, token_file);
  failover_list->add_option("--limit", failover_limit, "at most this many")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  failover_list->callback([&] {
    exit_code =
        ResolveToken(client, token_file) ? CmdFailoverList(client, failover_limit) : kExitUsage;
  });
  std::string failover_id;
  auto* failover_show = failover->add_subcommand("show", "one failover with its step journal");
  AddClientOptions(failover_show, client, token_file);
  failover_show->add_option("id", failover_id, "failover id")->required();
  failover_show->callback([&] {
    exit_code =
        ResolveToken(client, token_file) ? CmdFailoverShow(client, failover_id) : kExitUsage;
  });

  // State-changing commands: they show what will change and ask, unless --yes.
  bool yes = false;
  auto with_token = [&](auto fn) {
    return [&, fn] { exit_code = ResolveToken(client, token_file) ? fn() : kExitUsage; };
  };
  ProposeOptions propose;
  auto* failover_propose = failover->add_subcommand(
      "propose", "propose moving write ownership of a scope to another region");
  AddClientOptions(failover_propose, client, token_file);
  failover_propose->add_option("--to", propose.to, "region to gain ownership")->required();
  failover_propose->add_option("--scope", propose.scope, "owner:REGION, namespace:P or tables:A,B")
      ->required();
  failover_propose->add_option("--reason", propose.reason, "why, for the audit log")->required();
  failover_propose->add_option("--from", propose.from,
                               "region losing ownership (default: the scope's owner)");
  failover_propose->add_option("--route", propose.route,
                               "the config's route by name (default: the first that matches)");
  failover_propose->add_option("--kind", propose.kind, "failover or switchover")
      ->check(CLI::IsMember({"failover", "switchover"}))
      ->capture_default_str();
  failover_propose->add_flag("--dry-run", propose.dry_run,
                             "show the plan and the guards; create nothing");
  failover_propose->add_flag("--yes,-y", yes, "do not ask for confirmation");
  failover_propose->add_flag("--id-only", propose.id_only,
                             "print only the new failover's id on stdout (the plan on stderr)");
  failover_propose->callback(with_token([&] { return CmdFailoverPropose(client, propose, yes); }));

  // Top-level shortcuts: a planned move, and the way back.
  ProposeOptions switchover;
  switchover.kind = "switchover";
  auto* switchover_cmd = app.add_subcommand(
      "switchover",
      "propose a planned, lossless move between two healthy regions (demotion token)");
  AddClientOptions(switchover_cmd, client, token_file);
  switchover_cmd->add_option("--to", switchover.to, "region to gain ownership")->required();
  switchover_cmd->add_option("--scope", switchover.scope, "owner:REGION, namespace:P or tables:A,B")
      ->required();
  switchover_cmd->add_option("--reason", switchover.reason, "why, for the audit log")->required();
  switchover_cmd->add_option("--from", switchover.from,
                             "region losing ownership (default: the scope's owner)");
  switchover_cmd->add_option("--route", switchover.route,
                             "the config's route by name (default: the first that matches)");
  switchover_cmd->add_flag("--dry-run", switchover.dry_run,
                           "show the plan and the guards; create nothing");
  switchover_cmd->add_flag("--yes,-y", yes, "do not ask for confirmation");
  switchover_cmd->add_flag("--id-only", switchover.id_only,
                           "print only the new failover's id on stdout (the plan on stderr)");
  switchover_cmd->callback(with_token([&] { return CmdFailoverPropose(client, switchover, yes); }));

  // Pausing automation: the brake an operator reaches for mid-incident (cli/pause.h).
  PauseOptions pause;
  auto* pause_cmd = app.add_subcommand(
      "pause", "pause automation: webhooks and scheduled drills propose nothing in a scope");
  AddClientOptions(pause_cmd, client, token_file);
  pause_cmd->add_option("--scope", pause.scope, "all, region:NAME, route:NAME or drill:NAME")
      ->capture_default_str();
  pause_cmd->add_option("--reason", pause.reason, "why, for the audit log")->required();
  pause_cmd->add_option("--for", pause.for_duration,
                        "when you expect to resume (e.g. 2h); past it the pause is overdue and "
                        "alerts, it is not lifted");
  pause_cmd->callback(with_token([&] { return CmdPause(client, pause); }));
  std::string resume_scope = "all", resume_reason;
  auto* resume_cmd = app.add_subcommand("resume", "lift a pause of automation");
  AddClientOptions(resume_cmd, client, token_file);
  resume_cmd->add_option("--scope", resume_scope, "the paused scope")->capture_default_str();
  resume_cmd->add_option("--reason", resume_reason, "why, for the audit log")->required();
  resume_cmd->callback(with_token([&] { return CmdResume(client, resume_scope, resume_reason); }));
  auto* pauses_cmd = app.add_subcommand("pauses", "what automation is paused, by whom, until when");
  AddClientOptions(pauses_cmd, client, token_file);
  pauses_cmd->callback(with_token([&] { return CmdPauseList(client); }));

  auto* region_cmd = app.add_subcommand("region", "a region's administrative overlays");
  region_cmd->require_subcommand(1);
  std::string region_name, region_reason;
  for (bool fence : {true, false}) {
    auto* cmd = region_cmd->add_subcommand(
        fence ? "fence" : "unfence",
        fence ? "set the fenced overlay: no failover targets the region"
              : "clear the fenced overlay (e.g. after a split brain was reconciled)");
    AddClientOptions(cmd, client, token_file);
    cmd->add_option("name", region_name, "region")->required();
    cmd->add_option("--reason", region_reason, "why, for the audit log")->required();
    cmd->add_flag("--yes,-y", yes, "do not ask for confirmation");
    cmd->callback(with_token(
        [&, fence] { return CmdRegionOverlay(client, region_name, fence, region_reason, yes); }));
  }

  ProposeOptions failback;
  failback.kind = "failback";
  auto* failback_cmd = app.add_subcommand(
      "failback",
      "propose moving a scope back to the region its last failover left (a switchover)");
  AddClientOptions(failback_cmd, client, token_file);
  failback_cmd
      ->add_option("--scope", failback.scope,
                   "the scope of the failover to undo (owner:us-east-1), or failover:ID")
      ->required();
  failback_cmd->add_option("--reason", failback.reason, "why, for the audit log")->required();
  failback_cmd->add_option("--accept-data-loss", failback.accept_data_loss,
                           "REASON: go on although the region holds commits the current owner "
                           "never had (they are lost; an approver must accept it too)");
  failback_cmd->add_flag("--dry-run", failback.dry_run,
                         "show the plan and the guards; create nothing");
  failback_cmd->add_flag("--yes,-y", yes, "do not ask for confirmation");
  failback_cmd->add_flag("--id-only", failback.id_only,
                         "print only the new failover's id on stdout (the plan on stderr)");
  failback_cmd->callback(with_token([&] { return CmdFailoverPropose(client, failback, yes); }));

  ApproveOptions approve;
  auto* failover_approve =
      failover->add_subcommand("approve", "approve a proposed failover's plan");
  AddClientOptions(failover_approve, client, token_file);
  failover_approve->add_option("id", failover_id, "failover id")->required();
  failover_approve->add_option("--reason", approve.reason, "why, for the audit log");
  failover_approve->add_option("--accept-data-loss", approve.accept_data_loss,
                               "REASON: promote even if tables lag past max_staleness, or the "
                               "target holds commits the owner never had");
  failover_approve->add_option("--override-cooldown", approve.cooldown_override,
                               "REASON (admin): approve inside the cooldown");
  failover_approve->add_option("--force-candidate", approve.force_candidate,
                               "REASON: promote although another region is further ahead");
  failover_approve->add_flag("--yes,-y", yes, "do not ask for confirmation");
  failover_approve->callback(
      with_token([&] { return CmdFailoverApprove(client, failover_id, approve, yes); }));

  std::string text;
  for (auto [name, kind, help, field] :
       {std::tuple{"confirm-fencing", "fencing-confirmation",
                   "confirm that the old owner has stopped writing (approver)", "--reason"},
        std::tuple{"abort", "abort", "stop a failover before it promotes", "--reason"},
        std::tuple{"ack", "ack", "acknowledge a finished failover; lifts its cooldown",
                   "--comment"}}) {
    auto* cmd = failover->add_subcommand(name, help);
    AddClientOptions(cmd, client, token_file);
    cmd->add_option("id", failover_id, "failover id")->required();
    cmd->add_option(field, text, "why, for the audit log")->required();
    cmd->add_flag("--yes,-y", yes, "do not ask for confirmation");
    cmd->callback(with_token([&, kind = std::string(kind)] {
      return CmdFailoverSimple(client, failover_id, kind, text, yes);
    }));
  }

  auto* failover_report =
      failover->add_subcommand("report", "timeline, RTO, RPO, evidence and steps");
  AddClientOptions(failover_report, client, token_file);
  failover_report->add_option("id", failover_id, "failover id")->required();
  failover_report->callback(with_token([&] { return CmdFailoverReport(client, failover_id); }));

  int watch_timeout = 0;
  auto* failover_watch = failover->add_subcommand(
      "watch", "follow phases and steps until the failover ends (exit 0 completed, 1 otherwise)");
  AddClientOptions(failover_watch, client, token_file);
  failover_watch->add_option("id", failover_id, "failover id")->required();
  failover_watch
      ->add_option("--timeout", watch_timeout, "give up after this many seconds (0: never)")
      ->check(CLI::NonNegativeNumber);
  failover_watch->callback(
      with_token([&] { return CmdFailoverWatch(client, failover_id, watch_timeout, 500); }));

  LagOptions lag_filter;
  auto* lag = app.add_subcommand("lag", "replication lag and divergence per table and replica");
  AddClientOptions(lag, client, token_file);
  lag->add_option("--table", lag_filter.table, "only this table (namespace.table)");
  lag->add_option("--region", lag_filter.region, "only rows where this region owns or replicates");
  lag->add_option("--state", lag_filter.state, "only rows in this state")
      ->check(CLI::IsMember(
          {"caught_up", "behind", "diverged", "not_same_table", "unknown", "not_in_owner"}));
  lag->callback([&] {
    exit_code = ResolveToken(client, token_file) ? CmdLag(client, lag_filter) : kExitUsage;
  });

  auto* readiness = app.add_subcommand(
      "readiness",
      "whether each failover route would work now, and every reason it would not (exit 1 when "
      "one is not ready)");
  AddClientOptions(readiness, client, token_file);
  readiness->callback(
      [&] { exit_code = ResolveToken(client, token_file) ? CmdReadiness(client) : kExitUsage; });

  auto* cluster = app.add_subcommand("cluster", "the replicas of an etcd-backed deployment");
  cluster->require_subcommand(1);
  auto* cluster_status = cluster->add_subcommand(
      "status",
      "who leads, its lease, every replica's view of every region and what a quorum makes of "
      "them (any replica answers)");
  AddClientOptions(cluster_status, client, token_file);
  cluster_status->callback([&] {
    exit_code = ResolveToken(client, token_file) ? CmdClusterStatus(client) : kExitUsage;
  });

  auto* runbook = app.add_subcommand("runbook", "check and plan runbooks");
  runbook->require_subcommand(1);
  std::string runbook_file, plan_from, plan_to, plan_scope, plan_output = "table";
  std::vector<std::string> plan_params;
  auto* runbook_validate =
      runbook->add_subcommand("validate", "check a runbook; errors as FILE:LINE:COL");
  runbook_validate->add_option("file", runbook_file, "runbook file (YAML)")->required();
  runbook_validate->callback([&] { exit_code = CmdRunbookValidate(runbook_file); });
  auto* runbook_plan = runbook->add_subcommand(
      "plan", "print exactly what would run, in order, with params resolved and secrets masked");
  runbook_plan->add_option("file", runbook_file, "runbook file (YAML)")->required();
  runbook_plan->add_option("--from", plan_from, "region losing ownership")->required();
  runbook_plan->add_option("--to", plan_to, "region gaining ownership")->required();
  runbook_plan->add_option("--scope", plan_scope, "namespace:PATTERN, tables:A,B or owner:REGION")
      ->required();
  runbook_plan->add_option("--param", plan_params, "runbook parameter NAME=VALUE (repeatable)");
  runbook_plan->add_option("--output,-o", plan_output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  runbook_plan->callback([&] {
    auto params = ParseParamAssignments(plan_params);
    if (!params.ok()) {
      std::cerr << "icewarden: --param: " << params.status().message() << '\n';
      exit_code = kExitUsage;
      return;
    }
    exit_code = CmdRunbookPlan(runbook_file, plan_from, plan_to, plan_scope, *params, plan_output);
  });

  auto* drill = app.add_subcommand("drill", "disaster-recovery drills: run, list, report, note");
  drill->require_subcommand(1);
  std::string drill_name, drill_mode, drill_id, drill_text;
  bool drill_no_wait = false;
  int drill_timeout = 600;
  auto* drill_run = drill->add_subcommand(
      "run", "run a drill now and print its report (exit 0 passed or waiting, 1 failed)");
  AddClientOptions(drill_run, client, token_file);
  drill_run->add_option("name", drill_name, "the drill's name in the config")->required();
  drill_run->add_option("--mode", drill_mode, "plan, shadow or live (default: the drill's mode)")
      ->check(CLI::IsMember({"plan", "shadow", "live"}));
  drill_run->add_flag("--no-wait", drill_no_wait, "print the run's id and return at once");
  drill_run->add_option("--timeout", drill_timeout, "give up waiting after this many seconds")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  drill_run->callback(with_token(
      [&] { return CmdDrillRun(client, drill_name, drill_mode, !drill_no_wait, drill_timeout); }));
  auto* drill_list = drill->add_subcommand("list", "configured drills and the newest runs");
  AddClientOptions(drill_list, client, token_file);
  drill_list->callback(with_token([&] { return CmdDrillList(client); }));
  auto* drill_report = drill->add_subcommand(
      "report", "a run's verdict, RTO, RPO, durations, steps, timeline and notes");
  AddClientOptions(drill_report, client, token_file);
  drill_report->add_option("id", drill_id, "drill run id")->required();
  drill_report->callback(with_token([&] { return CmdDrillReport(client, drill_id); }));
  auto* drill_note = drill->add_subcommand("note", "add an operator's note to a run's report");
  AddClientOptions(drill_note, client, token_file);
  drill_note->add_option("id", drill_id, "drill run id")->required();
  drill_note->add_option("text", drill_text, "the note")->required();
  drill_note->callback(with_token([&] { return CmdDrillNote(client, drill_id, drill_text); }));

  auto* audit = app.add_subcommand("audit", "the audit log: who did what, when, why");
  audit->require_subcommand(1);
  long long after_seq = 0;
  int audit_limit = 100;
  auto* audit_list = audit->add_subcommand("list", "audit events in order");
  AddClientOptions(audit_list, client, token_file);
  audit_list->add_option("--after", after_seq, "only events after this sequence number");
  audit_list->add_option("--limit", audit_limit, "at most this many")->check(CLI::Range(1, 1000));
  audit_list->callback([&] {
    exit_code = ResolveToken(client, token_file) ? CmdAuditList(client, after_seq, audit_limit)
                                                 : kExitUsage;
  });

  std::string verify_config;
  std::string verify_anchor;
  auto* audit_verify = audit->add_subcommand(
      "verify", "check the audit log's seal in the state record itself (exit 0 intact, 1 broken)");
  audit_verify->add_option("--config,-c", verify_config, "config file naming the state record")
      ->required();
  audit_verify->add_option("--anchor", verify_anchor,
                           "SEQ:SHA256 from an earlier run's \"head\": that event must still be "
                           "there, sealed the same");
  audit_verify->callback(
      [&] { exit_code = CmdAuditVerify(verify_config, verify_anchor, std::cout, std::cerr); });

  std::string shell;
  auto* completion = app.add_subcommand(
      "completion", "print a bash or zsh completion script (install lines at its top)");
  completion->add_option("shell", shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  completion->callback([&] { std::cout << CompletionScript(app, shell); });

  auto* token_cmd = app.add_subcommand("token", "work with API tokens");
  token_cmd->require_subcommand(1);
  auto* token_hash = token_cmd->add_subcommand(
      "hash", "print the SHA-256 of the token read from stdin, for api.tokens[].token_sha256");
  token_hash->callback([&] { exit_code = RunTokenHash(std::cin, std::cout, std::cerr); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);  // prints help or the usage error
    return rc == 0 ? kExitOk : kExitUsage;
  }
  return exit_code;
}

}  // namespace icewarden
