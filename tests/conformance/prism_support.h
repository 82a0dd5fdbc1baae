// The pieces of the Prism fixtures that are not the fixture: the recorded exchange, the
// transport that records, where the spec is, the derived spec Prism validates against, reading
// Prism's log and answers, and one Prism process (prism_fixture.h explains why each exists).
#pragma once

#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "health/http_transport.h"
#include "tests/fakes/free_port.h"
#include "tests/fakes/subprocess.h"
#include "tests/fakes/test_paths.h"

namespace icewarden::conformance {

inline constexpr const char* kSpecName = "iceberg-rest-catalog-open-api-1.11.0.yaml";
inline constexpr const char* kRegion = "us-east-1";
inline constexpr const char* kWarehouse = "lab";
inline constexpr const char* kToken = "conformance-token";
inline constexpr const char* kClientId = "icewarden";
inline constexpr const char* kClientSecret = "conformance-secret";

// One HTTP exchange as the client saw it.
struct Exchange {
  std::string method;
  std::string url;
  std::string request_body;
  int status = 0;  // 0: the transport failed (see `error`)
  std::string response_body;
  std::string violations_header;  // Prism's sl-violations, if any
  std::string error;
};

// Wraps the real transport and records every exchange, token requests included.
class RecordingTransport : public HttpTransport {
 public:
  explicit RecordingTransport(HttpTransport& inner) : inner_(inner) {}

  void Send(HttpRequest request, std::chrono::milliseconds deadline,
            std::function<void(Result<HttpResponse>)> done) override {
    auto at = exchanges_.size();
    exchanges_.push_back({request.method, request.url, request.body, 0, "", "", ""});
    inner_.Send(std::move(request), deadline,
                [this, at, done = std::move(done)](Result<HttpResponse> r) {
                  Exchange& e = exchanges_[at];
                  if (r.ok()) {
                    e.status = r->status;
                    e.response_body = r->body;
                    e.violations_header = r->headers.Get("sl-violations").value_or("");
                  } else {
                    e.error = r.status().message();
                  }
                  done(std::move(r));
                });
  }

  void RunAfter(std::chrono::milliseconds delay, std::function<void()> fn) override {
    inner_.RunAfter(delay, std::move(fn));
  }

  const std::vector<Exchange>& exchanges() const { return exchanges_; }

 private:
  HttpTransport& inner_;
  std::vector<Exchange> exchanges_;
};

// An absolute path to `name` on $PATH, or "" when there is none.
inline std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// A port that was free a moment ago (bound to 0, read back, released).
inline int FreePort() { return icewarden::testing::FreeLoopbackPort(); }

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// Single-quotes `s` for /bin/sh.
inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The released spec beside the source tree: <source>/../shared/reference/<kSpecName>.
inline std::string ReleasedSpecPath() {
  return (std::filesystem::path(icewarden::testing::SourceDir()) / ".." / "shared" / "reference" /
          kSpecName)
      .lexically_normal()
      .string();
}

// Prism log lines that report a violation or a request Prism refused: "Violation: ..." (without
// --errors), "✖  error     Request terminated with error: ...#VIOLATIONS" and warnings.
inline std::vector<std::string> ViolationLines(const std::string& log) {
  std::vector<std::string> lines;
  std::stringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("iolation") != std::string::npos || line.find("\u2716") != std::string::npos ||
        line.find("\u26a0") != std::string::npos ||
        line.find("prism/errors#") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

// A body Prism made up itself (application/problem+json, "type": ".../prism/errors#...").
inline bool IsPrismVerdict(const std::string& body) {
  return body.find("stoplight.io/prism/errors#") != std::string::npos;
}

// The released spec with the change of the header comment: the token endpoint may be called
// without an Authorization header. Empty on failure, with `error` set.
inline std::string DerivedSpec(const std::string& released, std::string* error) {
  std::string spec = ReadFile(released);
  const std::string anchor = "      operationId: getToken\n";
  const auto at = spec.find(anchor);
  if (at == std::string::npos || spec.find(anchor, at + 1) != std::string::npos) {
    *error =
        "expected exactly one '" + anchor.substr(0, anchor.size() - 1) + "' line in " + released;
    return "";
  }
  spec.insert(at + anchor.size(),
              "      security:\n"
              "        - {}\n"
              "        - OAuth2: [catalog]\n"
              "        - BearerAuth: []\n");
  return spec;
}

// One `prism proxy --errors` process: its port, its log and how much of the log came before
// the test's own traffic (the readiness probe's lines).
struct PrismProcess {
  int port = 0;
  std::string log;
  std::size_t log_offset = 0;
  std::unique_ptr<icewarden::testing::Subprocess> process;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  void Stop() {
    if (!process) return;
    process->Signal(SIGTERM);
    if (!process->Wait(std::chrono::seconds(5))) process->Signal(SIGKILL);
    process.reset();
  }
};

}  // namespace icewarden::conformance
