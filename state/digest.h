// SHA-256 of bytes, and its lower-case hex form, for what icewarden keeps or compares by digest:
// API tokens given as hashes (`icewarden token hash`, api.tokens[].token_sha256), the verifier
// that compares presented tokens, and the runbook's content hash.
// Thread-safety: plain functions.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace icewarden {

using Sha256Digest = std::array<unsigned char, 32>;

Sha256Digest Sha256(std::string_view bytes);
std::string Sha256Hex(std::string_view bytes);
std::string HexOf(const Sha256Digest& digest);
// The digest written as 64 hex digits (either case), or nullopt for anything else.
std::optional<Sha256Digest> ParseSha256Hex(std::string_view hex);

}  // namespace icewarden
