#include "actions/dns_client.h"

#include <arpa/inet.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <type_traits>

// ldns/common.h defines `true` and `false` as the ints 1 and 0 (and `bool` as a macro) unless
// <stdbool.h> came first: every `true` after it would be an int, and nlohmann::json stores an int
// as a number. In C++ <stdbool.h> only says the names exist. In a unity batch the macros reached
// the next file (dns_rfc2136_action.cpp's detail["landed_before"] = true became 1); the
// static_assert keeps them out.
#include <stdbool.h>

#include <ldns/ldns.h>
static_assert(std::is_same_v<decltype(true), bool> && std::is_same_v<decltype(false), bool>,
              "ldns/ldns.h redefined true and false; include <stdbool.h> before it");

namespace icewarden {
namespace {

struct LdnsFree {
  void operator()(ldns_resolver* r) const { ldns_resolver_deep_free(r); }
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
  void operator()(ldns_rdf* d) const { ldns_rdf_deep_free(d); }
  void operator()(ldns_rr* r) const { ldns_rr_free(r); }
  void operator()(ldns_rr_list* l) const { ldns_rr_list_deep_free(l); }
  void operator()(ldns_buffer* b) const { ldns_buffer_free(b); }
  void operator()(uint8_t* bytes) const { free(bytes); }   // NOLINT: malloc'd by ldns
  void operator()(sockaddr_storage* a) const { free(a); }  // NOLINT: malloc'd by ldns
};
template <typename T>
using Owned = std::unique_ptr<T, LdnsFree>;

ldns_rr_type LdnsType(DnsType t) {
  switch (t) {
    case DnsType::kA:
      return LDNS_RR_TYPE_A;
    case DnsType::kAAAA:
      return LDNS_RR_TYPE_AAAA;
    case DnsType::kCNAME:
      return LDNS_RR_TYPE_CNAME;
    case DnsType::kTXT:
      return LDNS_RR_TYPE_TXT;
  }
  return LDNS_RR_TYPE_A;
}

std::string TakeString(char* s) {
  if (!s) return "";
  std::string out(s);
  free(s);  // NOLINT: allocated by ldns with malloc
  return out;
}

std::string RcodeName(ldns_pkt_rcode rcode) {
  const ldns_lookup_table* t = ldns_lookup_by_id(ldns_rcodes, static_cast<int>(rcode));
  return t ? t->name : "RCODE " + std::to_string(static_cast<int>(rcode));
}

std::string TsigErrorName(uint16_t e) {
  switch (e) {
    case 16:
      return "BADSIG";
    case 17:
      return "BADKEY";
    case 18:
      return "BADTIME";
    case 22:
      return "BADTRUNC";
    default:
      return "TSIG error " + std::to_string(e);
  }
}

// "\"a\\\"b\"" (ldns's presentation of one character-string) -> "a\"b".
std::string UnquoteTxt(const std::string& s) {
  std::string in = s;
  if (in.size() >= 2 && in.front() == '"' && in.back() == '"') in = in.substr(1, in.size() - 2);
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\' || i + 1 >= in.size()) {
      out += in[i];
      continue;
    }
    if (i + 3 < in.size() && std::isdigit(static_cast<unsigned char>(in[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(in[i + 2])) &&
        std::isdigit(static_cast<unsigned char>(in[i + 3]))) {
      out += static_cast<char>(std::stoi(in.substr(i + 1, 3)));
      i += 3;
    } else {
      out += in[++i];
    }
  }
  return out;
}

// "a\"b" -> "\"a\\\"b\"", split into character-strings of at most 255 bytes.
std::string QuoteTxt(const std::string& text) {
  std::string out;
  for (size_t start = 0; start < text.size() || start == 0; start += 255) {
    std::string chunk = text.substr(start, 255);
    std::string q = "\"";
    for (char c : chunk) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        q += '\\';
        q += c;
      } else if (u < 0x20 || u >= 0x7f) {
        char buf[5];
        snprintf(buf, sizeof buf, "\\%03u", static_cast<unsigned>(u));
        q += buf;
      } else {
        q += c;
      }
    }
    out += (out.empty() ? "" : " ") + q + "\"";
    if (text.empty()) break;
  }
  return out;
}

