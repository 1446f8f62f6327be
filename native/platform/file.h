// The operating-system file calls of the native reader, one small file per
// platform (file_posix.cc: Linux, macOS, the BSDs). A Windows port adds
// file_windows.cc with the same functions; nothing else in native/ calls
// open, fstat, mmap, read or close directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace profpack {
namespace platform {

// Whether MapRead can work on this platform (reported as backend.features.mmap).
bool CanMap();

// Opens `path` read-only; returns a descriptor, or -1 with `err` set (an errno value).
int OpenRead(const std::string& path, int& err);

struct FileInfo {
  uint64_t size = 0;
  bool regular = false;
};

// Size and kind of an open file; false with `err` set when the call fails.
bool Stat(int fd, FileInfo& info, int& err);

// Maps `size` bytes of `fd` read-only, advised for a sequential read (huge
// pages when `hugePages`), every page faulted in now when `populate`; nullptr
// when mapping fails.
const uint8_t* MapRead(int fd, size_t size, bool hugePages, bool populate);
void Unmap(const uint8_t* data, size_t size);

// Drops the resident pages of [data, data + size) of a MapRead mapping
// (page-aligned): they stop counting in the process's memory and are read
// again from the file if touched.
void ReleasePages(const uint8_t* data, size_t size);

// Reads up to `size` bytes at `offset`, retrying on EINTR; returns the count
// (0 at end of file) or -1 with `err` set.
int64_t ReadAt(int fd, uint8_t* out, size_t size, uint64_t offset, int& err);

void Close(int fd);

}  // namespace platform
}  // namespace profpack
