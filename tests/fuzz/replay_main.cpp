// The fuzz targets outside libFuzzer: runs every file named on the command line, or found
// under a folder named there, through LLVMFuzzerTestOneInput once. The normal build links
// each target with this, so the seeds and every input that once crashed a target (in
// tests/fuzz/regressions/) run in the unit suite with GCC. Exit 1 when there was no input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional, as in libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

int RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) inputs += RunFile(f);
    } else if (std::filesystem::is_regular_file(arg)) {
      inputs += RunFile(arg);
    } else {
      std::cerr << arg << ": no such file or folder\n";
      return 1;
    }
  }
  std::cout << inputs << " inputs ran\n";
  return inputs > 0 ? 0 : 1;
}
