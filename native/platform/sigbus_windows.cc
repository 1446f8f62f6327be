// The Windows side of sigbus_guard.h. Reading a mapped view past the end of a
// file that shrank raises EXCEPTION_IN_PAGE_ERROR (Windows itself refuses to
// truncate a file while a view of it is mapped, with ERROR_USER_MAPPED_FILE,
// but a file on a network share, or one truncated from outside Windows, as
// under Wine, still can). mingw
// has no __try: a vectored exception handler sees the fault first and, on a
// thread inside a guarded call, resumes it in Escape, which jumps back to the
// guard (__builtin_setjmp keeps no state but the stack and frame pointers and
// a resume address, so nothing of the C runtime is involved). Other
// exceptions, and faults on unguarded threads, go on to the next handler.
#include "platform/sigbus_guard.h"

#if defined(_WIN32) && defined(__GNUC__)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

namespace profpack {
namespace {

// A TLS slot rather than thread_local: mingw's emulated TLS may allocate on a
// thread's first access, which an exception handler must not do.
DWORD jumpSlot = TLS_OUT_OF_INDEXES;

using JumpBuffer = void* [5];  // what __builtin_setjmp needs

__attribute__((noinline, noreturn)) void Escape() {
  __builtin_longjmp(static_cast<void**>(::TlsGetValue(jumpSlot)), 1);
}

// A read of a mapped file's page that is no longer backed: Windows reports
// EXCEPTION_IN_PAGE_ERROR; Wine turns the SIGBUS of its own mapping into a
// read access violation, told apart here by the page being a file view.
bool IsFileViewFault(const EXCEPTION_RECORD* record) {
  if (record->ExceptionCode == EXCEPTION_IN_PAGE_ERROR) return true;
  if (record->ExceptionCode != EXCEPTION_ACCESS_VIOLATION || record->NumberParameters < 2) return false;
  if (record->ExceptionInformation[0] != 0) return false;  // 0: a read
  MEMORY_BASIC_INFORMATION page;
  if (::VirtualQuery(reinterpret_cast<const void*>(record->ExceptionInformation[1]), &page, sizeof page) == 0)
    return false;
  return page.Type == MEM_MAPPED && page.State == MEM_COMMIT;
}

LONG CALLBACK OnException(EXCEPTION_POINTERS* pointers) {
  if (!IsFileViewFault(pointers->ExceptionRecord)) return EXCEPTION_CONTINUE_SEARCH;
  const DWORD lastError = ::GetLastError();  // TlsGetValue resets it
  void* const jump = ::TlsGetValue(jumpSlot);
  ::SetLastError(lastError);
  if (jump == nullptr) return EXCEPTION_CONTINUE_SEARCH;
  // Resume in Escape on the faulting thread's stack, below its frame, aligned
  // as at a call (rsp % 16 == 8), with its 32-byte shadow space to spare.
  CONTEXT* context = pointers->ContextRecord;
  context->Rsp = ((context->Rsp - 256) & ~DWORD64{15}) - 8;
  context->Rip = reinterpret_cast<DWORD64>(&Escape);
  return EXCEPTION_CONTINUE_EXECUTION;
}

bool Install() {
  jumpSlot = ::TlsAlloc();
  if (jumpSlot == TLS_OUT_OF_INDEXES) return false;
  return ::AddVectoredExceptionHandler(1, OnException) != nullptr;
}

// Kept out of line so that the frame __builtin_setjmp records stays valid for the whole call.
__attribute__((noinline)) bool RunGuarded(void (*fn)(void*), void* arg) {
  JumpBuffer jump;
  void* const outer = ::TlsGetValue(jumpSlot);
  if (__builtin_setjmp(jump) != 0) {
    ::TlsSetValue(jumpSlot, outer);
    return false;
  }
  ::TlsSetValue(jumpSlot, jump);
  fn(arg);
  ::TlsSetValue(jumpSlot, outer);
  return true;
}

}  // namespace

bool CallCatchingSigbus(void (*fn)(void*), void* arg) {
  static const bool installed = Install();
  if (!installed) {
    fn(arg);  // no guard available: a fault then ends the process, as without this file
    return true;
  }
  return RunGuarded(fn, arg);
}

}  // namespace profpack
#elif defined(_WIN32)
// Another compiler (MSVC builds at install): no guard, as on platforms without SIGBUS.
namespace profpack {
bool CallCatchingSigbus(void (*fn)(void*), void* arg) {
  fn(arg);
  return true;
}
}  // namespace profpack
#endif
