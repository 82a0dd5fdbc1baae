// The lab's MetadataCache: by metadata-location, least recently used out first, a Put of a
// known location replaces its entry. A cache that kept a stale or evicted the wrong entry
// would serve a table's old metadata or re-parse every load.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "examples/lab/metadata_cache.h"

namespace icewarden::lab {
namespace {

CachedMetadata Entry(const std::string& location, int version) {
  return {location, std::make_shared<const nlohmann::json>(nlohmann::json{{"v", version}}),
          std::make_shared<const std::string>("{\"v\":" + std::to_string(version) + "}"), nullptr};
}

TEST(LabMetadataCache, EvictsTheLeastRecentlyUsedAndReplacesByLocation) {
  MetadataCache cache(2);
  cache.Put(Entry("a", 1));
  cache.Put(Entry("b", 1));
  ASSERT_TRUE(cache.Find("a").has_value());  // "a" is now the most recently used
  cache.Put(Entry("c", 1));                  // so "b" goes
  EXPECT_FALSE(cache.Find("b").has_value());
  ASSERT_TRUE(cache.Find("a").has_value());
  ASSERT_TRUE(cache.Find("c").has_value());

  CachedMetadata refs = Entry("a", 1);
  refs.refs_text = std::make_shared<const std::string>("{\"refs\":1}");
  cache.Put(refs);  // the same location: replaced in place, nothing evicted
  auto a = cache.Find("a");
  ASSERT_TRUE(a.has_value());
  ASSERT_NE(a->refs_text, nullptr);
  EXPECT_EQ(*a->refs_text, "{\"refs\":1}");
  EXPECT_TRUE(cache.Find("c").has_value());
}

TEST(LabMetadataCache, ZeroCapacityKeepsNothing) {
  MetadataCache cache(0);
  cache.Put(Entry("a", 1));
  EXPECT_FALSE(cache.Find("a").has_value());
}

}  // namespace
}  // namespace icewarden::lab
