// tcp: opens a TCP connection to host:port within the deadline, then closes it. The
// connect itself goes through ProbeContext::tcp; MakeAsioTcpConnector is the real one.
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "health/probe_attempt.h"
#include "health/probe_kinds.h"

namespace icewarden {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

class TcpProbe final : public Probe {
 public:
  TcpProbe(Timers& timers, TcpConnector& connector, std::string host, std::uint16_t port)
      : kind_(kTcpProbe),
        timers_(timers),
        connector_(connector),
        host_(std::move(host)),
        port_(port) {}

  const std::string& kind() const override { return kind_; }

  void Check(std::chrono::milliseconds deadline, std::function<void(ProbeResult)> done) override {
    auto attempt = ProbeAttempt::Start(timers_, kind_, deadline, std::move(done));
    connector_.Connect(host_, port_, attempt->Remaining(), [attempt](Status s) {
      // Never `answered`: a completed handshake carries no word from the catalog (a load
      // balancer or a hung process accepts too), and a failure is refused, timed out or
      // unresolvable, all silence.
      if (s.ok()) return attempt->Pass();
      attempt->Fail(ProbeDetail(s, attempt->deadline(), ""));
    });
  }

 private:
  std::string kind_;
  Timers& timers_;
  TcpConnector& connector_;
  std::string host_;
  std::uint16_t port_;
};

// One connection attempt. The handlers hold it; whichever of the connect and the timer
// finishes first reports, and the other one finds `finished` set.
struct ConnectOp {
  explicit ConnectOp(asio::io_context& io) : resolver(io), socket(io), timer(io) {}
  tcp::resolver resolver;
  tcp::socket socket;
  asio::steady_timer timer;
  std::string target;  // "host:port"
  std::function<void(Status)> done;
  bool finished = false;

  void Finish(Status s) {
    if (finished) return;
    finished = true;
    timer.cancel();
    resolver.cancel();
    boost::system::error_code ignored;
    socket.close(ignored);
    auto d = std::move(done);
    d(std::move(s));
  }
};

class AsioTcpConnector final : public TcpConnector {
 public:
  explicit AsioTcpConnector(asio::io_context& io) : io_(io) {}

  void Connect(std::string host, std::uint16_t port, std::chrono::milliseconds deadline,
               std::function<void(Status)> done) override {
    auto op = std::make_shared<ConnectOp>(io_);
    op->target = host + ":" + std::to_string(port);
    op->done = std::move(done);
    op->timer.expires_after(deadline);
    op->timer.async_wait([op, deadline](boost::system::error_code ec) {
      if (ec) return;
      op->Finish(Status::Unavailable("connect " + op->target + ": " + DeadlineExceeded(deadline)));
    });
    op->resolver.async_resolve(
        host, std::to_string(port),
        [op, host](boost::system::error_code ec, tcp::resolver::results_type results) {
          if (op->finished) return;
          if (ec) return op->Finish(Status::Unavailable("resolve " + host + ": " + ec.message()));
          asio::async_connect(
              op->socket, results, [op](boost::system::error_code ec, const tcp::endpoint&) {
                if (op->finished) return;
                if (ec) {
                  return op->Finish(
                      Status::Unavailable("connect " + op->target + ": " + ec.message()));
                }
                op->Finish(Status::Ok());
              });
        });
  }

 private:
  asio::io_context& io_;
};

}  // namespace

Result<std::unique_ptr<Probe>> MakeTcpProbe(const ProbeSpec& spec, const ProbeContext& ctx) {
  if (spec.host.empty() || spec.port == 0) {
    return Status::InvalidArgument("tcp probe for region " + spec.region + " needs host and port");
  }
  if (!ctx.tcp) {
    return Status::InvalidArgument("tcp probe for region " + spec.region +
                                   ": the probe context has no TcpConnector");
  }
  return std::unique_ptr<Probe>(
      std::make_unique<TcpProbe>(ctx.timers, *ctx.tcp, spec.host, spec.port));
}

std::unique_ptr<TcpConnector> MakeAsioTcpConnector(boost::asio::io_context& io) {
  return std::make_unique<AsioTcpConnector>(io);
}

}  // namespace icewarden
