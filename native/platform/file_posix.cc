// POSIX implementation of platform/file.h.
#include "platform/file.h"

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

namespace profpack {
namespace platform {

bool CanMap() { return true; }

Descriptor FromNodeFd(int fd, int& err) {
  if (fd < 0) err = EBADF;
  return fd < 0 ? -1 : fd;
}

Descriptor OpenRead(const std::string& path, int& err) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) err = errno;
  return fd;
}

bool Stat(Descriptor fd, FileInfo& info, int& err) {
  struct stat st;
#if defined(__linux__) && defined(SYS_fstat)
  // The system call itself: glibc 2.33+ headers turn fstat() into fstat64@GLIBC_2.33,
  // which would stop the prebuilds loading on glibc 2.28. The kernel's struct stat
  // is glibc's on x86-64 and arm64.
  const int rc = static_cast<int>(::syscall(SYS_fstat, static_cast<int>(fd), &st));
#else
  const int rc = ::fstat(static_cast<int>(fd), &st);
#endif
  if (rc != 0) {
    err = errno;
    return false;
  }
  info.size = static_cast<uint64_t>(st.st_size);
  info.regular = S_ISREG(st.st_mode);
  return true;
}

const uint8_t* MapRead(Descriptor fd, size_t size, bool hugePages, bool populate) {
  int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
  if (populate) flags |= MAP_POPULATE;  // fault every page in now rather than in the decoding loop
#else
  (void)populate;
#endif
  void* map = ::mmap(nullptr, size, PROT_READ, flags, static_cast<int>(fd), 0);
  if (map == MAP_FAILED) return nullptr;
  (void)::madvise(map, size, MADV_SEQUENTIAL);
  (void)::madvise(map, size, MADV_WILLNEED);
#ifdef MADV_HUGEPAGE
  if (hugePages) (void)::madvise(map, size, MADV_HUGEPAGE);
#else
  (void)hugePages;
#endif
  return static_cast<const uint8_t*>(map);
}

void Unmap(const uint8_t* data, size_t size) { ::munmap(const_cast<uint8_t*>(data), size); }

void ReleasePages(const uint8_t* data, size_t size) {
  // A private read-only mapping never dirties its pages: dropping them loses nothing.
  (void)::madvise(const_cast<uint8_t*>(data), size, MADV_DONTNEED);
}

int64_t ReadAt(Descriptor fd, uint8_t* out, size_t size, uint64_t offset, int& err) {
  for (;;) {
    const ssize_t n = ::pread(static_cast<int>(fd), out, size, static_cast<off_t>(offset));
    if (n >= 0) return n;
    if (errno != EINTR) {
      err = errno;
      return -1;
    }
  }
}

int64_t Write(Descriptor fd, const uint8_t* data, size_t size, int64_t offset, int& err) {
  for (;;) {
    const ssize_t n = offset < 0 ? ::write(static_cast<int>(fd), data, size)
                                 : ::pwrite(static_cast<int>(fd), data, size, static_cast<off_t>(offset));
    if (n >= 0) return n;
    if (errno != EINTR) {
      err = errno;
      return -1;
    }
  }
}

void Close(Descriptor fd) { ::close(static_cast<int>(fd)); }

}  // namespace platform
}  // namespace profpack

#endif
