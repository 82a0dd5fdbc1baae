// HMAC signatures, constant-time comparison and basic-auth credentials, over OpenSSL's
// libcrypto (already linked for TLS and the API tokens' digests).
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <array>

#include "orchestrator/webhooks/webhooks.h"

namespace icewarden {
namespace {

std::array<unsigned char, SHA256_DIGEST_LENGTH> Sha256(std::string_view s) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> d{};
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  return d;
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 0xf];
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Digests first: equal lengths for CRYPTO_memcmp whatever was sent, so neither the length
  // nor the position of the first difference shows in the time taken.
  const auto da = Sha256(a);
  const auto db = Sha256(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

std::optional<std::pair<std::string, std::string>> BasicCredentials(std::string_view header) {
  const std::size_t space = header.find(' ');
  if (space == std::string_view::npos || !IEquals(header.substr(0, space), "basic"))
    return std::nullopt;
  std::string_view encoded = header.substr(space + 1);
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  if (encoded.empty() || encoded.size() % 4 != 0 || encoded.size() > 4096) return std::nullopt;
  std::string decoded(encoded.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                reinterpret_cast<const unsigned char*>(encoded.data()),
                                static_cast<int>(encoded.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes; drop them.
  std::size_t len = static_cast<std::size_t>(n);
  for (std::size_t i = encoded.size(); i > 0 && encoded[i - 1] == '='; --i) --len;
  decoded.resize(len);
  const std::size_t colon = decoded.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::pair{decoded.substr(0, colon), decoded.substr(colon + 1)};
}

}  // namespace icewarden
