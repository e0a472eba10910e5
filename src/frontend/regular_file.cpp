#include "frontend/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace onnx_tv::frontend::detail {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

RegularFile::RegularFile(const std::string& path, const std::string& expected) : path_(path) {
  // stat first: opening a FIFO for reading would wait for a writer.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw InputError(path + ": no such file");
    throw InputError(path + ": cannot be read (" + std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    throw InputError(path + ": is " + kind_of(st.st_mode) + ", expected " + expected);
  }
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw InputError(path + ": cannot be opened (" + std::strerror(errno) + ")");
  // The path may have been replaced between stat and open: what counts is the file opened.
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(path + ": is not a regular file, expected " + expected);
  }
  size_ = uint64_t(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RegularFile::read_all(uint64_t max_bytes, const std::string& limit_reason) {
  if (size_ > max_bytes) {
    throw InputError(path_ + ": is " + std::to_string(size_) + " bytes, more than " +
                     std::to_string(max_bytes) + " (" + limit_reason + ")");
  }
  // Read to the end rather than trusting the size: files under /proc report 0 bytes, and a file
  // may grow while it is read; it may still not pass the limit.
  std::string out;
  out.resize(size_t(size_));
  size_t used = 0;
  for (;;) {
    if (used == out.size()) {
      if (out.size() > max_bytes) {
        throw InputError(path_ + ": holds more than " + std::to_string(max_bytes) + " bytes (" +
                         limit_reason + ")");
      }
      out.resize(out.size() + 65536);
    }
    const ssize_t n = ::read(fd_, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path_ + ": cannot be read (" + std::strerror(errno) + ")");
    if (n == 0) break;
    used += size_t(n);
  }
  out.resize(used);
  if (used > max_bytes) {
    throw InputError(path_ + ": holds more than " + std::to_string(max_bytes) + " bytes (" +
                     limit_reason + ")");
  }
  return out;
}

std::string RegularFile::read_range(uint64_t offset, uint64_t length) {
  if (offset > size_ || length > size_ - offset) {
    throw InputError(path_ + ": the range [" + std::to_string(offset) + ", " +
                     std::to_string(offset) + " + " + std::to_string(length) +
                     ") lies outside the file (" + std::to_string(size_) + " bytes)");
  }
  std::string out(size_t(length), '\0');
  size_t used = 0;
  while (used < length) {
    const ssize_t n = ::pread(fd_, out.data() + used, out.size() - used, off_t(offset + used));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw InputError(path_ + ": cannot be read" +
                       (n < 0 ? " (" + std::string(std::strerror(errno)) + ")"
                              : std::string(" (it ended early)")));
    }
    used += size_t(n);
  }
  return out;
}

}  // namespace onnx_tv::frontend::detail
