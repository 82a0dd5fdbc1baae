#include "state/audit_seal.h"

#include <charconv>

#include "state/digest.h"
#include "state/state_store.h"
#include "state/types.h"

namespace icewarden {
namespace {

// Netstring-like: "<length>:<bytes>\n" per field, after a version line, so that fields
// cannot run into each other and a later format can be told apart.
void AppendSealField(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out.push_back(':');
  out.append(field);
  out.push_back('\n');
}

std::string SeqText(std::int64_t seq) { return "event " + std::to_string(seq); }

constexpr std::size_t kAuditVerifyPage = 1000;

}  // namespace

std::string AuditSealOf(const AuditEvent& e) {
  std::string text = "icewarden.audit.v1\n";
  AppendSealField(text, std::to_string(e.seq));
  AppendSealField(text, std::to_string(e.at));
  AppendSealField(text, e.actor);
  AppendSealField(text, e.source);
  AppendSealField(text, e.action);
  AppendSealField(text, e.target);
  AppendSealField(text, e.reason);
  AppendSealField(text, e.detail_json);
  AppendSealField(text, e.prev_sha256);
  return Sha256Hex(text);
}

std::optional<AuditAnchor> ParseAuditAnchor(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  AuditAnchor a;
  const char* end = text.data() + colon;
  auto [p, ec] = std::from_chars(text.data(), end, a.seq);
  if (ec != std::errc() || p != end || a.seq <= 0) return std::nullopt;
  const std::string hex = text.substr(colon + 1);
  auto digest = ParseSha256Hex(hex);
  if (!digest) return std::nullopt;
  a.sha256 = HexOf(*digest);
  return a;
}

AuditChainCheck::AuditChainCheck(std::optional<AuditAnchor> anchor) : anchor_(std::move(anchor)) {}

bool AuditChainCheck::Break(std::int64_t seq, std::string problem) {
  report_.intact = false;
  report_.broken_at = seq;
  report_.problem = std::move(problem);
  return false;
}

bool AuditChainCheck::Add(const AuditEvent& e) {
  if (!report_.intact) return false;
  const std::int64_t expected = report_.head_seq + 1;
  const bool sealed = !e.sha256.empty() || !e.prev_sha256.empty();
  if (e.seq != expected) {
    if (e.seq < expected)
      return Break(e.seq, SeqText(e.seq) + " comes after " + SeqText(report_.head_seq) +
                              ": the log is out of order");
    return Break(expected, (expected == e.seq - 1 ? SeqText(expected) + " is"
                                                  : "events " + std::to_string(expected) + " to " +
                                                        std::to_string(e.seq - 1) + " are") +
                               " missing: the log jumps from " + SeqText(report_.head_seq) +
                               " to " + SeqText(e.seq) + " (removed)");
  }
  if (!sealed) {
    if (!report_.head_sha256.empty() || (report_.events > report_.unsealed))
      return Break(e.seq, SeqText(e.seq) + " has no seal, but " + SeqText(report_.head_seq) +
                              " before it has: its seal was removed, or it was inserted");
    ++report_.unsealed;
  } else {
    if (e.prev_sha256 != report_.head_sha256) {
      return Break(e.seq,
                   SeqText(e.seq) + " does not follow " + SeqText(report_.head_seq) +
                       ": it names the seal " +
                       (e.prev_sha256.empty() ? std::string("(none)") : e.prev_sha256) +
                       " before it, but " + SeqText(report_.head_seq) + "'s is " +
                       (report_.head_sha256.empty() ? std::string("(none)") : report_.head_sha256) +
                       " (one of the two was edited, or events were moved)");
    }
    if (const std::string want = AuditSealOf(e); e.sha256 != want)
      return Break(e.seq, SeqText(e.seq) + "'s fields do not match its seal " + e.sha256 +
                              " (they seal to " + want + "): the event was edited");
  }
  if (anchor_ && e.seq == anchor_->seq) {
    anchor_seen_ = true;
    if (e.sha256 != anchor_->sha256)
      return Break(e.seq, SeqText(e.seq) + " is sealed " +
                              (e.sha256.empty() ? std::string("(none)") : e.sha256) +
                              ", not the anchor's " + anchor_->sha256 +
                              ": the log was rewritten from there on");
  }
  ++report_.events;
  report_.head_seq = e.seq;
  report_.head_sha256 = e.sha256;
  return true;
}

AuditChainReport AuditChainCheck::Finish() {
  if (report_.intact && anchor_ && !anchor_seen_) {
    Break(anchor_->seq, "the log ends at " + SeqText(report_.head_seq) + ", before the anchor's " +
                            SeqText(anchor_->seq) + ": events were removed from its end");
  }
  return report_;
}

Result<AuditChainReport> VerifyAuditChain(StateStore& store, std::optional<AuditAnchor> anchor) {
  AuditChainCheck check(std::move(anchor));
  AuditQuery q;
  q.limit = kAuditVerifyPage;
  for (;;) {
    auto page = store.ListAudit(q);
    if (!page.ok()) return page.status();
    for (const AuditEvent& e : *page)
      if (!check.Add(e)) return check.Finish();
    if (page->size() < kAuditVerifyPage) return check.Finish();
    q.after_seq = page->back().seq;
  }
}

}  // namespace icewarden
