// UUIDv7 (RFC 9562): the spec's required format for Idempotency-Key. A UUIDv7 starts with
// the Unix time in milliseconds, so keys sort by creation time and their age is readable.
//
// Randomness is part of the environment (like the Clock and the transport): tests pass a
// deterministic source, production passes SystemRandomBits().
// Thread-safety: NewUuidV7 is a pure function of its arguments; SystemRandomBits() returns
// a source that must be used from one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "state/clock.h"

namespace icewarden {

// Returns 64 uniformly random bits per call.
using RandomBits = std::function<std::uint64_t()>;

// Seeded once from std::random_device.
RandomBits SystemRandomBits();

// "0190f1a2-7b3c-7d4e-9f60-1a2b3c4d5e6f": 48-bit `now`, version 7, 74 random bits.
std::string NewUuidV7(UnixMillis now, const RandomBits& random);

// The creation time of a UUIDv7 (its first 48 bits); nullopt if `uuid` is not a UUIDv7.
std::optional<UnixMillis> UuidV7Millis(std::string_view uuid);

}  // namespace icewarden
