#pragma once
// Private to the frontend: every file onnx-tv reads (models, plan.json, external data, tensor
// files) is opened here. Only regular files are read: a path may name a folder, a FIFO that
// blocks forever or a device that never ends (/dev/zero), and a regular file may be larger than
// what it should hold; each is an InputError naming the path before anything is allocated.
#include <cstdint>
#include <string>

namespace onnx_tv::frontend::detail {

// The most bytes protobuf parses in one message: a model above it must keep its large tensors
// as external data.
constexpr uint64_t kMaxModelBytes = (uint64_t(1) << 31) - 1;

class RegularFile {
 public:
  // Opens `path` (symbolic links followed) for reading. `expected` says what it should be, for
  // messages: "an ONNX model file". InputError when it is missing, a folder, or not a regular
  // file.
  RegularFile(const std::string& path, const std::string& expected);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return size_; }

  // The whole file; InputError when it is larger than `max_bytes` (`limit_reason` says why
  // that is the limit) or cannot be read.
  std::string read_all(uint64_t max_bytes, const std::string& limit_reason);

  // Bytes [offset, offset + length); InputError when the range is not inside the file.
  std::string read_range(uint64_t offset, uint64_t length);

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace onnx_tv::frontend::detail
