# Included by ctest after gtest_discover_tests' own file for icewarden_etcd_tests (which sets
# icewarden_etcd_tests_TESTS): the partition tests in network namespaces get the label netns
# too, so `ctest -L netns` runs them alone (they need root; see tests/etcd/netns_lab.h).
foreach(test IN LISTS icewarden_etcd_tests_TESTS)
  if(test MATCHES "^Netns")
    set_tests_properties("${test}" PROPERTIES LABELS "etcd;integration;netns")
  endif()
endforeach()
