// Runs a harness on saved inputs without libFuzzer: the normal build links each harness with
// this main, and ctest runs it on every crasher kept in fuzz/regressions/<harness>/, so a fixed
// crash stays fixed in every build, sanitizers or not. Arguments are files or folders (every
// file inside, recursively).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness.h"

namespace fs = std::filesystem;

namespace {

int run_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", p.c_str());
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("running %s (%zu bytes)\n", p.c_str(), bytes.size());
  std::fflush(stdout);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i])) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  int failed = 0;
  for (const fs::path& p : files) failed += run_file(p);
  std::printf("%zu inputs, none crashed\n", files.size() - size_t(failed));
  return failed ? 1 : 0;
}
