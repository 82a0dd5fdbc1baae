// The table layout shared by the store crash writer (tests/helpers/store_crash_writer.cpp)
// and the crash test that kills it (tests/crash/store_crash_test.cpp).
//
// 5,000 tables in 10 groups of 500; a group is one namespace, crash.gNN, and every batch the
// writer commits moves exactly one whole group. So after any crash, all-or-nothing is
// checkable from the data alone: the tables of a group all have the same epoch and owner.
// A group's first claim goes to region-a at epoch 1 and every batch flips the owner, so an
// odd epoch means region-a and an even one region-b.
#pragma once

#include <cstdio>
#include <string>

#include "state/types.h"

namespace icewarden::testing {

inline constexpr int kCrashGroups = 10;
inline constexpr int kCrashTablesPerGroup = 500;
inline constexpr const char* kCrashFirstOwner = "region-a";
inline constexpr const char* kCrashSecondOwner = "region-b";

inline std::string CrashGroupName(int group) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "g%02d", group);
  return buf;
}

inline TableIdent CrashTable(int group, int index) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "t%04d", index);
  return TableIdent{{"crash", CrashGroupName(group)}, buf};
}

// The audit target of the batch that moves `group`.
inline std::string CrashGroupTarget(int group) { return "crash." + CrashGroupName(group); }

inline const char* CrashOwnerAtEpoch(Epoch epoch) {
  return epoch % 2 == 1 ? kCrashFirstOwner : kCrashSecondOwner;
}

}  // namespace icewarden::testing
