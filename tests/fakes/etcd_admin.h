// What an etcd administrator does before icewarden connects, through the member's JSON
// gateway (etcdctl is not installed on these machines): add users and roles, grant, and turn
// authentication on or off. Over https with the given files; the member's certificate is not
// checked here (that is what the tests check of EtcdClient, not of their own setup).
#pragma once

#include <string>

namespace icewarden::testing {

struct EtcdAdminTls {
  std::string cert_file, key_file;  // a client certificate, for --client-cert-auth members
};

class EtcdAdmin {
 public:
  EtcdAdmin(std::string url, EtcdAdminTls tls = {});

  // Adds `root` (role root) and `user` with a role that reads and writes every key under "/",
  // then turns authentication on. False, with the gateway's answer in *error, on failure.
  bool EnableAuth(const std::string& root_password, const std::string& user,
                  const std::string& password, std::string* error);
  // As root: auth off, and on again (every token issued before is void).
  bool DisableAuth(const std::string& root_password, std::string* error);
  bool ReEnableAuth(std::string* error);
  // A token for `user`, as a client would get it; empty on failure.
  std::string Token(const std::string& user, const std::string& password);
  // POST `body` (JSON text) to `path` with `token`; the HTTP status (0: no answer), the body.
  int Post(const std::string& path, const std::string& body, const std::string& token,
           std::string* answer);

 private:
  std::string url_;
  EtcdAdminTls tls_;
};

}  // namespace icewarden::testing