std::string ValueOf(const ldns_rr* rr, DnsType type) {
  if (type == DnsType::kTXT) {
    std::string text;
    for (size_t i = 0; i < ldns_rr_rd_count(rr); ++i)
      text += UnquoteTxt(TakeString(ldns_rdf2str(ldns_rr_rdf(rr, i))));
    return text;
  }
  if (ldns_rr_rd_count(rr) < 1) return "";
  std::string v = TakeString(ldns_rdf2str(ldns_rr_rdf(rr, 0)));
  if (type == DnsType::kCNAME)
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v;
}

timeval ToTimeval(std::chrono::milliseconds d) {
  d = std::max(d, std::chrono::milliseconds(1));
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

Owned<ldns_resolver> MakeResolver(const DnsServer& server, std::chrono::milliseconds timeout,
                                  std::string* why) {
  const bool v6 = server.address.find(':') != std::string::npos;
  Owned<ldns_rdf> address(
      ldns_rdf_new_frm_str(v6 ? LDNS_RDF_TYPE_AAAA : LDNS_RDF_TYPE_A, server.address.c_str()));
  if (!address) {
    *why = "dns server " + server.address + " is not an IP address";
    return nullptr;
  }
  Owned<ldns_resolver> res(ldns_resolver_new());
  if (!res || ldns_resolver_push_nameserver(res.get(), address.get()) != LDNS_STATUS_OK) {
    *why = "cannot set up a resolver for " + server.ToString();
    return nullptr;
  }
  ldns_resolver_set_port(res.get(), server.port);
  ldns_resolver_set_retry(res.get(), 1);
  ldns_resolver_set_retrans(res.get(), 0);
  ldns_resolver_set_random(res.get(), false);
  ldns_resolver_set_recursive(res.get(), false);
  ldns_resolver_set_fallback(res.get(), true);  // TCP when an answer is truncated
  ldns_resolver_set_timeout(res.get(), ToTimeval(timeout));
  return res;
}

// Builds one update-section record.
Owned<ldns_rr> ChangeRecord(const DnsChange& c, std::string* why) {
  if (c.op == DnsChange::Op::kDeleteRRset) {
    // RFC 2136 2.5.2: class ANY, TTL 0, no rdata. ldns cannot parse an empty rdata from
    // text, so the record is assembled by hand.
    Owned<ldns_rr> rr(ldns_rr_new());
    ldns_rdf* owner = ldns_dname_new_frm_str(c.name.c_str());
    if (!rr || !owner) {
      if (owner) ldns_rdf_deep_free(owner);
      *why = "\"" + c.name + "\" is not a DNS name";
      return nullptr;
    }
    ldns_rr_set_owner(rr.get(), owner);
    ldns_rr_set_type(rr.get(), LdnsType(c.type));
    ldns_rr_set_class(rr.get(), LDNS_RR_CLASS_ANY);
    ldns_rr_set_ttl(rr.get(), 0);
    return rr;
  }
  const std::string rdata = c.type == DnsType::kTXT ? QuoteTxt(c.value) : c.value;
  const std::string text =
      c.name + " " + std::to_string(c.ttl) + " IN " + DnsTypeName(c.type) + " " + rdata;
  ldns_rr* parsed = nullptr;
  if (ldns_rr_new_frm_str(&parsed, text.c_str(), c.ttl, nullptr, nullptr) != LDNS_STATUS_OK ||
      !parsed) {
    *why = "cannot encode " + c.name + " " + DnsTypeName(c.type) + " " + c.value;
    return nullptr;
  }
  Owned<ldns_rr> rr(parsed);
  if (c.op == DnsChange::Op::kDeleteValue) {
    // RFC 2136 2.5.4: class NONE, TTL 0, the rdata to remove.
    ldns_rr_set_class(rr.get(), LDNS_RR_CLASS_NONE);
    ldns_rr_set_ttl(rr.get(), 0);
  }
  return rr;
}

}  // namespace

