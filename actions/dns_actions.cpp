#include "actions/dns_actions.h"

#include "actions/action_kinds.h"

namespace icewarden {

Status registerDnsActions(ActionRegistry& r, const ActionEnv&) {
  Status s = r.Register(MakeDnsRfc2136Action());
  if (!s.ok()) return s;
  return r.Register(MakeVerifyDnsAction());
}

}  // namespace icewarden
