// The CLI's read commands: fetch JSON from the daemon's API and render it for people
// (aligned tables) or for programs (the API's JSON, unchanged).
#pragma once

#include <string>

namespace icewarden {

struct ClientOptions {
  std::string server = "http://127.0.0.1:8480";
  std::string token;
  std::string output = "table";  // "table" | "json"
  int timeout_seconds = 10;
  // An https:// server (api.tls): the CA its certificate is checked against (empty: the
  // system's), and a client certificate and key for a daemon that asks for one
  // (api.tls.client_ca_file).
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

// Each returns an ExitCode (cli.h) and prints to stdout, errors to stderr.
int CmdStatus(const ClientOptions& o);
int CmdOwnershipList(const ClientOptions& o, const std::string& owner, int limit);
int CmdFailoverList(const ClientOptions& o, int limit);
int CmdFailoverShow(const ClientOptions& o, const std::string& id);
struct LagOptions {
  std::string table, region, state;  // filters; empty: all
};
int CmdLag(const ClientOptions& o, const LagOptions& filter);
int CmdAuditList(const ClientOptions& o, long long after_seq, int limit);

}  // namespace icewarden
