// orchestrator/README.md orders the rooms of orchestrator/: a file may include its own room
// and the rooms above it, never one below. This reads the README's table and every source
// file, so that the order written down is the order kept.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "tests/fakes/test_paths.h"

namespace icewarden {
namespace {

namespace fs = std::filesystem;

struct Rooms {
  std::map<std::string, int> rank;  // "api/" -> 7; "" -> the root's row; "main.cpp" -> its row
};

Rooms ReadRooms(const std::string& readme) {
  Rooms r;
  std::ifstream in(readme);
  const std::regex row(R"(^\| (\d+) \| ([^|]*)\|)");
  const std::regex name("`([^`]+)`");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    const int n = std::stoi(m[1]);
    const std::string cell = m[2];
    if (cell.find("the root") != std::string::npos) r.rank[""] = n;
    for (std::sregex_iterator it(cell.begin(), cell.end(), name), end; it != end; ++it) {
      const std::string room = (*it)[1];
      if (room.back() == '/' || room == "main.cpp") r.rank[room] = n;
    }
  }
  return r;
}

// The room of "orchestrator/api/api.h" ("api/"), "orchestrator/main.cpp" ("main.cpp"), or
// another file at the root ("").
std::string RoomOf(const std::string& path) {
  const std::string rest = path.substr(std::string("orchestrator/").size());
  const std::size_t slash = rest.find('/');
  if (slash != std::string::npos) return rest.substr(0, slash + 1);
  return rest == "main.cpp" ? "main.cpp" : "";
}

TEST(RoomOrderTest, EveryRoomIsInTheTableAndNoIncludeRunsUpward) {
  const std::string src = testing::SourceDir();
  const Rooms rooms = ReadRooms(src + "/orchestrator/README.md");
  ASSERT_GE(rooms.rank.size(), 10u) << "the README's table was not read";
  const std::regex include(R"re(#include "(orchestrator/[^"]+)")re");
  int files = 0, includes = 0;
  for (const auto& e : fs::recursive_directory_iterator(src + "/orchestrator")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    const std::string path = fs::relative(e.path(), src).string();
    const std::string room = RoomOf(path);
    ASSERT_TRUE(rooms.rank.count(room))
        << path << ": room '" << room << "' is not in orchestrator/README.md's table";
    ++files;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string body = text.str();
    for (std::sregex_iterator it(body.begin(), body.end(), include), end; it != end; ++it) {
      const std::string target = (*it)[1];
      const std::string to = RoomOf(target);
      ASSERT_TRUE(rooms.rank.count(to)) << path << " includes " << target;
      ++includes;
      EXPECT_LE(rooms.rank.at(to), rooms.rank.at(room))
          << path << " (room " << rooms.rank.at(room) << ") includes " << target << " (room "
          << rooms.rank.at(to) << "), which is below it in orchestrator/README.md";
    }
  }
  EXPECT_GT(files, 100);
  EXPECT_GT(includes, 200);
}

}  // namespace
}  // namespace icewarden
