// The log's two formats. `json` is one object a line in a fixed key order (ts, level,
// logger, msg, then the fields found in the message), so that `jq`, Loki and Elasticsearch
// read it without a parser of ours.

#include <spdlog/details/log_msg.h>
#include <spdlog/formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <ctime>
#include <nlohmann/json.hpp>

#include "orchestrator/service/service.h"

namespace icewarden {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

// The first id "PREFIX..." that starts a word: the prefix, then letters, digits and dashes.
std::string FindId(std::string_view message, std::string_view prefix) {
  for (std::size_t at = message.find(prefix); at != std::string_view::npos;
       at = message.find(prefix, at + 1)) {
    if (at > 0 && IsWordChar(message[at - 1])) continue;
    std::size_t end = at + prefix.size();
    while (end < message.size() &&
           (std::isalnum(static_cast<unsigned char>(message[end])) != 0 || message[end] == '-'))
      ++end;
    if (end > at + prefix.size()) return std::string(message.substr(at, end - at));
  }
  return {};
}

// The first of `names` that the message holds as a whole word.
std::string FindName(std::string_view message, const std::vector<std::string>& names) {
  std::size_t best = std::string_view::npos;
  std::string found;
  for (const std::string& name : names) {
    for (std::size_t at = message.find(name); at != std::string_view::npos && at < best;
         at = message.find(name, at + 1)) {
      const std::size_t end = at + name.size();
      // A sentence's full stop after a name is not part of it.
      const bool word_end =
          end == message.size() || !IsWordChar(message[end]) ||
          (message[end] == '.' && (end + 1 == message.size() || !IsWordChar(message[end + 1])));
      if ((at == 0 || !IsWordChar(message[at - 1])) && word_end) {
        best = at;
        found = name;
        break;
      }
    }
  }
  return found;
}

std::string Rfc3339(spdlog::log_clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms % 1000));
  return buf;
}

class JsonFormatter final : public spdlog::formatter {
 public:
  explicit JsonFormatter(std::vector<std::string> regions) : regions_(std::move(regions)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto level = spdlog::level::to_string_view(msg.level);
    const std::string line =
        JsonLogLine(Rfc3339(msg.time), std::string_view(level.data(), level.size()),
                    std::string_view(msg.logger_name.data(), msg.logger_name.size()),
                    std::string_view(msg.payload.data(), msg.payload.size()), regions_);
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>(regions_);
  }

 private:
  std::vector<std::string> regions_;
};

}  // namespace

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return Status::InvalidArgument("--log-format '" + std::string(text) + "': expected text or json");
}

std::string JsonLogLine(std::string_view ts, std::string_view level, std::string_view logger,
                        std::string_view message, const std::vector<std::string>& regions) {
  nlohmann::ordered_json j;
  j["ts"] = ts;
  j["level"] = level;
  j["logger"] = logger;
  j["msg"] = message;
  if (std::string id = FindId(message, "fo-"); !id.empty()) j["failover"] = id;
  if (std::string id = FindId(message, "dr-"); !id.empty()) j["drill"] = id;
  if (std::string region = FindName(message, regions); !region.empty()) j["region"] = region;
  // A message with bytes that are not UTF-8 (a catalog's answer quoted in an error) is kept
  // readable with U+FFFD rather than dropped.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void ConfigureLogging(const std::string& logger_name, LogFormat format,
                      std::vector<std::string> regions) {
  spdlog::drop(logger_name);
  if (format == LogFormat::kText) {
    spdlog::set_default_logger(spdlog::stderr_color_mt(logger_name));
    return;
  }
  // A plain sink: colour escapes have no place inside a JSON line.
  auto logger = spdlog::stderr_logger_mt(logger_name);
  logger->set_formatter(std::make_unique<JsonFormatter>(std::move(regions)));
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace icewarden