std::string DnsServer::ToString() const {
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

std::optional<DnsServer> ParseDnsServer(std::string_view text, std::string* why) {
  DnsServer s;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      *why = "unterminated IPv6 address";
      return std::nullopt;
    }
    s.address = std::string(text.substr(1, close - 1));
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') {
        *why = "expected ':' and a port after the IPv6 address";
        return std::nullopt;
      }
      port = text.substr(close + 2);
    }
  } else if (std::count(text.begin(), text.end(), ':') > 1) {
    s.address = std::string(text);  // a bare IPv6 address
  } else {
    const size_t colon = text.find(':');
    s.address = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port = text.substr(colon + 1);
  }
  unsigned char buf[16];
  const bool v6 = s.address.find(':') != std::string::npos;
  if (inet_pton(v6 ? AF_INET6 : AF_INET, s.address.c_str(), buf) != 1) {
    *why = "expected an IP address and optional port (127.0.0.1:53, [::1]:53), got '" +
           std::string(text) + "'";
    return std::nullopt;
  }
  if (!port.empty() || (text.size() > 0 && text.back() == ':')) {
    const bool digits =
        !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        });
    const int n = digits ? std::stoi(std::string(port)) : 0;
    if (n < 1 || n > 65535) {
      *why = "port must be a number from 1 to 65535";
      return std::nullopt;
    }
    s.port = static_cast<uint16_t>(n);
  }
  return s;
}

std::optional<DnsType> ParseDnsType(std::string_view text) {
  if (text == "A") return DnsType::kA;
  if (text == "AAAA") return DnsType::kAAAA;
  if (text == "CNAME") return DnsType::kCNAME;
  if (text == "TXT") return DnsType::kTXT;
  return std::nullopt;
}

const char* DnsTypeName(DnsType t) {
  switch (t) {
    case DnsType::kA:
      return "A";
    case DnsType::kAAAA:
      return "AAAA";
    case DnsType::kCNAME:
      return "CNAME";
    case DnsType::kTXT:
      return "TXT";
  }
  return "?";
}

std::optional<std::string> FullyQualified(std::string_view name) {
  std::string n(name);
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n.empty() || n == ".") return std::nullopt;
  if (n.back() != '.') n += '.';
  size_t label = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    if (c == '.') {
      if (label == 0) return std::nullopt;  // empty label: ".." or a leading dot
      label = 0;
      continue;
    }
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '*'))
      return std::nullopt;
    if (++label > 63) return std::nullopt;
  }
  if (n.size() > 254) return std::nullopt;
  return n;
}

std::optional<std::string> CanonicalDnsValue(DnsType t, std::string_view value, std::string* why) {
  const std::string v(value);
  switch (t) {
    case DnsType::kA:
    case DnsType::kAAAA: {
      const int family = t == DnsType::kA ? AF_INET : AF_INET6;
      unsigned char buf[16];
      char text[INET6_ADDRSTRLEN];
      if (inet_pton(family, v.c_str(), buf) != 1 || !inet_ntop(family, buf, text, sizeof text)) {
        *why = std::string("expected an ") + (t == DnsType::kA ? "IPv4" : "IPv6") +
               " address, got '" + v + "'";
        return std::nullopt;
      }
      return std::string(text);
    }
    case DnsType::kCNAME: {
      auto n = FullyQualified(v);
      if (!n) *why = "expected a DNS name, got '" + v + "'";
      return n;
    }
    case DnsType::kTXT:
      if (v.size() > 4000) {
        *why = "TXT value longer than 4000 bytes";
        return std::nullopt;
      }
      return v;
  }
  return std::nullopt;
}

