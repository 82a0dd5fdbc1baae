// What a config reload cannot apply live (orchestrator/serve/config_reload.h): the API's TLS
// settings are loaded with the listener, so a reload that changes them is refused naming each,
// and a changed key is named, never shown.
#include <gtest/gtest.h>

#include "orchestrator/serve/config_reload.h"

namespace icewarden {
namespace {

TEST(ChangesNeedingRestartTest, TheApisTlsNeedsARestartAndItsKeyIsNeverShown) {
  Config running;
  running.api.tls.cert_file = "/etc/icewarden/api.pem";
  running.api.tls.key = Secret("-----BEGIN PRIVATE KEY-----old");
  Config next = running;
  EXPECT_TRUE(ChangesNeedingRestart(running, next).empty());

  next.api.tls.cert_file = "/etc/icewarden/api-2027.pem";
  next.api.tls.key = Secret("-----BEGIN PRIVATE KEY-----new");
  next.api.tls.client_ca_file = "/etc/icewarden/ops-ca.pem";
  const std::vector<std::string> changes = ChangesNeedingRestart(running, next);
  EXPECT_EQ(
      changes,
      (std::vector<std::string>{
          "api.tls.cert_file (/etc/icewarden/api.pem -> /etc/icewarden/api-2027.pem)",
          "api.tls key (changed)", "api.tls.client_ca_file ( -> /etc/icewarden/ops-ca.pem)"}));
  for (const std::string& c : changes) EXPECT_EQ(c.find("PRIVATE KEY"), std::string::npos) << c;
}

}  // namespace
}  // namespace icewarden
