// Subprocess: start a program the way a user would, read what it prints, signal it.
// Used by end-to-end tests that run the real `icewarden` binary.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace icewarden::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv to completion (bounded by `timeout`, then SIGKILL) with extra environment.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

class Subprocess {
 public:
  Subprocess(const std::vector<std::string>& argv,
             const std::map<std::string, std::string>& env = {});
  ~Subprocess();  // SIGKILLs and reaps the child if still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // The next line of stdout without its newline, or nullopt on EOF or timeout.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout);
  void Signal(int sig);
  // Waits for exit; returns the exit code, -signal if killed, or nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool reaped_ = false;
};

}  // namespace icewarden::testing
