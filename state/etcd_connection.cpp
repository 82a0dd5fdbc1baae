#include "state/etcd_connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "state/etcd_client.h"

namespace icewarden {

struct EtcdTlsContext::Native {
  SSL_CTX* ctx = nullptr;
  std::string ca_file;
  bool has_cert = false;
  ~Native() { SSL_CTX_free(ctx); }
};

namespace {

using Steady = std::chrono::steady_clock;

int MillisLeft(Steady::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool WaitFor(int fd, short events, Steady::time_point deadline) {
  pollfd p{fd, events, 0};
  while (true) {
    const int n = ::poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

// OpenSSL's reason for the last failure on this thread ("certificate verify failed"), and the
// queue cleared.
std::string OpenSslReason(const char* fallback) {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  const char* reason = code == 0 ? nullptr : ERR_reason_error_string(code);
  return reason != nullptr ? reason : fallback;
}

// An alert the member sent about this client's certificate: its TLS layer refused us, so its
// HTTP server never read a request. With TLS 1.3 the refusal of a missing or untrusted client
// certificate arrives after our handshake is done, on the first read.
bool RefusedOurCertificate(unsigned long code) {
  if (ERR_GET_LIB(code) != ERR_LIB_SSL) return false;
  switch (ERR_GET_REASON(code)) {
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      return true;
    default:
      return false;
  }
}

std::string RefusalText(const std::string& authority, const std::string& reason, bool has_cert) {
  return "etcd " + authority + ": the member refused this client's TLS certificate (" + reason +
         "): " +
         (has_cert ? "its --trusted-ca-file must be the CA that signed state.etcd.tls.cert_file"
                   : "it runs with --client-cert-auth; set state.etcd.tls.cert_file and key_file");
}

// OpenSSL writes to the socket with write(2), which raises SIGPIPE on a connection the member
// has reset (a member that refused our certificate does that), and serve does not ignore
// SIGPIPE (Asio sends with MSG_NOSIGNAL). So SIGPIPE is held off on this thread for the call,
// and one that the call raised is taken back before it is let through again.
class HoldSigpipe {
 public:
  HoldSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    was_pending_ = Pending();
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~HoldSigpipe() {
    if (!was_pending_ && Pending()) {
      const timespec now{0, 0};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  HoldSigpipe(const HoldSigpipe&) = delete;
  HoldSigpipe& operator=(const HoldSigpipe&) = delete;

 private:
  static bool Pending() {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGPIPE) == 1;
  }
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

// A passphrase callback that refuses: an encrypted key cannot be read without a person.
int NoPassphrase(char*, int, int, void*) { return -1; }

}  // namespace

Result<EtcdEndpoint> ParseEtcdEndpoint(const std::string& url) {
  std::string_view rest = url;
  EtcdEndpoint e;
  if (rest.starts_with("https://")) {
    e.tls = true;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else {
    return Status::InvalidArgument("etcd endpoint " + url + ": want http://HOST:PORT or https://");
  }
  if (auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size())
    return Status::InvalidArgument("etcd endpoint " + url + ": want http(s)://HOST:PORT");
  e.host = std::string(rest.substr(0, colon));
  e.port = std::string(rest.substr(colon + 1));
  e.authority = std::string(rest);
  return e;
}

EtcdTlsContext::EtcdTlsContext(std::unique_ptr<Native> native) : native_(std::move(native)) {}
EtcdTlsContext::~EtcdTlsContext() = default;

Result<std::shared_ptr<EtcdTlsContext>> EtcdTlsContext::Make(const EtcdTlsOptions& options) {
  auto native = std::make_unique<Native>();
  native->ca_file = options.ca_file;
  ERR_clear_error();
  native->ctx = SSL_CTX_new(TLS_client_method());
  if (native->ctx == nullptr)
    return Status::Internal("etcd tls: " + OpenSslReason("cannot make an SSL context"));
  SSL_CTX* ctx = native->ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Without a CA nothing can be verified, and an unverified member could hand out any record.
  if (options.ca_file.empty())
    return Status::InvalidArgument(
        "etcd tls: https endpoints need a CA file (state.etcd.tls.ca_file)");
  // Only the configured CA, not the system's: see etcd_connection.h.
  if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) != 1)
    return Status::InvalidArgument("etcd tls: cannot load CA file " + options.ca_file + ": " +
                                   OpenSslReason("unreadable"));
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (options.cert_file.empty() != options.key_pem.empty())
    return Status::InvalidArgument("etcd tls: a client certificate and its key go together");
  if (!options.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) != 1)
      return Status::InvalidArgument("etcd tls: cannot load client certificate " +
                                     options.cert_file + ": " + OpenSslReason("unreadable"));
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(options.key_pem.data(), static_cast<int>(options.key_pem.size())),
        &BIO_free);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
        PEM_read_bio_PrivateKey(bio.get(), nullptr, &NoPassphrase, nullptr), &EVP_PKEY_free);
    if (!key || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1)
      return Status::InvalidArgument("etcd tls: the client key does not fit " + options.cert_file +
                                     ": " + OpenSslReason("unreadable key"));
    native->has_cert = true;
  }
  return std::shared_ptr<EtcdTlsContext>(new EtcdTlsContext(std::move(native)));
}

struct EtcdConnection::State {
  int fd = -1;
  SSL* ssl = nullptr;
  bool has_cert = false;
  std::string authority;

