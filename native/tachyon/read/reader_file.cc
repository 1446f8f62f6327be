// File access of the Tachyon reader; see reader_file.h.
#include "tachyon/read/reader_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/format_error.h"
#include "platform/file.h"

namespace profpack {
namespace tachyon {
namespace {

[[noreturn]] void IoError(const std::string& path, const char* what, int err) {
  throw FormatError("ERR_TACHYON_IO", "cannot " + std::string(what) + " " + path + ": " + std::strerror(err));
}

}  // namespace

ReaderFile::ReaderFile(const std::string& path) {
  int err = 0;
  const int fd = platform::OpenRead(path, err);
  if (fd < 0) IoError(path, "open", err);
  platform::FileInfo info;
  if (!platform::Stat(fd, info, err)) {
    platform::Close(fd);
    IoError(path, "stat", err);
  }
  size_ = static_cast<size_t>(info.size);
  if (size_ == 0) {
    platform::Close(fd);
    return;  // nothing to map: the open stage reports "File too small for header"
  }
  if (const uint8_t* map = platform::MapRead(fd, size_, size_ >= kHugePageThreshold)) {
    data_ = map;
    mapped_ = true;
    platform::Close(fd);  // the mapping stays valid without the descriptor
    return;
  }
  // Mapping failed or is unavailable (a special file, no address space): read it whole.
  owned_ = static_cast<uint8_t*>(std::malloc(size_));
  if (!owned_) {
    platform::Close(fd);
    IoError(path, "allocate memory for", ENOMEM);
  }
  size_t done = 0;
  while (done < size_) {
    const int64_t n = platform::ReadAt(fd, owned_ + done, size_ - done, done, err);
    if (n <= 0) {
      platform::Close(fd);
      std::free(owned_);
      owned_ = nullptr;
      IoError(path, "read", n < 0 ? err : EIO);
    }
    done += static_cast<size_t>(n);
  }
  platform::Close(fd);
  data_ = owned_;
}

void ReaderFile::Close() {
  if (closed_) return;
  closed_ = true;
  if (mapped_ && data_) platform::Unmap(data_, size_);
  std::free(owned_);
  owned_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

ReaderFile::~ReaderFile() { Close(); }

}  // namespace tachyon
}  // namespace profpack
