// File access of the Tachyon reader; see reader_file.h.
#include "tachyon/read/reader_file.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/format_error.h"

#if defined(__linux__) || defined(__APPLE__) || defined(__unix__)
#define PROFPACK_HAVE_MMAP 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#define PROFPACK_HAVE_MMAP 0
#endif

namespace profpack {
namespace tachyon {
namespace {

[[noreturn]] void IoError(const std::string& path, const char* what, int err) {
  throw FormatError("ERR_TACHYON_IO", "cannot " + std::string(what) + " " + path + ": " + std::strerror(err));
}

}  // namespace

#if PROFPACK_HAVE_MMAP
ReaderFile::ReaderFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) IoError(path, "open", errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    IoError(path, "stat", err);
  }
  size_ = static_cast<size_t>(st.st_size);
  try {
    Load(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // a mapping stays valid without the descriptor
}

ReaderFile::ReaderFile(int fd, size_t size, const std::string& path) {
  size_ = size;
  Load(fd, path);
}

void ReaderFile::Load(int fd, const std::string& path) {
  if (size_ == 0) return;  // nothing to map: the open stage reports "File too small for header"
  int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
  flags |= MAP_POPULATE;  // fault every page in now rather than in the decoding loop
#endif
  void* map = ::mmap(nullptr, size_, PROT_READ, flags, fd, 0);
  if (map != MAP_FAILED) {
    (void)::madvise(map, size_, MADV_SEQUENTIAL);
    (void)::madvise(map, size_, MADV_WILLNEED);
#ifdef MADV_HUGEPAGE
    if (size_ >= kHugePageThreshold) (void)::madvise(map, size_, MADV_HUGEPAGE);
#endif
    data_ = static_cast<const uint8_t*>(map);
    mapped_ = true;
    return;
  }
  // Mapping failed (no address space, a file system without mmap): pread() it whole.
  owned_ = static_cast<uint8_t*>(std::malloc(size_));
  if (!owned_) IoError(path, "allocate memory for", ENOMEM);
  size_t done = 0;
  while (done < size_) {
    const ssize_t n = ::pread(fd, owned_ + done, size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A file that shrank since its size was measured reads short: that is a change, not an I/O error.
      const bool shrank = n == 0;
      const int err = n < 0 ? errno : EIO;
      std::free(owned_);
      owned_ = nullptr;
      if (shrank) throw FormatError("ERR_TACHYON_FILE_CHANGED", "the file changed while it was read: " + path + " is shorter than when it was opened");
      IoError(path, "read", err);
    }
    done += static_cast<size_t>(n);
  }
  data_ = owned_;
}
#else
ReaderFile::ReaderFile(const std::string& path) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) IoError(path, "open", errno);
  if (std::fseek(fp, 0, SEEK_END) != 0) {
    std::fclose(fp);
    IoError(path, "seek in", errno);
  }
  const long end = std::ftell(fp);
  std::fseek(fp, 0, SEEK_SET);
  size_ = end < 0 ? 0 : static_cast<size_t>(end);
  if (size_ > 0) {
    owned_ = static_cast<uint8_t*>(std::malloc(size_));
    if (!owned_ || std::fread(owned_, 1, size_, fp) != size_) {
      std::fclose(fp);
      std::free(owned_);
      owned_ = nullptr;
      IoError(path, "read", EIO);
    }
  }
  std::fclose(fp);
  data_ = owned_;
}
#endif

void ReaderFile::Close() {
  if (closed_) return;
  closed_ = true;
#if PROFPACK_HAVE_MMAP
  if (mapped_ && data_) ::munmap(const_cast<uint8_t*>(data_), size_);
#endif
  std::free(owned_);
  owned_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

ReaderFile::~ReaderFile() { Close(); }

}  // namespace tachyon
}  // namespace profpack
