// File access of the Tachyon reader; see reader_file.h.
#include "tachyon/read/reader_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/error_codes.h"
#include "common/format_error.h"
#include "platform/file.h"

namespace profpack {
namespace tachyon {
namespace {

[[noreturn]] void IoError(const std::string& path, const char* what, int err) {
  throw FormatError(codes::kTachyonIo, "cannot " + std::string(what) + " " + path + ": " + std::strerror(err));
}

}  // namespace

ReaderFile::ReaderFile(const std::string& path) {
  int err = 0;
  const platform::Descriptor fd = platform::OpenRead(path, err);
  if (fd < 0) IoError(path, "open", err);
  platform::FileInfo info;
  if (!platform::Stat(fd, info, err)) {
    platform::Close(fd);
    IoError(path, "stat", err);
  }
  size_ = static_cast<size_t>(info.size);
  try {
    Load(fd, path);
  } catch (...) {
    platform::Close(fd);
    throw;
  }
  platform::Close(fd);  // a mapping stays valid without the descriptor
}

ReaderFile::ReaderFile(platform::Descriptor fd, size_t size, const std::string& path) {
  size_ = size;
  Load(fd, path);
}

void ReaderFile::Load(platform::Descriptor fd, const std::string& path) {
  if (size_ == 0) return;  // nothing to map: the open stage reports "File too small for header"
  if (const uint8_t* map = platform::MapRead(fd, size_, size_ >= kHugePageThreshold, size_ < kStreamFromSize)) {
    data_ = map;
    mapped_ = true;
    return;
  }
  // Mapping failed or is unavailable (no address space, a file system without mmap): read it whole.
  owned_ = static_cast<uint8_t*>(std::malloc(size_));
  if (!owned_) IoError(path, "allocate memory for", ENOMEM);
  size_t done = 0;
  int err = 0;
  while (done < size_) {
    const int64_t n = platform::ReadAt(fd, owned_ + done, size_ - done, done, err);
    if (n <= 0) {
      std::free(owned_);
      owned_ = nullptr;
      // A file that shrank since its size was measured reads short: that is a change, not an I/O error.
      if (n == 0)
        throw FormatError(codes::kTachyonFileChanged,
                          "the file changed while it was read: " + path + " is shorter than when it was opened");
      IoError(path, "read", err);
    }
    done += static_cast<size_t>(n);
  }
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

void ReaderFile::ReleaseBefore(size_t offset) {
  if (!mapped_ || closed_ || size_ < kStreamFromSize) return;
  const size_t end = offset & ~(kReleaseStep - 1);  // a multiple of the page size too
  if (end > size_) return;
  if (end < released_) released_ = 0;  // a new replay from the start faulted them in again
  if (end == released_) return;
  platform::ReleasePages(data_ + released_, end - released_);
  released_ = end;
}

ReaderFile::~ReaderFile() { Close(); }

}  // namespace tachyon
}  // namespace profpack
