#include "health/uuid_v7.h"

#include <cctype>
#include <memory>
#include <random>

namespace icewarden {

RandomBits SystemRandomBits() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine] { return (*engine)(); };
}

std::string NewUuidV7(UnixMillis now, const RandomBits& random) {
  std::uint8_t b[16];
  auto ms = static_cast<std::uint64_t>(now);
  for (int i = 0; i < 6; ++i) b[i] = static_cast<std::uint8_t>(ms >> (8 * (5 - i)));
  std::uint64_t r1 = random();
  std::uint64_t r2 = random();
  for (int i = 0; i < 2; ++i) b[6 + i] = static_cast<std::uint8_t>(r1 >> (8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = static_cast<std::uint8_t>(r2 >> (8 * i));
  b[6] = static_cast<std::uint8_t>(0x70 | (b[6] & 0x0F));  // version 7
  b[8] = static_cast<std::uint8_t>(0x80 | (b[8] & 0x3F));  // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[b[i] >> 4]);
    out.push_back(kHex[b[i] & 0x0F]);
  }
  return out;
}

std::optional<UnixMillis> UuidV7Millis(std::string_view uuid) {
  if (uuid.size() != 36 || uuid[8] != '-' || uuid[13] != '-' || uuid[14] != '7') {
    return std::nullopt;
  }
  std::uint64_t ms = 0;
  for (char c : std::string(uuid.substr(0, 8)) + std::string(uuid.substr(9, 4))) {
    int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
            : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                        : -1;
    if (v < 0) return std::nullopt;
    ms = ms << 4 | static_cast<std::uint64_t>(v);
  }
  return static_cast<UnixMillis>(ms);
}

}  // namespace icewarden
