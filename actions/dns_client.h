// DnsClient: the DNS conversations the dns actions need, spoken with ldns directly to one
// given server (never the system resolver): read one RRset, and send one RFC 2136 UPDATE
// signed with TSIG.
//
// Names are handled fully qualified, lowercase, with the trailing dot ("www.lab.test.").
// Values are compared in canonical form (CanonicalDnsValue): addresses as inet_ntop prints
// them, CNAME targets as names, TXT as the unquoted text.
// Calls block for at most their timeout (one try each). Thread-safety: every call makes its
// own resolver; call from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace icewarden {

struct DnsServer {
  std::string address;  // an IPv4 or IPv6 literal
  uint16_t port = 53;
  std::string ToString() const;  // "127.0.0.1:5300", "[::1]:53"
};
// "127.0.0.1", "127.0.0.1:5300", "[::1]:5300"; nullopt with *why otherwise (host names are
// refused: resolving them would go through the system resolver).
std::optional<DnsServer> ParseDnsServer(std::string_view text, std::string* why);

enum class DnsType { kA, kAAAA, kCNAME, kTXT };
std::optional<DnsType> ParseDnsType(std::string_view text);
const char* DnsTypeName(DnsType t);

// "Www.Lab.Test" -> "www.lab.test."; nullopt when not a valid DNS name.
std::optional<std::string> FullyQualified(std::string_view name);
// The canonical form of a value of type `t`; nullopt with *why when it is not one.
std::optional<std::string> CanonicalDnsValue(DnsType t, std::string_view value, std::string* why);

struct RRset {
  std::string name;  // fully qualified
  DnsType type = DnsType::kA;
  uint32_t ttl = 0;                 // 0 when empty
  std::vector<std::string> values;  // canonical, sorted; empty: no such RRset
};

struct DnsLookup {
  bool ok = false;
  std::string error;  // when !ok: "timed out", "REFUSED", ...
  std::string rcode;  // "NOERROR", "NXDOMAIN", ...
  RRset rrset;
};
// Asks `server` for name/type (no recursion). NXDOMAIN and NODATA are ok with no values.
// With `follow_cnames`, records of `type` anywhere in the answer count (an A query for a
// CNAME answers with the target's addresses); without, only those owned by `name`.
DnsLookup QueryRRset(const DnsServer& server, const std::string& name, DnsType type,
                     std::chrono::milliseconds timeout, bool follow_cnames = false);

struct TsigKey {
  std::string name;
  std::string algorithm;  // hmac-sha256 | hmac-sha512
  std::string secret;     // base64
};

// One change in the update section.
struct DnsChange {
  enum class Op { kAdd, kDeleteRRset, kDeleteValue };
  Op op = Op::kAdd;
  std::string name;  // fully qualified
  DnsType type = DnsType::kA;
  uint32_t ttl = 60;
  std::string value;  // canonical; unused for kDeleteRRset
};

struct DnsUpdateOutcome {
  enum class Status {
    kApplied,   // NOERROR
    kRejected,  // the server answered with an error RCODE: nothing was changed
    kNoAnswer,  // sent, but no (usable) answer: it may or may not have been applied
    kNotSent,   // could not be built, signed or sent
  };
  Status status = Status::kNotSent;
  std::string rcode;      // "NOERROR", "REFUSED", "NOTAUTH (TSIG BADSIG)"
  std::string error;      // for kNoAnswer and kNotSent
  std::string transport;  // "udp" or "tcp": how the UPDATE was (last) sent
};
// A prerequisite on one RRset (RFC 2136 2.4.2 and 2.4.3): the RRset must hold exactly
// `values` (canonical), or, when `values` is empty, must not exist. The server applies the
// update only when every prerequisite holds, and answers NXRRSET or YXRRSET otherwise.
struct DnsPrerequisite {
  std::string name;  // fully qualified
  DnsType type = DnsType::kTXT;
  std::vector<std::string> values;
};

// Sends one UPDATE for `zone` with `changes`, in order, signed with `key`, applied only when
// every one of `prerequisites` holds. Over UDP when the message fits in 512 bytes (the classic
// DNS limit without EDNS), else over TCP, like nsupdate; an answer over UDP with the TC bit set
// is asked again over TCP.
DnsUpdateOutcome SendDnsUpdate(const DnsServer& server, const std::string& zone, const TsigKey& key,
                               const std::vector<DnsChange>& changes,
                               std::chrono::milliseconds timeout,
                               const std::vector<DnsPrerequisite>& prerequisites = {});

// Readiness: an UPDATE for `zone`, signed with `key`, whose only content is the prerequisite
// "the zone's apex is in use" (RFC 2136 2.4.4) and whose update section is empty, so that it
// can change nothing. The server still authenticates the TSIG key and checks that the key may
// update the zone: kApplied means it would accept our updates; kRejected carries its RCODE
// (NOTAUTH with the TSIG error for a wrong key, REFUSED for a key it does not allow).
DnsUpdateOutcome SendDnsPrerequisiteOnlyUpdate(const DnsServer& server, const std::string& zone,
                                               const TsigKey& key,
                                               std::chrono::milliseconds timeout);

// True when `text` is non-empty standard base64 (with padding).
bool IsBase64(std::string_view text);

}  // namespace icewarden
