// The dns family: dns.rfc2136 (change records with a TSIG-signed RFC 2136 UPDATE and
// check the result) and verify.dns (check what one server answers). Both talk to the
// given server directly through actions/dns_client.h. registerDnsActions
// (dns_actions.cpp) registers both; each kind lives in its own file.
// Thread-safety: the actions are stateless.
#pragma once

#include <memory>

#include "actions/action.h"

namespace icewarden {

std::unique_ptr<Action> MakeDnsRfc2136Action();
std::unique_ptr<Action> MakeVerifyDnsAction();

}  // namespace icewarden
