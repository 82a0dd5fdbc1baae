#include "health/probe.h"

#include <utility>

#include "health/probe_kinds.h"

namespace icewarden {

Status ProbeRegistry::Register(std::string kind, ProbeFactory factory) {
  if (kind.empty()) return Status::InvalidArgument("a probe kind needs a name");
  if (!factory) return Status::InvalidArgument("probe kind \"" + kind + "\" has no factory");
  if (factories_.count(kind)) {
    return Status::InvalidArgument("probe kind \"" + kind + "\" is already registered");
  }
  factories_.emplace(std::move(kind), std::move(factory));
  return Status::Ok();
}

Result<std::unique_ptr<Probe>> ProbeRegistry::Create(const ProbeSpec& spec,
                                                     const ProbeContext& ctx) const {
  auto it = factories_.find(spec.kind);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& k : Kinds()) known += (known.empty() ? "" : ", ") + k;
    return Status::InvalidArgument("unknown probe kind \"" + spec.kind + "\"" +
                                   (spec.region.empty() ? "" : " for region " + spec.region) +
                                   "; known kinds: " + (known.empty() ? "(none)" : known));
  }
  return it->second(spec, ctx);
}

std::vector<std::string> ProbeRegistry::Kinds() const {
  std::vector<std::string> out;
  for (const auto& [k, f] : factories_) out.push_back(k);
  return out;
}

Status registerBuiltinProbes(ProbeRegistry& registry) {
  const std::pair<const char*, ProbeFactory> builtins[] = {
      {kCatalogConfigProbe, MakeCatalogConfigProbe},
      {kTableLoadProbe, MakeTableLoadProbe},
      {kCanaryCommitProbe, MakeCanaryCommitProbe},
      {kTcpProbe, MakeTcpProbe},
      {kDnsProbe, MakeDnsProbe},
  };
  for (const auto& [kind, factory] : builtins) {
    Status s = registry.Register(kind, factory);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace icewarden
