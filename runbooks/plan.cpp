#include "runbooks/plan.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "runbooks/yaml_reader.h"

namespace icewarden {
namespace {

// The secret parts of one resolved string: `masked` is `real` with each secret replaced by
// "***", so the literal pieces between the stars line up with `real`.
void CollectSecrets(const std::string& real, const std::string& masked,
                    std::vector<std::string>* out) {
  static const std::string kStars = "***";
  if (real == masked || masked.find(kStars) == std::string::npos) return;
  std::vector<std::string> pieces;
  for (std::size_t from = 0;;) {
    const std::size_t at = masked.find(kStars, from);
    pieces.push_back(masked.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) break;
    from = at + kStars.size();
  }
  if (real.compare(0, pieces.front().size(), pieces.front()) != 0) {
    out->push_back(real);  // cannot align: treat the whole value as secret
    return;
  }
  std::size_t pos = pieces.front().size();
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    const bool last = i + 1 == pieces.size();
    std::size_t end = last ? real.size() - pieces[i].size() : real.find(pieces[i], pos);
    if (end == std::string::npos || end < pos ||
        (last && real.compare(end, std::string::npos, pieces[i]) != 0)) {
      out->push_back(real);
      return;
    }
    if (end > pos) out->push_back(real.substr(pos, end - pos));
    pos = end + pieces[i].size();
  }
}

void CollectSecrets(const nlohmann::json& real, const nlohmann::json& masked,
                    std::vector<std::string>* out) {
  if (real.is_string() && masked.is_string()) {
    CollectSecrets(real.get<std::string>(), masked.get<std::string>(), out);
  } else if (real.is_object() && masked.is_object()) {
    for (const auto& [k, v] : real.items())
      if (masked.contains(k)) CollectSecrets(v, masked[k], out);
  } else if (real.is_array() && masked.is_array()) {
    for (std::size_t i = 0; i < real.size() && i < masked.size(); ++i)
      CollectSecrets(real[i], masked[i], out);
  }
}

// The action's plan line for the real values (an action may check a secret's form, which
// "***" never has), with every secret masked in the text.
std::string MaskedPlanLine(const Action& action, const ResolvedParams& resolved) {
  std::string line = action.Plan(resolved.value);
  std::vector<std::string> secrets;
  CollectSecrets(resolved.value, resolved.masked, &secrets);
  // Longest first, so that a secret containing another is masked whole.
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at = line.find(secret); at != std::string::npos;
         at = line.find(secret, at + 3))
      line.replace(at, secret.size(), "***");
  }
  return line;
}

std::string JoinMessages(const std::vector<std::string>& messages) {
  std::string out;
  for (const auto& m : messages) out += (out.empty() ? "" : "; ") + m;
  return out;
}

// A parameter given as text, read exactly as the runbook file's scalars are read (so that
// a default `runbook validate` accepted, "+5" or "yes", is accepted here too).
YamlValue AsScalar(const std::string& s, YamlIssues* scratch) {
  return YamlValue(YAML::Node(s), YAML::Mark(), "", scratch);
}

bool IsDuration(const std::string& s) {
  YamlIssues scratch;
  return AsScalar(s, &scratch).Duration().has_value();
}

// `value` as a JSON value of `type`, or a message saying why it is not one.
std::optional<nlohmann::json> Typed(const RunbookParameter& p, const nlohmann::json& value,
                                    std::string* error) {
  if (p.type == "integer") {
    if (value.is_number_integer()) return value;
    if (value.is_string()) {
      YamlIssues scratch;
      if (auto v = AsScalar(value.get<std::string>(), &scratch).Integer()) return *v;
    }
    *error = "parameter '" + p.name + "' is an integer, got " + value.dump();
    return std::nullopt;
  }
  if (p.type == "boolean") {
    if (value.is_boolean()) return value;
    if (value.is_string()) {
      YamlIssues scratch;
      if (auto v = AsScalar(value.get<std::string>(), &scratch).Bool()) return *v;
    }
    *error = "parameter '" + p.name + "' is true or false, got " + value.dump();
    return std::nullopt;
  }
  if (!value.is_string()) {
    *error = "parameter '" + p.name + "' is a " + p.type + ", got " + value.dump();
    return std::nullopt;
  }
  if (p.type == "duration" && !IsDuration(value.get<std::string>())) {
    *error = "parameter '" + p.name + "' is a duration such as '30s' or '5m', got " + value.dump();
    return std::nullopt;
  }
  return value;
}

