// Probe cost: CPU seconds per 1,000 catalog probes, icewarden's probe path next to
// prometheus-blackbox-exporter probing the same endpoints at the same rate, in one run.
//
//   lab        the icewarden-lab executable, a process of its own (its CPU is not counted).
//   icewarden  this program re-executed as a "probe worker": the real ProbeScheduler,
//              HealthTracker, CatalogClient and Beast transport (bench_probe_pipeline.h), a
//              catalog_config probe per lab region every interval. Its whole process is
//              counted.
//   blackbox   /usr/bin/prometheus-blackbox-exporter with an http module (GET, 200 only) on
//              127.0.0.1:<free port>, driven by this program with
//              /probe?module=http_2xx&target=<region>/v1/config?warehouse=lab per region every
//              interval, over one keep-alive connection per region, as Prometheus scrapes it.
//              Only the exporter's process is counted, which includes serving those scrapes
//              (its normal operating mode); issuing them is this program's CPU and is not.
// The two sides run one after the other (--order), each for --duration-s, so they do not
// compete for the machine's cores. CPU is utime + stime from /proc/PID/stat between the
// side's start and its end; a probe is counted when its answer arrived (pass or fail).
//
//   probe_cost_bench [--duration-s 30] [--interval-ms 20] [--timeout-ms 1000]
//                    [--order icewarden-first|blackbox-first] [--exporter PATH] [--lab PATH]
#include <utility>  // before Asio (Boost 1.74 + C++20)

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "tests/bench/bench_probe_pipeline.h"

#ifndef ICEWARDEN_LAB_BINARY
#define ICEWARDEN_LAB_BINARY "icewarden-lab"
#endif

namespace {

using namespace icewarden;
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

// ---- processes ----------------------------------------------------------------------------

// utime + stime of a live process, in seconds.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name may hold spaces and parentheses; the fields start after the last ')'.
  auto close_paren = stat.rfind(')');
  std::vector<std::string> f;
  if (close_paren != std::string::npos) {
    std::istringstream fields(stat.substr(close_paren + 1));
    for (std::string s; fields >> s;) f.push_back(s);
  }
  if (f.size() < 13) {
    std::fprintf(stderr, "probe_cost_bench: cannot read /proc/%d/stat\n", static_cast<int>(pid));
    std::exit(1);
  }
  // f[0] is field 3 (state); utime and stime are fields 14 and 15.
  const double ticks = std::stod(f[11]) + std::stod(f[12]);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A child with its stdin and stdout on pipes (stdout may go to a file instead).
struct Child {
  pid_t pid = -1;
  FILE* in = nullptr;   // the child's stdin
  FILE* out = nullptr;  // the child's stdout; null when it went to a file

