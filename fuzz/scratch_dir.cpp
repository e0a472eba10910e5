#include "scratch_dir.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace onnx_tv::fuzz {

namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "onnx_tv_fuzz_XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a folder " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void ScratchDir::clear() const {
  for (const auto& entry : fs::directory_iterator(path_)) fs::remove_all(entry.path());
}

void ScratchDir::write(const std::string& relative, std::string_view bytes) const {
  const fs::path p = path_ / relative;
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace onnx_tv::fuzz
