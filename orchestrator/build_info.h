// What this build is: the project's version (CMakeLists.txt) and the git revision it was built
// from (`git describe --always --dirty`, "unknown" outside a checkout), as `--version` and
// icewarden_build_info{version,revision} on both /metrics pages report them. Defined in a
// file the build generates (orchestrator/build_info.cmake).
#pragma once

namespace icewarden {

const char* BuildVersion();
const char* BuildRevision();

}  // namespace icewarden