std::string Number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string RetryText(const StepRetry& r) {
  if (r.attempts <= 1) return "no retry";
  return std::to_string(r.attempts) + " attempts, backoff " + FormatDuration(r.initial_backoff) +
         " x" + Number(r.multiplier) + " up to " + FormatDuration(r.max_backoff) + ", jitter " +
         Number(r.jitter * 100) + "%";
}

std::string GuardText(const RunbookGuard& g) {
  std::string out = g.kind;
  std::string args;
  for (auto it = g.params.begin(); it != g.params.end(); ++it) {
    args += (args.empty() ? "" : ", ") + it.key() + " " +
            (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return args.empty() ? out : out + " (" + args + ")";
}

nlohmann::json RetryJson(const StepRetry& r) {
  return {{"attempts", r.attempts},
          {"initial_backoff", FormatDuration(r.initial_backoff)},
          {"max_backoff", FormatDuration(r.max_backoff)},
          {"multiplier", r.multiplier},
          {"jitter", r.jitter}};
}

}  // namespace

Result<std::map<std::string, nlohmann::json>> BindRunbookParameters(
    const Runbook& runbook, const std::map<std::string, nlohmann::json>& given) {
  std::vector<std::string> errors;
  std::vector<std::string> declared;
  for (const auto& p : runbook.parameters) declared.push_back(p.name);
  for (const auto& [name, value] : given) {
    if (std::find(declared.begin(), declared.end(), name) != declared.end()) continue;
    std::string message = "unknown parameter '" + name + "'; ";
    if (declared.empty()) {
      message += "the runbook declares no parameters";
    } else {
      message += "the runbook declares " + QuotedList(declared);
      if (auto close = ClosestMatch(name, declared)) message += "; did you mean '" + *close + "'?";
    }
    errors.push_back(message);
  }
  std::map<std::string, nlohmann::json> bound;
  for (const auto& p : runbook.parameters) {
    std::optional<nlohmann::json> raw;
    if (auto it = given.find(p.name); it != given.end()) {
      raw = it->second;
    } else if (p.default_value) {
      raw = *p.default_value;
    } else if (p.required) {
      errors.push_back("missing required parameter '" + p.name + "'" +
                       (p.description.empty() ? "" : " (" + p.description + ")"));
      continue;
    } else {
      continue;
    }
    std::string error;
    if (auto v = Typed(p, *raw, &error)) {
      bound[p.name] = *v;
    } else {
      errors.push_back(error);
    }
  }
  if (!errors.empty()) return Status::InvalidArgument(JoinMessages(errors));
  return bound;
}

namespace {

// Resolves `params` and has the action check the result: templated values could only be
// type-checked by `validate`; resolved, the action checks their format too. Messages name the
// param, never its (maybe secret) value beyond what the action's own message shows.
std::optional<ResolvedParams> ResolveAndCheck(const Action& action, const nlohmann::json& params,
                                              const TemplateBindings& b, const std::string& what,
                                              std::vector<std::string>* errors) {
  auto resolved = ResolveTemplates(params, b);
  if (!resolved.ok()) {
    errors->push_back(what + ": " + resolved.status().message());
    return std::nullopt;
  }
  bool valid = true;
  for (const ParamError& pe : action.Validate(resolved->value)) {
    errors->push_back(what + ": params." + pe.path + ": " + pe.message);
    valid = false;
  }
  if (!valid) return std::nullopt;
  return std::move(resolved).value();
}

}  // namespace

Result<RunbookPlan> PlanRunbook(const Runbook& runbook, const ActionRegistry& registry,
                                const TemplateBindings& bindings) {
  auto params = BindRunbookParameters(runbook, bindings.params);
  if (!params.ok()) return params.status();
  TemplateBindings b = bindings;
  b.params = params.value();

  RunbookPlan plan;
  plan.runbook = runbook.name;
  plan.description = runbook.description;
  plan.source_file = runbook.source_file;
  plan.failover_id = b.failover_id;
  plan.from = b.from;
  plan.to = b.to;
  plan.scope = b.scope;
  plan.parameters = b.params;
  plan.guards = runbook.guards;

  std::vector<std::string> errors;
  int number = 0;
  for (RunbookSection section : {RunbookSection::kFence, RunbookSection::kPromote,
                                 RunbookSection::kVerify, RunbookSection::kCompensate}) {
    for (const RunbookStep& step : runbook.Section(section)) {
      const Action* action = registry.Find(step.action);
      if (action == nullptr) {
        return Status::FailedPrecondition("step '" + step.id +
                                          "': " + registry.UnknownKindMessage(step.action));
      }
      RunbookPlanEntry e;
      e.number = ++number;
      e.section = section;
      e.step_id = step.id;
      e.action = step.action;
      e.parallel_group = step.parallel_group;
      e.timeout = step.timeout;
      e.retry = step.retry;
      e.on_failure = step.on_failure;
      auto resolved = ResolveAndCheck(*action, step.params, b, "step '" + step.id + "'", &errors);
      if (!resolved) continue;
      e.params = resolved->masked;
      e.plan_line = MaskedPlanLine(*action, *resolved);
      if (step.compensate) {
        const Action* undo = registry.Find(step.compensate->action);
        if (undo == nullptr) {
          return Status::FailedPrecondition("step '" + step.id + "' compensate: " +
                                            registry.UnknownKindMessage(step.compensate->action));
        }
        auto c = ResolveAndCheck(*undo, step.compensate->params, b,
                                 "step '" + step.id + "' compensate", &errors);
        if (!c) continue;
        e.compensation =
            RunbookPlanCompensation{step.compensate->action, c->masked, MaskedPlanLine(*undo, *c)};
      }
      plan.entries.push_back(std::move(e));
    }
  }
  if (!errors.empty()) return Status::InvalidArgument(JoinMessages(errors));
  return plan;
}

std::string RenderPlanText(const RunbookPlan& plan) {
  std::ostringstream out;
  out << "runbook " << plan.runbook;
  if (!plan.source_file.empty()) out << " (" << plan.source_file << ")";
  out << '\n';
  if (!plan.description.empty()) out << "  " << plan.description << '\n';
  out << "failover " << plan.failover_id << ": " << plan.from << " -> " << plan.to << ", scope "
      << plan.scope << '\n';
  if (!plan.parameters.empty()) {
    out << "parameters:";
    for (const auto& [name, value] : plan.parameters) {
      out << ' ' << name << '=' << (value.is_string() ? value.get<std::string>() : value.dump());
    }
    out << '\n';
  }
  if (!plan.guards.empty()) {
    out << "guards (at approval and again before promote):";
    std::string sep = " ";
    for (const auto& g : plan.guards) {
      out << sep << GuardText(g);
      sep = "; ";
    }
    out << '\n';
  }
  std::optional<RunbookSection> current;
  for (const auto& e : plan.entries) {
    if (current != e.section) {
      current = e.section;
      out << '\n' << RunbookSectionName(e.section);
      if (e.section == RunbookSection::kCompensate) {
        out << " (only on rollback: after each completed step's own compensation, newest first)";
      }
      out << '\n';
    }
    out << "  " << e.number << ". " << e.step_id << " [" << e.action << "]";
    if (!e.parallel_group.empty()) out << " (parallel group " << e.parallel_group << ")";
    out << '\n';
    out << "     " << e.plan_line << '\n';
    out << "     timeout " << FormatDuration(e.timeout) << ", " << RetryText(e.retry)
        << ", on failure " << OnFailureName(e.on_failure) << '\n';
    out << "     params " << e.params.dump() << '\n';
    if (e.compensation) {
      out << "     compensate with [" << e.compensation->action << "] " << e.compensation->plan_line
          << '\n';
    }
  }
  return out.str();
}

nlohmann::json RenderPlanJson(const RunbookPlan& plan) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& e : plan.entries) {
    nlohmann::json step = {
        {"number", e.number},
        {"section", RunbookSectionName(e.section)},
        {"id", e.step_id},
        {"action", e.action},
        {"parallel_group",
         e.parallel_group.empty() ? nlohmann::json() : nlohmann::json(e.parallel_group)},
        {"timeout", FormatDuration(e.timeout)},
        {"retry", RetryJson(e.retry)},
        {"on_failure", OnFailureName(e.on_failure)},
        {"params", e.params},
        {"plan", e.plan_line},
        {"compensation", nullptr},
    };
    if (e.compensation) {
      step["compensation"] = {{"action", e.compensation->action},
                              {"params", e.compensation->params},
                              {"plan", e.compensation->plan_line}};
    }
    steps.push_back(std::move(step));
  }
  nlohmann::json guards = nlohmann::json::array();
  for (const auto& g : plan.guards) guards.push_back({{"kind", g.kind}, {"params", g.params}});
  nlohmann::json parameters = nlohmann::json::object();
  for (const auto& [name, value] : plan.parameters) parameters[name] = value;
  return {{"runbook", plan.runbook},
          {"description", plan.description},
          {"file", plan.source_file},
          {"failover",
           {{"id", plan.failover_id}, {"from", plan.from}, {"to", plan.to}, {"scope", plan.scope}}},
          {"parameters", parameters},
          {"guards", guards},
          {"steps", steps}};
}

}  // namespace icewarden