DnsLookup QueryRRset(const DnsServer& server, const std::string& name, DnsType type,
                     std::chrono::milliseconds timeout, bool follow_cnames) {
  DnsLookup out;
  out.rrset.name = name;
  out.rrset.type = type;
  auto res = MakeResolver(server, timeout, &out.error);
  if (!res) return out;
  Owned<ldns_rdf> owner(ldns_dname_new_frm_str(name.c_str()));
  if (!owner) {
    out.error = "\"" + name + "\" is not a DNS name";
    return out;
  }
  ldns_pkt* raw = nullptr;
  const ldns_status st =
      ldns_resolver_query_status(&raw, res.get(), owner.get(), LdnsType(type), LDNS_RR_CLASS_IN, 0);
  Owned<ldns_pkt> pkt(raw);
  if (st != LDNS_STATUS_OK || !pkt) {
    const char* e = ldns_get_errorstr_by_id(st);
    out.error = "query " + name + " " + DnsTypeName(type) + " at " + server.ToString() + ": " +
                (st == LDNS_STATUS_OK || !e ? "no answer" : e);
    return out;
  }
  const ldns_pkt_rcode rcode = ldns_pkt_get_rcode(pkt.get());
  out.rcode = RcodeName(rcode);
  if (rcode != LDNS_RCODE_NOERROR && rcode != LDNS_RCODE_NXDOMAIN) {
    out.error =
        "query " + name + " " + DnsTypeName(type) + " at " + server.ToString() + ": " + out.rcode;
    return out;
  }
  ldns_rr_list* answer = ldns_pkt_answer(pkt.get());
  for (size_t i = 0; answer && i < ldns_rr_list_rr_count(answer); ++i) {
    const ldns_rr* rr = ldns_rr_list_rr(answer, i);
    if (ldns_rr_get_type(rr) != LdnsType(type)) continue;
    if (!follow_cnames && ldns_dname_compare(ldns_rr_owner(rr), owner.get()) != 0) continue;
    if (out.rrset.values.empty()) out.rrset.ttl = ldns_rr_ttl(rr);
    out.rrset.values.push_back(ValueOf(rr, type));
  }
  std::sort(out.rrset.values.begin(), out.rrset.values.end());
  out.rrset.values.erase(std::unique(out.rrset.values.begin(), out.rrset.values.end()),
                         out.rrset.values.end());
  out.ok = true;
  return out;
}