  // A line without its newline; false at end of file.
  bool ReadLine(std::string* line) {
    char buf[4096];
    if (!out || !std::fgets(buf, sizeof buf, out)) return false;
    *line = buf;
    while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
    return true;
  }
  void Send(const std::string& line) {
    std::fputs((line + "\n").c_str(), in);
    std::fflush(in);
  }
  // SIGTERM (unless it already exited after closing stdin), then reap it.
  void Finish(bool terminate) {
    if (pid <= 0) return;
    if (in) std::fclose(in);
    in = nullptr;
    if (terminate) kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    if (out) std::fclose(out);
    out = nullptr;
    pid = -1;
  }
};

// Starts argv[0] with `args`. With an empty `log`, stdout is a pipe; otherwise stdout and
// stderr go to the file `log`.
Child Spawn(const std::vector<std::string>& args, const std::string& log = "") {
  int to_child[2], from_child[2];
  // Close-on-exec, so that no other child inherits this one's pipe ends (dup2 clears the flag).
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) std::exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(to_child[0], STDIN_FILENO);
    if (log.empty()) {
      dup2(from_child[1], STDOUT_FILENO);
    } else {
      FILE* f = std::fopen(log.c_str(), "w");
      if (f) {
        dup2(fileno(f), STDOUT_FILENO);
        dup2(fileno(f), STDERR_FILENO);
      }
    }
    close(to_child[0]);
    close(to_child[1]);
    close(from_child[0]);
    close(from_child[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::fprintf(stderr, "probe_cost_bench: cannot run %s\n", argv[0]);
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  Child child;
  child.pid = pid;
  child.in = fdopen(to_child[1], "w");
  if (log.empty()) {
    child.out = fdopen(from_child[0], "r");
  } else {
    close(from_child[0]);
  }
  return child;
}

// A loopback port nobody listens on right now (the exporter binds it a moment later).
int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::string PercentEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// ---- the probe worker (the icewarden side, in its own process) -----------------------------

// Protocol on stdin/stdout: prints "worker: ready", starts probing on "go", stops on "stop",
// prints "worker: done probes=N ok=K", exits at end of input.
int RunProbeWorker(const std::vector<std::string>& regions, int interval_ms, int timeout_ms,
                   double jitter) {
  std::vector<bench::PipelineRegion> pipeline_regions;
  for (const auto& r : regions) {
    auto eq = r.find('=');
    if (eq == std::string::npos) return 2;
    pipeline_regions.push_back({r.substr(0, eq), r.substr(eq + 1)});
  }
  bench::PipelineOptions options;
  options.schedule.interval = milliseconds(interval_ms);
  options.schedule.timeout = milliseconds(timeout_ms);
  options.schedule.jitter = jitter;
  // Both counters are touched on the loop thread only, and read after Stop() joined it.
  long probes = 0, passed = 0;
  auto pipeline = bench::BenchProbePipeline::Make(
      pipeline_regions, options,
      [&](const ProbeRound& round) {
        for (const auto& p : round.probes) {
          probes += 1;
          passed += p.ok ? 1 : 0;
        }
      },
      nullptr);
  if (!pipeline.ok()) {
    std::fprintf(stderr, "probe worker: %s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  std::printf("worker: ready\n");
  std::fflush(stdout);
  std::string line;
  if (!std::getline(std::cin, line) || line != "go") return 1;
  (*pipeline)->Start();
  while (std::getline(std::cin, line) && line != "stop") {
  }
  (*pipeline)->Stop();
  std::printf("worker: done probes=%ld ok=%ld\n", probes, passed);
  std::fflush(stdout);
  while (std::getline(std::cin, line)) {
  }
  return 0;
}

// ---- the two sides ------------------------------------------------------------------------

struct SideResult {
  std::string name;
  long probes = 0;
  long passed = 0;
  long scrape_errors = 0;  // blackbox only: /probe requests that got no answer
  double seconds = 0;
  double cpu = 0;
  double lab_cpu = 0;
};

struct RunPlan {
  std::map<std::string, std::string> regions;  // name -> url
  int interval_ms = 20;
  int timeout_ms = 1000;
  double jitter = 0.1;
  int duration_s = 30;
  pid_t lab_pid = -1;
};

SideResult RunIcewardenSide(const RunPlan& plan) {
  SideResult r;
  r.name = "icewarden ProbeScheduler";
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) std::exit(1);
  self[n] = '\0';
  std::vector<std::string> args{self,
                                "--probe-worker",
                                "--interval-ms",
                                std::to_string(plan.interval_ms),
                                "--timeout-ms",
                                std::to_string(plan.timeout_ms),
                                "--jitter",
                                std::to_string(plan.jitter)};
  for (const auto& [name, url] : plan.regions) {
    args.push_back("--worker-region");
    args.push_back(name + "=" + url);
  }
  Child worker = Spawn(args);
  std::string line;
  if (!worker.ReadLine(&line) || line != "worker: ready") {
    std::fprintf(stderr, "probe_cost_bench: probe worker did not start: %s\n", line.c_str());
    std::exit(1);
  }
  const double cpu_before = ProcessCpuSeconds(worker.pid);
  const double lab_before = ProcessCpuSeconds(plan.lab_pid);
  const Steady::time_point start = Steady::now();
  worker.Send("go");
  std::this_thread::sleep_for(std::chrono::seconds(plan.duration_s));
  worker.Send("stop");
  if (!worker.ReadLine(&line) ||
      std::sscanf(line.c_str(), "worker: done probes=%ld ok=%ld", &r.probes, &r.passed) != 2) {
    std::fprintf(stderr, "probe_cost_bench: probe worker: %s\n", line.c_str());
    std::exit(1);
  }
  r.seconds = std::chrono::duration<double>(Steady::now() - start).count();
  r.cpu = ProcessCpuSeconds(worker.pid) - cpu_before;
  r.lab_cpu = ProcessCpuSeconds(plan.lab_pid) - lab_before;
  worker.Finish(/*terminate=*/false);
  return r;
}

SideResult RunBlackboxSide(const RunPlan& plan, const std::string& exporter,
                           const std::string& dir) {
  SideResult r;
  r.name = "prometheus-blackbox-exporter";
  const std::string config = dir + "/blackbox.yml";
  std::ofstream(config) << "modules:\n"
                        << "  http_2xx:\n"
                        << "    prober: http\n"
                        << "    timeout: " << plan.timeout_ms << "ms\n"
                        << "    http:\n"
                        << "      method: GET\n"
                        << "      valid_status_codes: [200]\n"
                        << "      preferred_ip_protocol: ip4\n";
  const int port = FreeLoopbackPort();
  Child child = Spawn({exporter, "--config.file=" + config,
                       "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                      dir + "/blackbox.log");
  bool ready = false;
  for (int i = 0; i < 100 && !ready; ++i) {
    httplib::Client probe("127.0.0.1", port);
    auto res = probe.Get("/-/healthy");
    ready = res && res->status == 200;
    if (!ready) std::this_thread::sleep_for(milliseconds(100));
  }
  if (!ready) {
    std::fprintf(stderr, "probe_cost_bench: %s did not become healthy on port %d; see %s\n",
                 exporter.c_str(), port, (dir + "/blackbox.log").c_str());
    child.Finish(/*terminate=*/true);
    std::exit(1);
  }

  std::atomic<long> probes{0}, passed{0}, errors{0};
  const double cpu_before = ProcessCpuSeconds(child.pid);
  const double lab_before = ProcessCpuSeconds(plan.lab_pid);
  const Steady::time_point start = Steady::now();
  const Steady::time_point end = start + std::chrono::seconds(plan.duration_s);
  std::vector<std::thread> drivers;
  for (const auto& [name, url] : plan.regions) {
    const std::string path =
        "/probe?module=http_2xx&target=" + PercentEncode(url + "/v1/config?warehouse=lab");
    drivers.emplace_back([&, path, port] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_read_timeout(std::chrono::seconds(10));
      const httplib::Headers headers{{"X-Prometheus-Scrape-Timeout-Seconds", "10"}};
      for (Steady::time_point round = Steady::now(); round < end;) {
        auto res = client.Get(path, headers);
        if (res && res->status == 200 && res->body.find("\nprobe_success ") != std::string::npos) {
          probes += 1;
          if (res->body.find("\nprobe_success 1") != std::string::npos) passed += 1;
        } else {
          errors += 1;
        }
        // As the ProbeScheduler: the next round at the interval, never overlapping.
        round = std::max(round + milliseconds(plan.interval_ms), Steady::now());
        std::this_thread::sleep_until(round);
      }
    });
  }
  for (auto& t : drivers) t.join();
  r.seconds = std::chrono::duration<double>(Steady::now() - start).count();
  r.cpu = ProcessCpuSeconds(child.pid) - cpu_before;
  r.lab_cpu = ProcessCpuSeconds(plan.lab_pid) - lab_before;
  r.probes = probes;
  r.passed = passed;
  r.scrape_errors = errors;
  child.Finish(/*terminate=*/true);
  return r;
}

double PerThousand(double cpu, long probes) {
  return probes > 0 ? cpu * 1000.0 / static_cast<double>(probes) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"probe_cost_bench: CPU per 1,000 catalog probes, icewarden vs blackbox_exporter"};
  RunPlan plan;
  std::string order = "icewarden-first";
  std::string exporter = "/usr/bin/prometheus-blackbox-exporter";
  std::string lab_binary = ICEWARDEN_LAB_BINARY;
  bool worker = false;
  std::vector<std::string> worker_regions;
  app.add_option("--duration-s", plan.duration_s, "seconds per side")->check(CLI::PositiveNumber);
  app.add_option("--interval-ms", plan.interval_ms, "each region probed every N ms")
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout-ms", plan.timeout_ms, "probe deadline on both sides")
      ->check(CLI::PositiveNumber);
  app.add_option("--jitter", plan.jitter, "icewarden's interval jitter (mean rate unchanged)")
      ->check(CLI::Range(0.0, 0.5));
  app.add_option("--order", order, "which side runs first")
      ->check(CLI::IsMember({"icewarden-first", "blackbox-first"}));
  app.add_option("--exporter", exporter, "the blackbox exporter binary");
  app.add_option("--lab", lab_binary, "the icewarden-lab binary");
  app.add_flag("--probe-worker", worker, "internal: run as the icewarden probe worker");
  app.add_option("--worker-region", worker_regions, "internal: NAME=URL for the probe worker");
  CLI11_PARSE(app, argc, argv);
  if (worker) return RunProbeWorker(worker_regions, plan.interval_ms, plan.timeout_ms, plan.jitter);

  signal(SIGPIPE, SIG_IGN);
  const std::string load_before = bench::LoadAverage();
  char dir_template[] = "/tmp/icewarden-probecost-XXXXXX";
  const std::string dir = mkdtemp(dir_template);

  Child lab =
      Spawn({lab_binary, "--data", dir + "/lab", "--admin", "127.0.0.1:0", "--region",
             "us-east-1=127.0.0.1:0", "--region", "eu-central-1=127.0.0.1:0", "--no-workload"});
  for (std::string line; lab.ReadLine(&line) && line != "lab: ready";) {
    char name[128], url[256];
    if (std::sscanf(line.c_str(), "lab: region %127s %255s", name, url) == 2)
      plan.regions[name] = url;
  }
  if (plan.regions.size() != 2) {
    std::fprintf(stderr, "probe_cost_bench: %s did not start\n", lab_binary.c_str());
    lab.Finish(/*terminate=*/true);
    return 1;
  }
  plan.lab_pid = lab.pid;

  std::vector<SideResult> sides;
  if (order == "icewarden-first") {
    sides.push_back(RunIcewardenSide(plan));
    sides.push_back(RunBlackboxSide(plan, exporter, dir));
  } else {
    sides.push_back(RunBlackboxSide(plan, exporter, dir));
    sides.push_back(RunIcewardenSide(plan));
  }
  lab.Finish(/*terminate=*/true);
  std::filesystem::remove_all(dir);

  const double rate = 1000.0 * static_cast<double>(plan.regions.size()) / plan.interval_ms;
  std::printf(
      "probe_cost_bench: %zu lab regions, each probed every %d ms (%.0f probes/s), "
      "timeout %d ms, %d s per side, sides run one after the other (%s)\n",
      plan.regions.size(), plan.interval_ms, rate, plan.timeout_ms, plan.duration_s, order.c_str());
  std::printf("load average before: %s  after: %s\n\n", load_before.c_str(),
              bench::LoadAverage().c_str());
  std::printf("%-30s %7s %7s %7s %9s %8s %10s %9s\n", "side", "probes", "passed", "probes/s",
              "cpu_s", "cpu/1000", "lab_cpu_s", "errors");
  for (const auto& s : sides)
    std::printf("%-30s %7ld %7ld %7.1f %9.2f %8.3f %10.2f %9ld\n", s.name.c_str(), s.probes,
                s.passed, static_cast<double>(s.probes) / s.seconds, s.cpu,
                PerThousand(s.cpu, s.probes), s.lab_cpu, s.scrape_errors);
  const SideResult& ice = sides[0].name.rfind("icewarden", 0) == 0 ? sides[0] : sides[1];
  const SideResult& bb = &ice == &sides[0] ? sides[1] : sides[0];
  const double ratio = PerThousand(ice.cpu, ice.probes) / PerThousand(bb.cpu, bb.probes);
  std::printf("\nratio icewarden/blackbox (cpu per 1000 probes) = %.3f  goal <= 0.5: %s\n", ratio,
              ratio <= 0.5 ? "PASS" : "FAIL");
  std::printf(
      "cpu_s is utime+stime of the prober's process only (clock tick %.0f ms). The "
      "exporter's figure includes serving the /probe scrape over keep-alive HTTP, its "
      "normal operating mode; this program's CPU for issuing scrapes is not counted. "
      "lab_cpu_s (not counted) is the lab serving each side's probes.\n",
      1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK)));
  return ratio <= 0.5 ? 0 : 3;
}
