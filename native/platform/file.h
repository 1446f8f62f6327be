// The operating-system file calls of the native reader and writer, one small
// file per platform (file_posix.cc: Linux, macOS, the BSDs; file_windows.cc:
// Windows); nothing else in native/ calls open, fstat, mmap, read, write or
// close directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace profpack {
namespace platform {

// Whether MapRead can work on this platform (reported as backend.features.mmap).
bool CanMap();

// A file descriptor on POSIX, a HANDLE on Windows; -1 when invalid on both.
using Descriptor = intptr_t;

// The descriptor behind a number from Node's fs.open: itself on POSIX; on
// Windows Node's fd indexes its own C runtime's table, whose HANDLE libuv
// gives back. -1 (with `err`) when it names no open file. The caller does not
// own the result: Node closes it.
Descriptor FromNodeFd(int fd, int& err);

// Opens `path` read-only; returns a descriptor, or -1 with `err` set (an errno value).
Descriptor OpenRead(const std::string& path, int& err);

struct FileInfo {
  uint64_t size = 0;
  bool regular = false;
};

// Size and kind of an open file; false with `err` set when the call fails.
bool Stat(Descriptor fd, FileInfo& info, int& err);

// Maps `size` bytes of `fd` read-only, advised for a sequential read (huge
// pages when `hugePages`), every page faulted in now when `populate`; nullptr
// when mapping fails.
const uint8_t* MapRead(Descriptor fd, size_t size, bool hugePages, bool populate);
void Unmap(const uint8_t* data, size_t size);

// Drops the resident pages of [data, data + size) of a MapRead mapping
// (page-aligned): they stop counting in the process's memory and are read
// again from the file if touched.
void ReleasePages(const uint8_t* data, size_t size);

// Reads up to `size` bytes at `offset`, retrying on EINTR; returns the count
// (0 at end of file) or -1 with `err` set.
int64_t ReadAt(Descriptor fd, uint8_t* out, size_t size, uint64_t offset, int& err);

// Writes up to `size` bytes at `offset`, or at the current position (which
// then advances) when `offset` is negative; a positional write leaves the
// current position where it was. Returns the count or -1 with `err` set (an
// errno value), retrying on EINTR.
int64_t Write(Descriptor fd, const uint8_t* data, size_t size, int64_t offset, int& err);

void Close(Descriptor fd);

}  // namespace platform
}  // namespace profpack
