// The CLI's failover commands: propose, approve, confirm-fencing, abort, ack, report, watch.
//
// A command that changes state first shows what will change (the tables, from -> to, the
// runbook's steps, the guards as they stand, the RPO estimate) and asks for confirmation on
// a terminal; --yes skips the question; without a terminal and without --yes it refuses
// with exit 2, so a script never changes state by accident.
#pragma once

#include <string>

#include "orchestrator/cli/client.h"

namespace icewarden {

struct ProposeOptions {
  std::string kind = "failover";  // failover | switchover | failback (no to, no from)
  std::string to, scope, from, reason;
  std::string route;             // a route by name; empty: the first that matches
  std::string accept_data_loss;  // failback onto a diverged region: the proposer's reason
  bool dry_run = false;
  bool id_only = false;  // stdout: the new failover's id alone; the plan goes to stderr
};

struct ApproveOptions {
  std::string reason, accept_data_loss, cooldown_override, force_candidate;
};

// `yes`: skip the confirmation. `ask`: reads the answer (tests); empty: the terminal.
int CmdFailoverPropose(const ClientOptions& o, const ProposeOptions& p, bool yes);
int CmdFailoverApprove(const ClientOptions& o, const std::string& id, const ApproveOptions& a,
                       bool yes);
// kind: "fencing-confirmation" | "abort" | "ack"; text: the reason (or the comment).
int CmdFailoverSimple(const ClientOptions& o, const std::string& id, const std::string& kind,
                      const std::string& text, bool yes);
int CmdFailoverReport(const ClientOptions& o, const std::string& id);
// `region fence|unfence NAME --reason`: the fenced overlay, an operator's command.
int CmdRegionOverlay(const ClientOptions& o, const std::string& region, bool fence,
                     const std::string& reason, bool yes);
// Prints phase and step changes until the failover ends: 0 completed, 1 otherwise.
// timeout_seconds 0: no limit.
int CmdFailoverWatch(const ClientOptions& o, const std::string& id, int timeout_seconds,
                     int poll_ms);

}  // namespace icewarden
