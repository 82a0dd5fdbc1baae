#include "tests/fakes/etcd_admin.h"

#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>

namespace icewarden::testing {
namespace {

using nlohmann::json;

// The gateway's keys are base64; these are short ASCII.
std::string Base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned v = 0;
  int bits = 0;
  for (unsigned char c : in) {
    v = v << 8 | c;
    bits += 8;
    while (bits >= 6) out.push_back(k[(v >> (bits -= 6)) & 63]);
  }
  if (bits > 0) out.push_back(k[(v << (6 - bits)) & 63]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

}  // namespace

EtcdAdmin::EtcdAdmin(std::string url, EtcdAdminTls tls)
    : url_(std::move(url)), tls_(std::move(tls)) {}

int EtcdAdmin::Post(const std::string& path, const std::string& body, const std::string& token,
                    std::string* answer) {
  auto client = tls_.cert_file.empty()
                    ? std::make_unique<httplib::Client>(url_)
                    : std::make_unique<httplib::Client>(url_, tls_.cert_file, tls_.key_file);
  client->enable_server_certificate_verification(false);
  client->set_connection_timeout(2, 0);
  client->set_read_timeout(5, 0);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", token);
  auto r = client->Post(path.c_str(), headers, body, "application/json");
  if (!r) return 0;
  if (answer != nullptr) *answer = r->body;
  return r->status;
}

bool EtcdAdmin::EnableAuth(const std::string& root_password, const std::string& user,
                           const std::string& password, std::string* error) {
  const std::string everything_under_slash =
      json{{"name", "icewarden"},
           {"perm", {{"permType", "READWRITE"}, {"key", Base64("/")}, {"range_end", Base64("0")}}}}
          .dump();
  const std::pair<std::string, std::string> steps[] = {
      {"/v3/auth/user/add", json{{"name", "root"}, {"password", root_password}}.dump()},
      {"/v3/auth/role/add", json{{"name", "root"}}.dump()},
      {"/v3/auth/user/grant", json{{"user", "root"}, {"role", "root"}}.dump()},
      {"/v3/auth/user/add", json{{"name", user}, {"password", password}}.dump()},
      {"/v3/auth/role/add", json{{"name", "icewarden"}}.dump()},
      {"/v3/auth/role/grant", everything_under_slash},
      {"/v3/auth/user/grant", json{{"user", user}, {"role", "icewarden"}}.dump()},
      {"/v3/auth/enable", "{}"},
  };
  for (const auto& [path, body] : steps) {
    std::string answer;
    if (Post(path, body, "", &answer) != 200) {
      *error = path + ": " + answer;
      return false;
    }
  }
  return true;
}

std::string EtcdAdmin::Token(const std::string& user, const std::string& password) {
  std::string answer;
  if (Post("/v3/auth/authenticate", json{{"name", user}, {"password", password}}.dump(), "",
           &answer) != 200)
    return "";
  json parsed = json::parse(answer, nullptr, false);
  return parsed.is_object() ? parsed.value("token", "") : "";
}

bool EtcdAdmin::DisableAuth(const std::string& root_password, std::string* error) {
  const std::string token = Token("root", root_password);
  std::string answer;
  if (token.empty() || Post("/v3/auth/disable", "{}", token, &answer) != 200) {
    *error = "/v3/auth/disable: " + answer;
    return false;
  }
  return true;
}

bool EtcdAdmin::ReEnableAuth(std::string* error) {
  std::string answer;
  if (Post("/v3/auth/enable", "{}", "", &answer) != 200) {
    *error = "/v3/auth/enable: " + answer;
    return false;
  }
  return true;
}

}  // namespace icewarden::testing
