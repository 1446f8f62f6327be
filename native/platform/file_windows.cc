// Windows implementation of platform/file.h: CreateFileW, GetFileSizeEx,
// CreateFileMapping + MapViewOfFile, ReadFile and WriteFile on HANDLEs.
#include "platform/file.h"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cerrno>

namespace profpack {
namespace platform {
namespace {

// ReadFile and WriteFile take a DWORD count: larger requests go in pieces.
constexpr size_t kMaxTransfer = size_t{1} << 30;

// The errno value the callers report (their messages and codes are errno's).
int ErrnoOf(DWORD error) {
  switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_NAME:
    case ERROR_INVALID_DRIVE: return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION: return EACCES;
    case ERROR_INVALID_HANDLE: return EBADF;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY: return ENOMEM;
    case ERROR_WRITE_PROTECT: return EROFS;
    case ERROR_BROKEN_PIPE:
    case ERROR_NO_DATA: return EPIPE;
    case ERROR_FILE_TOO_LARGE: return EFBIG;
    case ERROR_INVALID_PARAMETER:
    case ERROR_NEGATIVE_SEEK: return EINVAL;
    case ERROR_DIRECTORY: return ENOTDIR;
    default: return EIO;
  }
}

HANDLE HandleOf(Descriptor fd) { return reinterpret_cast<HANDLE>(fd); }

OVERLAPPED At(uint64_t offset) {
  OVERLAPPED at = {};
  at.Offset = static_cast<DWORD>(offset);
  at.OffsetHigh = static_cast<DWORD>(offset >> 32);
  return at;
}

}  // namespace

bool CanMap() { return true; }

Descriptor FromNodeFd(int fd, int& err) {
  // libuv's uv_get_osfhandle, exported by node.exe (and by hosts embedding
  // Node). Found at run time, so the addon imports nothing from node.exe but N-API.
  using GetOsfHandle = HANDLE (*)(int);
  static const auto getOsfHandle = reinterpret_cast<GetOsfHandle>(
      reinterpret_cast<void*>(::GetProcAddress(::GetModuleHandleW(nullptr), "uv_get_osfhandle")));
  if (getOsfHandle == nullptr) {
    err = ENOSYS;
    return -1;
  }
  const HANDLE handle = fd < 0 ? INVALID_HANDLE_VALUE : getOsfHandle(fd);
  if (handle == INVALID_HANDLE_VALUE || handle == nullptr) {
    err = EBADF;
    return -1;
  }
  return reinterpret_cast<Descriptor>(handle);
}

Descriptor OpenRead(const std::string& path, int& err) {
  // Paths arrive as UTF-8 (N-API strings); Windows' wide API takes UTF-16.
  const int chars =
      ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.data(), static_cast<int>(path.size()), nullptr, 0);
  if (chars <= 0 && !path.empty()) {
    err = ENOENT;
    return -1;
  }
  std::wstring wide(static_cast<size_t>(chars), L'\0');
  ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path.data(), static_cast<int>(path.size()), &wide[0], chars);
  // Other processes may write, rename or delete it meanwhile, as on POSIX.
  const HANDLE handle =
      ::CreateFileW(wide.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                    OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_SEQUENTIAL_SCAN, nullptr);
  if (handle == INVALID_HANDLE_VALUE) {
    err = ErrnoOf(::GetLastError());
    return -1;
  }
  return reinterpret_cast<Descriptor>(handle);
}

bool Stat(Descriptor fd, FileInfo& info, int& err) {
  LARGE_INTEGER size;
  if (!::GetFileSizeEx(HandleOf(fd), &size)) {
    err = ErrnoOf(::GetLastError());
    return false;
  }
  info.size = static_cast<uint64_t>(size.QuadPart);
  info.regular = ::GetFileType(HandleOf(fd)) == FILE_TYPE_DISK;
  return true;
}

const uint8_t* MapRead(Descriptor fd, size_t size, bool hugePages, bool populate) {
  // Large pages need a privilege that ordinary accounts lack, and the first
  // touch faults pages in: both hints are for the POSIX mapping only.
  (void)hugePages;
  (void)populate;
  if (fd == -1) return nullptr;
  const HANDLE mapping = ::CreateFileMappingW(HandleOf(fd), nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (mapping == nullptr) return nullptr;
  // A view longer than the file (which shrank since it was measured) fails: the caller reads instead.
  void* view = ::MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, size);
  ::CloseHandle(mapping);  // the view keeps the section alive
  return static_cast<const uint8_t*>(view);
}

void Unmap(const uint8_t* data, size_t size) {
  (void)size;
  ::UnmapViewOfFile(data);
}

void ReleasePages(const uint8_t* data, size_t size) {
  // VirtualUnlock on pages that are not locked takes them out of the working
  // set (documented), the counterpart of MADV_DONTNEED for a read-only view.
  (void)::VirtualUnlock(const_cast<uint8_t*>(data), size);
}

int64_t ReadAt(Descriptor fd, uint8_t* out, size_t size, uint64_t offset, int& err) {
  if (fd == -1) {
    err = EBADF;
    return -1;
  }
  OVERLAPPED at = At(offset);
  DWORD got = 0;
  const DWORD want = static_cast<DWORD>(size < kMaxTransfer ? size : kMaxTransfer);
  if (!::ReadFile(HandleOf(fd), out, want, &got, &at)) {
    const DWORD error = ::GetLastError();
    if (error == ERROR_HANDLE_EOF) return 0;
    err = ErrnoOf(error);
    return -1;
  }
  return got;
}

int64_t Write(Descriptor fd, const uint8_t* data, size_t size, int64_t offset, int& err) {
  if (fd == -1) {
    err = EBADF;
    return -1;
  }
  const HANDLE handle = HandleOf(fd);
  const DWORD want = static_cast<DWORD>(size < kMaxTransfer ? size : kMaxTransfer);
  DWORD wrote = 0;
  if (offset < 0) {
    if (!::WriteFile(handle, data, want, &wrote, nullptr)) {
      err = ErrnoOf(::GetLastError());
      return -1;
    }
    return wrote;
  }
  // WriteFile at an offset also moves the file pointer (pwrite does not):
  // put it back, as libuv does for Node's positioned writes.
  LARGE_INTEGER zero = {}, position = {};
  if (!::SetFilePointerEx(handle, zero, &position, FILE_CURRENT)) {
    err = ErrnoOf(::GetLastError());
    return -1;
  }
  OVERLAPPED at = At(static_cast<uint64_t>(offset));
  const BOOL ok = ::WriteFile(handle, data, want, &wrote, &at);
  const DWORD error = ::GetLastError();
  ::SetFilePointerEx(handle, position, nullptr, FILE_BEGIN);
  if (!ok) {
    err = ErrnoOf(error);
    return -1;
  }
  return wrote;
}

void Close(Descriptor fd) { ::CloseHandle(HandleOf(fd)); }

}  // namespace platform
}  // namespace profpack

#endif
