#include "health/catalog_client.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "health/catalog_json.h"
#include "health/idempotency_in_progress.h"

namespace icewarden {
namespace {

constexpr const char* kListNamespaces = "GET /v1/{prefix}/namespaces";
constexpr const char* kListTables = "GET /v1/{prefix}/namespaces/{namespace}/tables";
constexpr const char* kLoadTable = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}";
constexpr const char* kUpdateTable = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}";

// The raw text of a url-encoded separator ("%2E" -> "."), or nullopt when it is not one that
// can go into a path as given: only unreserved characters and %XX escapes.
std::optional<std::string> DecodedSeparator(std::string_view encoded) {
  // A separator is a character or two; anything long is not one (and would go in every path).
  if (encoded.empty() || encoded.size() > 12) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const unsigned char c = encoded[i];
    if (c == '%') {
      if (i + 2 >= encoded.size() || !std::isxdigit(static_cast<unsigned char>(encoded[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(encoded[i + 2])))
        return std::nullopt;
      out.push_back(
          static_cast<char>(std::stoi(std::string(encoded.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// Namespace levels, each percent-encoded, joined by the separator the catalog advertises
// (`namespace-separator` in its config, url-encoded as the spec says), as the Java reference
// client joins them; "%1F" (the unit separator) when it advertises none. The spec obliges
// servers to accept %1F too, so %1F is also used when the advertised separator is malformed
// or occurs inside a level (joining with it would split that level in two).
std::string EncodeNamespace(const Namespace& ns, const CatalogConfig* config = nullptr) {
  std::string separator = "%1F";
  if (config != nullptr) {
    if (auto it = config->properties.find("namespace-separator"); it != config->properties.end()) {
      auto raw = DecodedSeparator(it->second);
      const bool splits = raw && std::any_of(ns.begin(), ns.end(), [&](const std::string& level) {
                            return level.find(*raw) != std::string::npos;
                          });
      if (raw && !splits) separator = it->second;
    }
  }
  std::string joined;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (i) joined += separator;
    joined += PercentEncode(ns[i]);
  }
  return joined;
}

std::string NamespaceForPeople(const Namespace& ns) {
  std::string out;
  for (size_t i = 0; i < ns.size(); ++i) out += (i ? "." : "") + ns[i];
  return out;
}

// At most 200 printable characters of a body that is not an IcebergErrorResponse.
std::string Snippet(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 200))
    out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : ' ');
  return out;
}

// "load table sales.orders: HTTP 404 NoSuchTableException: Table does not exist: ..."
Status StatusForCode(const std::string& what, const HttpResponse& r) {
  std::string detail;
  if (auto e = ParseIcebergError(r.body)) {
    detail = (e->type.empty() ? "" : e->type + ": ") + e->message;
  } else if (auto oauth = ParseOAuthError(r.body)) {
    detail = *oauth;  // an identity provider's "invalid_client: ..."
  } else {
    detail = Snippet(r.body);
  }
  std::string msg =
      what + ": HTTP " + std::to_string(r.status) + (detail.empty() ? "" : " " + detail);
  const int s = r.status;
  if (s == 401 || s == 419) return Status::Unauthenticated(msg);
  if (s == 403) return Status::PermissionDenied(msg);
  if (s == 404) return Status::NotFound(msg);
  if (s == 409) return Status::Conflict(msg);
  if (s == 503) {
    auto after = r.headers.Get("Retry-After");
    return Status::Unavailable(msg + (after ? " (Retry-After: " + *after + ")" : ""));
  }
  if (s >= 400 && s < 500) return Status::InvalidArgument(msg);
  return Status::Unavailable(msg);
}

// Every HTTP status is an answer from the catalog (DESIGN.md rule 7).
Status StatusFromHttp(const std::string& what, const HttpResponse& r) {
  return StatusForCode(what, r).WithReply(PeerReply::kAnswered);
}

Status Prefixed(const std::string& what, const Status& s) {
  return s.WithMessage(what + ": " + s.message());
}

// The base of every request after the config: the resolved `uri` without its trailing '/'
// (Nessie's ends in one). Anything but an absolute http(s) URL with a host cannot be followed.
Result<std::string> DataBase(std::string uri) {
  while (!uri.empty() && uri.back() == '/') uri.pop_back();
  const auto scheme = uri.find("://");
  const std::string_view kind =
      scheme == std::string::npos ? std::string_view() : std::string_view(uri).substr(0, scheme);
  const bool host = scheme != std::string::npos && uri.size() > scheme + 3 &&
                    uri[scheme + 3] != '/' && uri[scheme + 3] != ':';
  if ((kind != "http" && kind != "https") || !host ||
      uri.find_first_of(" \t\r\n?#") != std::string::npos) {
    return Status::Unavailable("catalog returned a malformed CatalogConfig: \"uri\" " +
                               Snippet(uri) + " is not an absolute http(s) URL")
        .WithReply(PeerReply::kUnparsed);
  }
  return uri;
}

}  // namespace

class CatalogClient::Core : public std::enable_shared_from_this<Core> {
 public:
  Core(CatalogClientOptions options, CatalogClientEnv env)
      : options_(std::move(options)), env_(std::move(env)) {
    config_base_ = options_.base_uri;
    while (!config_base_.empty() && config_base_.back() == '/') config_base_.pop_back();
    base_ = config_base_;
    channel_ = std::make_shared<CatalogChannel>(options_.auth, base_, options_.retry,
                                                env_.transport, env_.clock);
  }

  std::chrono::milliseconds Deadline(const CallOptions& call) const {
    return call.deadline.value_or(options_.default_deadline);
  }

  // Every Status leaving the client passes through here.
  template <class T>
  void Deliver(const CatalogCallback<T>& done, Result<T> r) {
    if (!r.ok()) {
      done(channel_->Redact(r.status()));
      return;
    }
    done(std::move(r));
  }

  // Tells on_unparsed about an answer that could not be read: `error` is the Status the
  // call fails with (or, for a commit, the detail), `response` what came back; a transport
  // error tagged kUnparsed (bytes that were not HTTP) has no response to show.
  void ReportUnparsed(const char* kind, const Status& error, const HttpResponse* response) {
    if (!options_.on_unparsed) return;
    UnparsedAnswer a;
    a.kind = response ? kind : "http";
    a.error = channel_->Redact(error).message();
    if (response) {
      a.http_status = response->status;
      a.excerpt = RedactedExcerpt(channel_->tokens().Redact(response->body), kUnparsedExcerptBytes);
    }
    options_.on_unparsed(a);
  }

  // A transport error passed on with context; one that carried unreadable bytes is reported.
  Status TransportError(const std::string& what, const Status& s) {
    Status out = Prefixed(what, s);
    if (s.reply() == PeerReply::kUnparsed) ReportUnparsed("http", out, nullptr);
    return out;
  }

  void FetchConfig(std::chrono::milliseconds deadline, CatalogCallback<CatalogConfig> done) {
    HttpRequest req;
    req.url = config_base_ + "/v1/config";
    if (!options_.warehouse.empty()) req.url += "?warehouse=" + PercentEncode(options_.warehouse);
    channel_->Send(
        std::move(req), deadline, [self = shared_from_this(), done](Result<HttpResponse> r) {
          const std::string what = "get catalog config from " + self->config_base_;
          if (!r.ok())
            return self->Deliver<CatalogConfig>(done, self->TransportError(what, r.status()));
          if (r->status != 200) return self->Deliver<CatalogConfig>(done, StatusFromHttp(what, *r));
          // The client's own `uri` sits between the defaults and the overrides, as in the
          // Java client's merged properties: only an override moves later requests.
          auto client_properties = self->options_.properties;
          client_properties.emplace("uri", self->config_base_);
          auto config = ParseCatalogConfig(r->body, client_properties);
          std::string base;
          if (config.ok()) {
            auto uri = DataBase(config->properties["uri"]);
            if (uri.ok())
              base = *uri;
            else
              config = uri.status();
          }
          if (!config.ok()) {
            Status s = Prefixed(what, config.status());
            self->ReportUnparsed("config", s, &*r);
            return self->Deliver<CatalogConfig>(done, s);
          }
          self->base_ = std::move(base);
          self->config_ = *config;
          self->channel_->tokens().SetAdvertisedEndpoint(config->oauth2_server_uri);
          self->Deliver(done, std::move(config));
        });
  }

  // OK when the known config advertises `endpoint`.
  Status Advertised(const char* endpoint) const {
    if (config_->Advertises(endpoint)) return Status::Ok();
    return Status::FailedPrecondition(std::string("catalog does not advertise ") + endpoint);
  }

  // Runs `then` with OK once the config is known and advertises `endpoint`. Calls that
  // arrive while the first config request is in flight wait for it instead of sending more.
  void Prepare(const char* endpoint, std::chrono::milliseconds deadline,
               std::function<void(Status)> then) {
    // Every call after the first: straight through, no wrapper around `then` (it holds the
    // whole call).
    if (config_) return then(Advertised(endpoint));
    config_waiters_.push_back(
        [self = shared_from_this(), endpoint, then = std::move(then)](Status config) {
          then(config.ok() ? self->Advertised(endpoint) : config);
        });
    if (config_waiters_.size() > 1) return;
    FetchConfig(deadline, [self = shared_from_this()](Result<CatalogConfig> c) {
      auto waiters = std::move(self->config_waiters_);
      self->config_waiters_.clear();
      for (auto& w : waiters) w(c.status());
    });
  }

  std::string Root() const {
    return base_ + "/v1" + (config_->prefix.empty() ? "" : "/" + config_->prefix);
  }

  std::string TablePath(const TableIdent& t) const {
    return Root() + "/namespaces/" +
           EncodeNamespace(t.namespace_levels, config_ ? &*config_ : nullptr) + "/tables/" +
           PercentEncode(t.name);
  }

  // Follows next-page-token. `url_for(token)` builds each page's URL; `parse(body, items)`
  // appends one page's items and returns its next-page-token.
  template <class Item>
  struct Listing {
    std::string what;
    std::function<std::string(const std::optional<std::string>&)> url_for;
    std::function<Result<std::optional<std::string>>(const std::string&, std::vector<Item>&)> parse;
    std::chrono::milliseconds deadline;
    const char* kind;  // for UnparsedAnswer: "list_namespaces"
    CatalogCallback<std::vector<Item>> done;
    std::vector<Item> items;
    std::optional<std::string> token;
    int pages = 0;
  };

  template <class Item>
  void NextPage(std::shared_ptr<Listing<Item>> l) {
    HttpRequest req;
    req.url = l->url_for(l->token);
    channel_->Send(
        std::move(req), l->deadline, [self = shared_from_this(), l](Result<HttpResponse> r) {
          if (!r.ok())
            return self->Deliver<std::vector<Item>>(l->done,
                                                    self->TransportError(l->what, r.status()));
          if (r->status != 200)
            return self->Deliver<std::vector<Item>>(l->done, StatusFromHttp(l->what, *r));
          auto next = l->parse(r->body, l->items);
          if (!next.ok()) {
            Status s = Prefixed(l->what, next.status());
            self->ReportUnparsed(l->kind, s, &*r);
            return self->Deliver<std::vector<Item>>(l->done, s);
          }
          ++l->pages;
          if (!next->has_value() || next->value().empty()) {
            return self->Deliver<std::vector<Item>>(l->done, std::move(l->items));
          }
          if (next->value() == l->token) {
            return self->Deliver<std::vector<Item>>(
                l->done, Status::Unavailable(
                             l->what + ": the catalog returned the same next-page-token twice")
                             .WithReply(PeerReply::kAnswered));
          }
          if (l->pages >= self->options_.max_pages) {
            return self->Deliver<std::vector<Item>>(
                l->done, Status::Unavailable(l->what + ": more than " +
                                             std::to_string(self->options_.max_pages) + " pages")
                             .WithReply(PeerReply::kAnswered));
          }
          l->token = *next;
          self->NextPage(l);
        });
  }

  // "&pageToken=...&pageSize=N" (the first request sends an empty pageToken to opt in).
  std::string PageQuery(const std::optional<std::string>& token) const {
    if (options_.page_size <= 0 && !token) return "";
    std::string q = "pageToken=" + PercentEncode(token.value_or(""));
    if (options_.page_size > 0) q += "&pageSize=" + std::to_string(options_.page_size);
    return q;
  }

  void ListNamespaces(std::optional<Namespace> parent, CatalogCallback<std::vector<Namespace>> done,
                      std::chrono::milliseconds deadline) {
    auto l = std::make_shared<Listing<Namespace>>();
    l->what = "list namespaces" + (parent ? " under " + NamespaceForPeople(*parent) : "");
    l->deadline = deadline;
    l->kind = "list_namespaces";
    l->done = std::move(done);
    l->url_for = [this, parent](const std::optional<std::string>& token) {
      std::string q;
      if (parent && !parent->empty())
        q = "parent=" + EncodeNamespace(*parent, config_ ? &*config_ : nullptr);
      std::string page = PageQuery(token);
      if (!page.empty()) q += (q.empty() ? "" : "&") + page;
      return Root() + "/namespaces" + (q.empty() ? "" : "?" + q);
    };
    l->parse = [](const std::string& body,
                  std::vector<Namespace>& items) -> Result<std::optional<std::string>> {
      auto page = ParseListNamespacesResponse(body);
      if (!page.ok()) return page.status();
      for (auto& ns : page->namespaces) items.push_back(std::move(ns));
      return page->next_page_token;
    };
    Prepare(kListNamespaces, deadline, [self = shared_from_this(), l](Status s) {
      if (!s.ok()) return self->Deliver<std::vector<Namespace>>(l->done, Prefixed(l->what, s));
      self->NextPage(l);
    });
  }

  void ListTables(Namespace ns, CatalogCallback<std::vector<TableIdent>> done,
                  std::chrono::milliseconds deadline) {
    auto l = std::make_shared<Listing<TableIdent>>();
    l->what = "list tables in " + NamespaceForPeople(ns);
    l->deadline = deadline;
    l->kind = "list_tables";
    l->done = std::move(done);
    l->url_for = [this, ns](const std::optional<std::string>& token) {
      std::string page = PageQuery(token);
      return Root() + "/namespaces/" + EncodeNamespace(ns, config_ ? &*config_ : nullptr) +
             "/tables" + (page.empty() ? "" : "?" + page);
    };
    l->parse = [](const std::string& body,
                  std::vector<TableIdent>& items) -> Result<std::optional<std::string>> {
      auto page = ParseListTablesResponse(body);
      if (!page.ok()) return page.status();
      for (auto& t : page->identifiers) items.push_back(std::move(t));
      return page->next_page_token;
    };
    Prepare(kListTables, deadline, [self = shared_from_this(), l](Status s) {
      if (!s.ok()) return self->Deliver<std::vector<TableIdent>>(l->done, Prefixed(l->what, s));
      self->NextPage(l);
    });
  }

  void LoadTable(TableIdent table, std::optional<std::string> etag,
                 CatalogCallback<LoadTableOutcome> done, std::chrono::milliseconds deadline,
                 SnapshotsMode snapshots) {
    std::string what = "load table " + table.ToString();
    Prepare(kLoadTable, deadline,
            [self = shared_from_this(), table = std::move(table), etag = std::move(etag),
             done = std::move(done), deadline, what, snapshots](Status s) mutable {
              if (!s.ok()) return self->Deliver<LoadTableOutcome>(done, Prefixed(what, s));
              HttpRequest req;
              req.url = self->TablePath(table) +
                        (snapshots == SnapshotsMode::kRefs ? "?snapshots=refs" : "?snapshots=all");
              if (etag && !etag->empty()) req.headers.Set("If-None-Match", *etag);
              if (!self->options_.access_delegation.empty()) {
                req.headers.Set("X-Iceberg-Access-Delegation", self->options_.access_delegation);
              }
              // Moved, not copied: Prepare runs this once.
              self->channel_->Send(std::move(req), deadline,
                                   [self, etag = std::move(etag), done = std::move(done),
                                    what = std::move(what)](Result<HttpResponse> r) {
                                     if (!r.ok())
                                       return self->Deliver<LoadTableOutcome>(
                                           done, self->TransportError(what, r.status()));
                                     if (r->status == 304) {
                                       LoadTableOutcome out;
                                       out.not_modified = true;
                                       out.table.etag = etag.value_or("");
                                       return self->Deliver<LoadTableOutcome>(done, std::move(out));
                                     }
                                     if (r->status != 200)
                                       return self->Deliver<LoadTableOutcome>(
                                           done, StatusFromHttp(what, *r));
                                     auto view = ParseTableResult(r->body, "LoadTableResult");
                                     if (!view.ok()) {
                                       Status s = Prefixed(what, view.status());
                                       self->ReportUnparsed("load_table", s, &*r);
                                       return self->Deliver<LoadTableOutcome>(done, s);
                                     }
                                     LoadTableOutcome out;
                                     out.table = std::move(view).value();
                                     out.table.etag = r->headers.Get("ETag").value_or("");
                                     self->Deliver<LoadTableOutcome>(done, std::move(out));
                                   });
            });
  }

  // The key to send, or "" when the catalog does not do idempotency keys.
  std::string IdempotencyKeyFor(const TableCommit& commit) const {
    if (!config_->supports_idempotency_keys) return "";
    const auto& key = commit.idempotency_key;
    if (!key.empty()) {
      auto born = UuidV7Millis(key);
      const auto& lifetime = config_->idempotency_key_lifetime;
      // The spec: do not reuse a key after its lifetime; a non-v7 key's age is unknown.
      if (!lifetime || (born && env_.clock.Now() - *born < lifetime->count())) return key;
    }
    return NewUuidV7(env_.clock.Now(), env_.random);
  }

  void CommitTable(TableCommit commit, CatalogCallback<CommitOutcome> done,
                   std::chrono::milliseconds deadline) {
    std::string what = "commit to " + commit.table.ToString();
    Prepare(kUpdateTable, deadline,
            [self = shared_from_this(), commit = std::move(commit), done = std::move(done),
             deadline, what](Status s) mutable {
              if (!s.ok()) return self->Deliver<CommitOutcome>(done, Prefixed(what, s));
              HttpRequest req;
              req.method = "POST";
              req.url = self->TablePath(commit.table);
              req.headers.Set("Content-Type", "application/json");
              const std::string key = self->IdempotencyKeyFor(commit);
              if (!key.empty()) req.headers.Set("Idempotency-Key", key);
              req.body = CommitTableRequestJson(commit);
              self->channel_->SendTracked(
                  std::move(req), deadline,
                  [self, done = std::move(done), what = std::move(what), key](
                      Result<HttpResponse> r, bool may_have_been_delivered) {
                    CommitOutcome out;
                    out.idempotency_key = key;
                    if (!r.ok()) {
                      // Not delivered: refused connections, and token failures before sending.
                      Status s = self->TransportError(what, r.status());
                      if (!may_have_been_delivered) return self->Deliver<CommitOutcome>(done, s);
                      out.kind = CommitOutcome::Kind::kStateUnknown;
                      out.reply = s.reply();
                      out.detail = self->channel_->Redact(s).message();
                      return self->Deliver<CommitOutcome>(done, std::move(out));
                    }
                    const int status = r->status;
                    if (status == 500 || status == 502 || status == 504) {
                      out.kind = CommitOutcome::Kind::kStateUnknown;
                      out.reply = PeerReply::kAnswered;
                      out.detail = self->channel_->Redact(StatusFromHttp(what, *r)).message();
                      return self->Deliver<CommitOutcome>(done, std::move(out));
                    }
                    if (!key.empty() && IsRequestInProgress(*r)) {
                      out.kind = CommitOutcome::Kind::kStateUnknown;
                      out.reply = PeerReply::kAnswered;
                      out.detail = what +
                                   ": the catalog is still processing an earlier request "
                                   "with this Idempotency-Key: " +
                                   self->channel_->Redact(StatusFromHttp(what, *r)).message();
                      return self->Deliver<CommitOutcome>(done, std::move(out));
                    }
                    if (status == 409) {
                      auto e = ParseIcebergError(r->body);
                      return self->Deliver<CommitOutcome>(
                          done, Status::Conflict(what + " failed, a requirement was not met: " +
                                                 (e ? e->message : Snippet(r->body)))
                                    .WithReply(PeerReply::kAnswered));
                    }
                    if (status != 200)
                      return self->Deliver<CommitOutcome>(done, StatusFromHttp(what, *r));
                    auto view = ParseTableResult(r->body, "CommitTableResponse");
                    if (!view.ok()) {
                      // 200 means it committed; only our view of the result is missing.
                      out.kind = CommitOutcome::Kind::kCommitted;
                      out.detail = view.status().message();
                      self->ReportUnparsed("commit", Prefixed(what, view.status()), &*r);
                      return self->Deliver<CommitOutcome>(done, std::move(out));
                    }
                    out.table = std::move(view).value();
                    out.table.etag = r->headers.Get("ETag").value_or("");
                    self->Deliver<CommitOutcome>(done, std::move(out));
                  });
            });
  }

  CatalogClientOptions options_;
  CatalogClientEnv env_;
  std::string config_base_;  // the configured endpoint, without a trailing '/': GET /v1/config
  std::string base_;         // where every other request goes: config_base_ or the `uri` override
  std::shared_ptr<CatalogChannel> channel_;
  std::optional<CatalogConfig> config_;
  std::vector<std::function<void(Status)>> config_waiters_;
};

CatalogClient::CatalogClient(CatalogClientOptions options, CatalogClientEnv env)
    : core_(std::make_shared<Core>(std::move(options), std::move(env))) {}

CatalogClient::~CatalogClient() = default;

void CatalogClient::GetConfig(CatalogCallback<CatalogConfig> done, CallOptions call) {
  core_->FetchConfig(core_->Deadline(call), std::move(done));
}

const std::optional<CatalogConfig>& CatalogClient::config() const { return core_->config_; }

void CatalogClient::ListNamespaces(std::optional<Namespace> parent,
                                   CatalogCallback<std::vector<Namespace>> done, CallOptions call) {
  core_->ListNamespaces(std::move(parent), std::move(done), core_->Deadline(call));
}

void CatalogClient::ListTables(Namespace ns, CatalogCallback<std::vector<TableIdent>> done,
                               CallOptions call) {
  core_->ListTables(std::move(ns), std::move(done), core_->Deadline(call));
}

void CatalogClient::LoadTable(TableIdent table, std::optional<std::string> etag,
                              CatalogCallback<LoadTableOutcome> done, CallOptions call,
                              SnapshotsMode snapshots) {
  core_->LoadTable(std::move(table), std::move(etag), std::move(done), core_->Deadline(call),
                   snapshots);
}

void CatalogClient::CommitTable(TableCommit commit, CatalogCallback<CommitOutcome> done,
                                CallOptions call) {
  core_->CommitTable(std::move(commit), std::move(done), core_->Deadline(call));
}

}  // namespace icewarden