  ~State() { Close(); }
  void Close() {
    // No close_notify: the connection is dropped either way, and a polite shutdown could
    // block on a member that went quiet.
    if (ssl != nullptr) SSL_free(ssl);
    ssl = nullptr;
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // Runs one OpenSSL call to completion, waiting on the socket as OpenSSL asks. Returns its
  // result (> 0 done); on failure *error is SSL_get_error's answer, or -1 for the deadline.
  template <class Call>
  int Drive(Call call, Deadline deadline, int* error) {
    HoldSigpipe hold;
    while (true) {
      ERR_clear_error();
      const int rc = call();
      if (rc > 0) return rc;
      const int e = SSL_get_error(ssl, rc);
      const bool read = e == SSL_ERROR_WANT_READ;
      if (!read && e != SSL_ERROR_WANT_WRITE) {
        *error = e;
        return rc;
      }
      if (!WaitFor(fd, read ? POLLIN : POLLOUT, deadline)) {
        *error = -1;
        return 0;
      }
    }
  }

  // The member's refusal of our certificate, when an alert saying so is waiting (looked for
  // for up to 200 ms); OK when there is none.
  Status Refusal(Deadline deadline) {
    char c;
    int error = 0;
    const Deadline soon = std::min(deadline, Steady::now() + std::chrono::milliseconds(200));
    if (Drive([&] { return SSL_read(ssl, &c, 1); }, soon, &error) > 0) return Status::Ok();
    const unsigned long code = ERR_peek_last_error();
    if (!RefusedOurCertificate(code)) {
      ERR_clear_error();
      return Status::Ok();
    }
    return Status::PermissionDenied(RefusalText(authority, OpenSslReason("refused"), has_cert));
  }

  Status Handshake(const EtcdEndpoint& e, const EtcdTlsContext& tls, Deadline deadline) {
    const auto& native = tls.native();
    has_cert = native.has_cert;
    ssl = SSL_new(native.ctx);
    if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1)
      return Status::Internal("etcd " + e.authority + ": " + OpenSslReason("SSL_new failed"));
    // The name the certificate must carry: an IP SAN for an address, else a DNS SAN (and SNI,
    // which RFC 6066 does not allow for addresses).
    std::string host = e.host;
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    in6_addr any;
    const bool address = ::inet_pton(AF_INET, host.c_str(), &any) == 1 ||
                         ::inet_pton(AF_INET6, host.c_str(), &any) == 1;
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    bool named = false;
    if (address) {
      named = X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1;
    } else {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      named =
          SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 && SSL_set1_host(ssl, host.c_str()) == 1;
    }
    if (!named)
      return Status::InvalidArgument("etcd " + e.authority + ": cannot verify the name " + host);
    int error = 0;
    if (Drive([&] { return SSL_connect(ssl); }, deadline, &error) > 0) return Status::Ok();
    if (error == -1)
      return Status::Unavailable("etcd " + e.authority + ": TLS handshake timed out");
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      ERR_clear_error();
      // The member answered, with a certificate we cannot trust: a config error (or a
      // rotation gone wrong), never silence, and no retry will change it.
      return Status::Unauthenticated("etcd " + e.authority + ": TLS: the member's certificate " +
                                     "does not verify against " + native.ca_file + " for " + host +
                                     ": " + X509_verify_cert_error_string(verify));
    }
    const unsigned long code = ERR_peek_last_error();
    if (RefusedOurCertificate(code))
      return Status::PermissionDenied(RefusalText(e.authority, OpenSslReason("refused"), has_cert));
    if (error == SSL_ERROR_SYSCALL && code == 0)
      return Status::Unavailable("etcd " + e.authority +
                                 ": TLS handshake: the connection closed (is it an https port?)");
    return Status::Unavailable("etcd " + e.authority + ": TLS handshake: " +
                               OpenSslReason("failed (is it an https port?)"));
  }
};

EtcdConnection::EtcdConnection() : state_(std::make_unique<State>()) {}
EtcdConnection::~EtcdConnection() = default;

