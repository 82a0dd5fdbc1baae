#include "health/probe_attempt.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace icewarden {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::shared_ptr<ProbeAttempt> ProbeAttempt::Start(Timers& timers, std::string kind,
                                                  std::chrono::milliseconds deadline,
                                                  std::function<void(ProbeResult)> done) {
  auto a = std::make_shared<ProbeAttempt>(timers, std::move(kind), deadline, std::move(done));
  a->timer_ = timers.RunAfter(deadline, [a] { a->Fail(DeadlineExceeded(a->deadline_)); });
  return a;
}

ProbeAttempt::ProbeAttempt(Timers& timers, std::string kind, std::chrono::milliseconds deadline,
                           std::function<void(ProbeResult)> done)
    : timers_(timers),
      kind_(std::move(kind)),
      deadline_(deadline),
      started_(timers.Now()),
      done_(std::move(done)) {}

std::chrono::milliseconds ProbeAttempt::Remaining() const {
  auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(timers_.Now() - started_);
  return std::max(deadline_ - spent, std::chrono::milliseconds(1));
}

void ProbeAttempt::Fail(const Status& status, std::string_view request) {
  switch (status.reply()) {
    case PeerReply::kSilent:
      break;
    case PeerReply::kUnparsed:
      NoteAnswer(/*unparsed=*/true);
      break;
    case PeerReply::kAnswered:
    case PeerReply::kUnknown:  // not proven silent: rule 7 takes only proof
      NoteAnswer();
      break;
  }
  Fail(ProbeDetail(status, deadline_, request));
}

void ProbeAttempt::NoteAnswer(bool unparsed) {
  if (finished_) return;
  answered_ = true;
  unparsed_ = unparsed_ || unparsed;
}

void ProbeAttempt::Finish(bool ok, std::string detail) {
  if (finished_) return;
  finished_ = true;
  // Releases the timer's reference to this attempt; the caller still holds one.
  timer_.Cancel();
  ProbeResult r;
  r.ok = ok;
  r.kind = kind_;
  r.detail = std::move(detail);
  r.answered = answered_;
  r.unparsed = unparsed_;
  r.latency = std::chrono::duration_cast<std::chrono::milliseconds>(timers_.Now() - started_);
  auto done = std::move(done_);
  done_ = nullptr;
  done(std::move(r));
}

std::string DeadlineExceeded(std::chrono::milliseconds deadline) {
  return "deadline " + std::to_string(deadline.count()) + "ms exceeded";
}

std::string ProbeDetail(const Status& status, std::chrono::milliseconds deadline,
                        std::string_view request) {
  const std::string& msg = status.message();
  const std::string lower = Lower(msg);
  if (lower.find("connection refused") != std::string::npos) return "connection refused";
  if (lower.find("deadline") != std::string::npos && lower.find("exceeded") != std::string::npos)
    return DeadlineExceeded(deadline);
  if (lower.find("timed out") != std::string::npos) return DeadlineExceeded(deadline);
  auto http = msg.find(": HTTP ");
  if (http != std::string::npos && http + 10 <= msg.size()) {
    std::string code = msg.substr(http + 7, 3);
    if (std::all_of(code.begin(), code.end(), [](char c) { return std::isdigit(c); }))
      return "HTTP " + code + " from " + std::string(request);
  }
  return msg;
}

}  // namespace icewarden
