// Config sections the end-to-end tests of `serve` share: the part of a config file that is
// not what a test is about.
#pragma once

namespace icewarden::testing {

// A SQLite state file beside the config, and two regions whose catalogs refuse connections
// (port 9, discard): serve starts, probes fail, and nothing outside the test is reached.
inline constexpr const char* kUnreachableRegionsYaml = R"(state:
  path: state.db
regions:
  - name: us-east-1
    catalog_uri: http://127.0.0.1:9/catalog
  - name: eu-central-1
    catalog_uri: http://127.0.0.1:9/catalog
ownership:
  default_owner: us-east-1
)";

}  // namespace icewarden::testing