bool EtcdConnection::open() const { return state_->fd >= 0; }
void EtcdConnection::Close() { state_->Close(); }

bool EtcdConnection::StillOpen() {
  State& s = *state_;
  if (s.ssl == nullptr) {
    char c;
    const ssize_t n = ::recv(s.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  // Bytes waiting may be a TLS 1.3 session ticket; SSL_peek takes those in and says whether
  // what is left is nothing (alive), a close_notify or EOF (closed), or data nobody asked for.
  HoldSigpipe hold;  // a ticket may make OpenSSL answer (a KeyUpdate), on a reset connection
  ERR_clear_error();
  char c;
  const int rc = SSL_peek(s.ssl, &c, 1);
  const int e = rc > 0 ? SSL_ERROR_NONE : SSL_get_error(s.ssl, rc);
  ERR_clear_error();
  return e == SSL_ERROR_WANT_READ;
}

Status EtcdConnection::Open(const EtcdEndpoint& e, const EtcdTlsContext* tls, Deadline deadline) {
  State& st = *state_;
  st.Close();
  st.authority = e.authority;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(e.host.c_str(), e.port.c_str(), &hints, &found); rc != 0)
    return Status::Unavailable("etcd " + e.authority + ": resolve: " + gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int s = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) continue;
    int rc = ::connect(s, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      if (WaitFor(s, POLLOUT, deadline)) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0) {
      int one = 1;
      ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      st.fd = s;
      break;
    }
    why = std::strerror(errno);
    ::close(s);
  }
  ::freeaddrinfo(found);
  if (st.fd < 0) return Status::Unavailable("etcd " + e.authority + ": connect: " + why);
  if (!e.tls) return Status::Ok();
  if (tls == nullptr) return Status::Internal("etcd " + e.authority + ": https without a context");
  Status shook = st.Handshake(e, *tls, deadline);
  if (!shook.ok()) st.Close();
  return shook;
}

Status EtcdConnection::Write(std::string_view bytes, Deadline deadline, bool& sent) {
  State& s = *state_;
  if (s.ssl != nullptr) {
    // OpenSSL writes the whole buffer or fails (no partial writes unless asked for).
    sent = true;
    int error = 0;
    const int n =
        s.Drive([&] { return SSL_write(s.ssl, bytes.data(), static_cast<int>(bytes.size())); },
                deadline, &error);
    if (n > 0) return Status::Ok();
    if (error == -1) return Status::Unavailable("etcd " + s.authority + ": write timed out");
    const std::string why = OpenSslReason("failed");
    // A member that refused our certificate sent an alert, then reset the connection: the
    // write fails, and the alert is still there to read. Its HTTP server read nothing.
    if (Status refusal = s.Refusal(deadline); !refusal.ok()) {
      sent = false;
      return refusal;
    }
    return Status::Unavailable("etcd " + s.authority + ": TLS write: " + why);
  }
  for (std::size_t done = 0; done < bytes.size();) {
    ssize_t n = ::send(s.fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      sent = true;
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(s.fd, POLLOUT, deadline))
        return Status::Unavailable("etcd " + s.authority + ": write timed out");
    } else {
      return Status::Unavailable("etcd " + s.authority + ": write: " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

Result<std::size_t> EtcdConnection::ReadSome(char* buffer, std::size_t size, Deadline deadline,
                                             bool& refused) {
  State& s = *state_;
  if (s.ssl != nullptr) {
    int error = 0;
    const int n =
        s.Drive([&] { return SSL_read(s.ssl, buffer, static_cast<int>(size)); }, deadline, &error);
    if (n > 0) return static_cast<std::size_t>(n);
    if (error == -1) return Status::Unavailable("etcd " + s.authority + ": read timed out");
    if (error == SSL_ERROR_ZERO_RETURN) return std::size_t{0};
    const unsigned long code = ERR_peek_last_error();
    if (error == SSL_ERROR_SYSCALL && code == 0) return std::size_t{0};  // EOF, no close_notify
    if (RefusedOurCertificate(code)) {
      refused = true;
      return Status::PermissionDenied(
          RefusalText(s.authority, OpenSslReason("refused"), s.has_cert));
    }
    return Status::Unavailable("etcd " + s.authority + ": TLS read: " + OpenSslReason("failed"));
  }
  while (true) {
    if (!WaitFor(s.fd, POLLIN, deadline))
      return Status::Unavailable("etcd " + s.authority + ": read timed out");
    ssize_t n = ::recv(s.fd, buffer, size, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0)
      return Status::Unavailable("etcd " + s.authority + ": read: " + std::strerror(errno));
    return static_cast<std::size_t>(n);
  }
}

}  // namespace icewarden