namespace {

// One signed UPDATE: `prerequisites` (may be null) and `changes` for `zone`.
DnsUpdateOutcome SendSignedUpdate(const DnsServer& server, const std::string& zone,
                                  const TsigKey& key, ldns_rr_list* prerequisites,
                                  const std::vector<DnsChange>& changes,
                                  std::chrono::milliseconds timeout) {
  DnsUpdateOutcome out;
  auto res = MakeResolver(server, timeout, &out.error);
  if (!res) return out;
  // ldns names its HMAC algorithms as domain names, with the trailing dot.
  const std::string algorithm = key.algorithm + ".";
  ldns_resolver_set_tsig_keyname(res.get(), key.name.c_str());
  ldns_resolver_set_tsig_algorithm(res.get(), algorithm.c_str());
  ldns_resolver_set_tsig_keydata(res.get(), key.secret.c_str());

  Owned<ldns_rr_list> update(ldns_rr_list_new());
  for (const DnsChange& c : changes) {
    Owned<ldns_rr> rr = ChangeRecord(c, &out.error);
    if (!rr) return out;
    ldns_rr_list_push_rr(update.get(), rr.release());
  }
  ldns_rdf* zone_rdf = ldns_dname_new_frm_str(zone.c_str());
  if (!zone_rdf) {
    out.error = "\"" + zone + "\" is not a DNS name";
    return out;
  }
  // The packet takes ownership of zone_rdf and copies the record list.
  Owned<ldns_pkt> pkt(
      ldns_update_pkt_new(zone_rdf, LDNS_RR_CLASS_IN, prerequisites, update.get(), nullptr));
  if (!pkt) {
    out.error = "cannot build the UPDATE message";
    return out;
  }
  ldns_pkt_set_rd(pkt.get(), false);  // the header bit is zero in an UPDATE (RFC 2136 2.2)
  const ldns_status signed_st = ldns_update_pkt_tsig_add(pkt.get(), res.get());
  if (signed_st != LDNS_STATUS_OK) {
    const char* e = ldns_get_errorstr_by_id(signed_st);
    out.error = std::string("cannot sign the UPDATE with TSIG key ") + key.name + ": " +
                (e ? e : "unknown error");
    return out;
  }
  // Sent by hand rather than with ldns_resolver_send_pkt, which drops an answer whose TSIG
  // does not verify; but the answer to a badly signed request is unsigned by design
  // (RFC 8945 5.3.2) and its RCODE is exactly what the caller needs to see.
  const ldns_rdf* request_mac = ldns_rr_rdf(ldns_pkt_tsig(pkt.get()), 3);
  Owned<ldns_buffer> wire(ldns_buffer_new(LDNS_MIN_BUFLEN));
  if (!wire || ldns_pkt2buffer_wire(wire.get(), pkt.get()) != LDNS_STATUS_OK) {
    out.error = "cannot encode the UPDATE message";
    return out;
  }
  size_t to_len = 0;
  Owned<sockaddr_storage> to(ldns_rdf2native_sockaddr_storage(
      ldns_resolver_nameservers(res.get())[0], server.port, &to_len));
  if (!to) {
    out.error = "cannot address " + server.ToString();
    return out;
  }
  // One exchange over `tcp` or UDP; the answer's wire form and parsed message.
  struct Exchange {
    ldns_status st = LDNS_STATUS_OK;
    Owned<uint8_t> wire;
    size_t size = 0;
    Owned<ldns_pkt> pkt;
  };
  auto exchange = [&](bool tcp) {
    Exchange x;
    uint8_t* raw_answer = nullptr;
    x.st = tcp ? ldns_tcp_send(&raw_answer, wire.get(), to.get(), static_cast<socklen_t>(to_len),
                               ToTimeval(timeout), &x.size)
               : ldns_udp_send(&raw_answer, wire.get(), to.get(), static_cast<socklen_t>(to_len),
                               ToTimeval(timeout), &x.size);
    x.wire.reset(raw_answer);
    ldns_pkt* raw = nullptr;
    if (x.wire && x.size > 0 && ldns_wire2pkt(&raw, x.wire.get(), x.size) == LDNS_STATUS_OK)
      x.pkt.reset(raw);
    return x;
  };
  constexpr size_t kUdpLimit = 512;
  bool tcp = ldns_buffer_position(wire.get()) > kUdpLimit;
  Exchange x = exchange(tcp);
  if (!tcp && x.pkt && ldns_pkt_tc(x.pkt.get())) {
    tcp = true;  // truncated: the whole answer only comes over TCP
    x = exchange(true);
  }
  out.transport = tcp ? "tcp" : "udp";
  Owned<uint8_t>& answer_wire = x.wire;
  const size_t answer_size = x.size;
  out.status = DnsUpdateOutcome::Status::kNoAnswer;
  if (!answer_wire || answer_size == 0) {
    const char* e = ldns_get_errorstr_by_id(x.st);
    out.error = "no answer from " + server.ToString() + " over " + out.transport + " within " +
                std::to_string(timeout.count()) + "ms" +
                (x.st != LDNS_STATUS_OK && e ? std::string(" (") + e + ")" : "");
    return out;
  }
  if (!x.pkt) {
    out.error = "the answer from " + server.ToString() + " is not a DNS message";
    return out;
  }
  Owned<ldns_pkt>& answer = x.pkt;
  if (ldns_pkt_id(answer.get()) != ldns_pkt_id(pkt.get())) {
    out.error = "the answer from " + server.ToString() + " is for another message";
    return out;
  }
  const ldns_pkt_rcode rcode = ldns_pkt_get_rcode(answer.get());
  out.rcode = RcodeName(rcode);
  if (const ldns_rr* tsig = ldns_pkt_tsig(answer.get()); tsig && ldns_rr_rd_count(tsig) > 5) {
    const uint16_t tsig_error = ldns_rdf2native_int16(ldns_rr_rdf(tsig, 5));
    if (tsig_error != 0) out.rcode += " (TSIG " + TsigErrorName(tsig_error) + ")";
  }
  if (rcode != LDNS_RCODE_NOERROR) {
    out.status = DnsUpdateOutcome::Status::kRejected;
    return out;
  }
  if (!ldns_pkt_tsig(answer.get()) ||
      !ldns_pkt_tsig_verify(answer.get(), answer_wire.get(), answer_size, key.name.c_str(),
                            key.secret.c_str(), request_mac)) {
    // NOERROR, but not signed by the server we share the key with: do not believe it.
    out.error = "the answer's TSIG signature does not verify";
    return out;
  }
  out.status = DnsUpdateOutcome::Status::kApplied;
  return out;
}

}  // namespace

