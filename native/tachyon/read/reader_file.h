// A Tachyon file opened for reading: mapped as CPython 3.15.2's reader maps it
// (mmap + MAP_POPULATE on Linux, madvise SEQUENTIAL and WILLNEED, HUGEPAGE
// from 32 MiB), or read() into memory where mapping is unavailable or fails.
// Unlike CPython, a file from 8 MiB is not populated, and replay drops the
// pages it has decoded (ReleaseBefore), so a large file's mapping does not add
// its whole size to the process's peak memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error_codes.h"
#include "platform/file.h"

namespace profpack {
namespace tachyon {

class ReaderFile {
 public:
  // Throws FormatError(codes::kTachyonIo, ...) when the file cannot be opened or read.
  explicit ReaderFile(const std::string& path);
  // Maps `size` bytes of a descriptor the caller opened and keeps (and closes):
  // the JS layer opens, checks the file type and watches for changes (reader-file.ts).
  ReaderFile(platform::Descriptor fd, size_t size, const std::string& path);
  ~ReaderFile();
  ReaderFile(const ReaderFile&) = delete;
  ReaderFile& operator=(const ReaderFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool mapped() const { return mapped_; }
  bool closed() const { return closed_; }
  void Close();
  // The bytes before `offset` are read: a mapped file of kStreamFromSize or more drops
  // their pages once kReleaseStep of them have accumulated (no call for smaller files).
  void ReleaseBefore(size_t offset);

 private:
  void Load(platform::Descriptor fd, const std::string& path);
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  bool closed_ = false;
  uint8_t* owned_ = nullptr;  // the read() fallback
  size_t released_ = 0;       // pages below this offset were dropped
};

// Large files get transparent huge pages, as in CPython (files of 32 MiB and more).
inline constexpr size_t kHugePageThreshold = size_t{32} << 20;
// Files from this size are mapped without MAP_POPULATE and released behind the decoder.
inline constexpr size_t kStreamFromSize = size_t{8} << 20;
inline constexpr size_t kReleaseStep = size_t{2} << 20;

}  // namespace tachyon
}  // namespace profpack
