// Kills a process in the middle of SQLite StateStore ownership batches (SIGKILL: no
// destructors, no flush) and checks what the StateStore contract promises survives:
// an intact database, batches applied entirely or not at all, every batch the process was
// told had committed still present, and exactly one audit event per applied batch.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "state/sqlite_store.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/test_paths.h"
#include "tests/helpers/store_crash_layout.h"

namespace icewarden::testing {
namespace {

// The writer process and the read end of its stdout. Killed on destruction so that a
// failed assertion never leaves it running.
class WriterProcess {
 public:
  explicit WriterProcess(const std::string& db_path) {
    int fds[2];
    if (pipe(fds) != 0) return;
    std::string binary = HelperBinary("store_crash_writer");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      execl(binary.c_str(), binary.c_str(), db_path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
  }
  ~WriterProcess() {
    Kill();
    if (out_ >= 0) close(out_);
  }
  WriterProcess(const WriterProcess&) = delete;
  WriterProcess& operator=(const WriterProcess&) = delete;

  bool started() const { return pid_ > 0 && out_ >= 0; }

  // Reads what the writer printed, waiting at most `timeout` for more. Returns false at EOF.
  bool ReadSome(std::chrono::milliseconds timeout) {
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return true;
    char buf[4096];
    ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) return false;
    pending_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  // Complete lines read so far, removed from the buffer.
  std::vector<std::string> TakeLines() {
    std::vector<std::string> lines;
    std::size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
      lines.push_back(pending_.substr(0, nl));
      pending_.erase(0, nl + 1);
    }
    return lines;
  }

  // SIGKILL and reap; returns the wait status.
  int Kill() {
    if (pid_ <= 0) return 0;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string pending_;
};

std::string IntegrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  std::string result = "could not open";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return result;
}

// Checks the store after a kill against the epochs the writer last reported per group.
// Afterwards `reported` holds the epochs found: the next writer starts from what the store
// has, including a batch committed but not reported before the kill.
void VerifyAfterCrash(const std::string& path, std::vector<Epoch>& reported) {
  ASSERT_EQ(IntegrityCheck(path), "ok");
  auto clock = std::make_shared<FakeClock>();
  Result<std::unique_ptr<StateStore>> opened = OpenSqliteStore({.path = path}, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  StateStore& store = **opened;

  for (int g = 0; g < kCrashGroups; ++g) {
    SCOPED_TRACE("group " + CrashGroupName(g));
    OwnershipQuery q;
    q.limit = 0;
    q.after = TableIdent{{"crash", CrashGroupName(g)}, ""};  // the group's first table
    Result<std::vector<Ownership>> rows = store.ListOwnership(q);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<Ownership> group;
    for (const Ownership& o : *rows) {
      if (o.table.namespace_levels.at(1) != CrashGroupName(g)) break;
      group.push_back(o);
    }
    // All or nothing: a group never written has no rows; otherwise every table is there,
    // at one epoch, with the owner that epoch implies.
    Epoch epoch = group.empty() ? 0 : group.front().epoch;
    if (epoch != 0) {
      ASSERT_EQ(group.size(), static_cast<std::size_t>(kCrashTablesPerGroup));
    }
    for (const Ownership& o : group) {
      ASSERT_EQ(o.epoch, epoch) << o.table.ToString() << ": a batch was partly applied";
      ASSERT_EQ(o.owner, CrashOwnerAtEpoch(epoch)) << o.table.ToString();
    }
    // Durability: what the writer was told had committed is there (a batch committed but
    // not yet printed when the kill came may add one more).
    EXPECT_GE(epoch, reported[g]) << "a batch reported committed was lost";
    EXPECT_LE(epoch, reported[g] + 1) << "more batches applied than the writer ran";
    reported[g] = epoch;

    // One audit event per applied batch, each naming the epoch it produced.
    AuditQuery aq;
    aq.limit = 0;
    aq.target = CrashGroupTarget(g);
    Result<std::vector<AuditEvent>> events = store.ListAudit(aq);
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    ASSERT_EQ(events->size(), static_cast<std::size_t>(epoch));
    for (std::size_t i = 0; i < events->size(); ++i) {
      EXPECT_EQ((*events)[i].detail_json, "{\"epoch\":" + std::to_string(i + 1) + "}");
    }
  }
}

TEST(StoreCrashTest, KilledWriterLeavesOnlyWholeDurableBatches) {
  const std::string dir = MakeTempDir("store-crash");
  const std::string path = dir + "/state.db";
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<Epoch> reported(kCrashGroups, 0);
  constexpr int kRounds = 5;
  int committed_total = 0;

  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    WriterProcess writer(path);
    ASSERT_TRUE(writer.started());
    int committed_this_round = 0;
    auto absorb = [&](const std::vector<std::string>& lines) {
      for (const std::string& line : lines) {
        std::int64_t n = 0, epoch = 0;
        int group = 0;
        ASSERT_EQ(std::sscanf(line.c_str(), "batch %" SCNd64 " committed group %d epoch %" SCNd64,
                              &n, &group, &epoch),
                  3)
            << "unexpected writer output: " << line;
        ASSERT_TRUE(group >= 0 && group < kCrashGroups);
        reported[group] = std::max(reported[group], epoch);
        ++committed_this_round;
      }
    };

    // Let it commit a few batches, then kill it at a random point of a later one.
    const int wait_for = 2 + static_cast<int>(rng() % 5);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (committed_this_round < wait_for) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the writer stopped committing";
      ASSERT_TRUE(writer.ReadSome(std::chrono::milliseconds(100))) << "the writer exited";
      absorb(writer.TakeLines());
    }
    const auto delay = std::chrono::microseconds(rng() % 30'000);
    std::this_thread::sleep_for(delay);
    int status = writer.Kill();
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the writer ended on its own (status " << status << ") instead of being killed";
    while (writer.ReadSome(std::chrono::milliseconds(1000))) {
    }
    absorb(writer.TakeLines());
    committed_total += committed_this_round;
    std::printf("round %d: killed %lld us after batch %d was reported; %d reported in all\n", round,
                static_cast<long long>(delay.count()), wait_for, committed_this_round);

    VerifyAfterCrash(path, reported);
    if (HasFatalFailure() || HasNonfatalFailure()) break;
  }
  EXPECT_GE(committed_total, 2 * kRounds);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace icewarden::testing
