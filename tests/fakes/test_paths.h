// Paths the tests need: the built icewarden binary, helper binaries, the source tree, and
// a fresh temporary folder per test.
#pragma once

#include <string>

namespace icewarden::testing {

std::string IcewardenBinary();
// A helper executable built from tests/helpers/NAME.cpp, next to the test binaries.
std::string HelperBinary(const std::string& name);
std::string SourceDir();
// A new empty folder under $TMPDIR (or /tmp), removed by the caller or left for debugging.
std::string MakeTempDir(const std::string& prefix);

}  // namespace icewarden::testing
