#pragma once
// A folder of this process's own where harnesses write the files a fuzz input describes: the
// loaders read folders and paths, not memory. Made once, emptied before every input, removed
// when the process ends.
#include <filesystem>
#include <string>
#include <string_view>

namespace onnx_tv::fuzz {

class ScratchDir {
 public:
  ScratchDir();  // under $TMPDIR (default /tmp)
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Removes everything inside, keeping the folder itself.
  void clear() const;
  // Writes `bytes` to path()/relative, making the folders on the way.
  void write(const std::string& relative, std::string_view bytes) const;

 private:
  std::filesystem::path path_;
};

}  // namespace onnx_tv::fuzz