DnsUpdateOutcome SendDnsUpdate(const DnsServer& server, const std::string& zone, const TsigKey& key,
                               const std::vector<DnsChange>& changes,
                               std::chrono::milliseconds timeout,
                               const std::vector<DnsPrerequisite>& prerequisites) {
  if (prerequisites.empty()) return SendSignedUpdate(server, zone, key, nullptr, changes, timeout);
  Owned<ldns_rr_list> list(ldns_rr_list_new());
  for (const DnsPrerequisite& p : prerequisites) {
    DnsUpdateOutcome out;
    if (p.values.empty()) {
      // RFC 2136 2.4.3, "RRset does not exist": class NONE, TTL 0, no rdata. ChangeRecord
      // builds the same shape with class ANY (delete an RRset), so it is reused and re-classed.
      Owned<ldns_rr> rr =
          ChangeRecord({DnsChange::Op::kDeleteRRset, p.name, p.type, 0, ""}, &out.error);
      if (!rr) return out;
      ldns_rr_set_class(rr.get(), LDNS_RR_CLASS_NONE);
      ldns_rr_list_push_rr(list.get(), rr.release());
      continue;
    }
    // RFC 2136 2.4.2, "RRset exists (value dependent)": every record, class IN, TTL 0.
    for (const std::string& v : p.values) {
      Owned<ldns_rr> rr = ChangeRecord({DnsChange::Op::kAdd, p.name, p.type, 0, v}, &out.error);
      if (!rr) return out;
      ldns_rr_set_ttl(rr.get(), 0);
      ldns_rr_list_push_rr(list.get(), rr.release());
    }
  }
  return SendSignedUpdate(server, zone, key, list.get(), changes, timeout);
}

DnsUpdateOutcome SendDnsPrerequisiteOnlyUpdate(const DnsServer& server, const std::string& zone,
                                               const TsigKey& key,
                                               std::chrono::milliseconds timeout) {
  DnsUpdateOutcome out;
  // RFC 2136 2.4.4 "name is in use": the zone's apex, class ANY, type ANY, TTL 0, no rdata.
  // The apex always holds the SOA, so the prerequisite holds on any server that serves the
  // zone, and with no update section the server has nothing to apply.
  Owned<ldns_rr> in_use(ldns_rr_new());
  ldns_rdf* owner = ldns_dname_new_frm_str(zone.c_str());
  if (!in_use || !owner) {
    if (owner) ldns_rdf_deep_free(owner);
    out.error = "\"" + zone + "\" is not a DNS name";
    return out;
  }
  ldns_rr_set_owner(in_use.get(), owner);
  ldns_rr_set_type(in_use.get(), LDNS_RR_TYPE_ANY);
  ldns_rr_set_class(in_use.get(), LDNS_RR_CLASS_ANY);
  ldns_rr_set_ttl(in_use.get(), 0);
  Owned<ldns_rr_list> prerequisites(ldns_rr_list_new());
  ldns_rr_list_push_rr(prerequisites.get(), in_use.release());
  return SendSignedUpdate(server, zone, key, prerequisites.get(), {}, timeout);
}

bool IsBase64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return false;
  size_t pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') {
      if (i < text.size() - 2) return false;
      ++pad;
      continue;
    }
    if (pad > 0) return false;
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/')) return false;
  }
  return true;
}

}  // namespace icewarden
