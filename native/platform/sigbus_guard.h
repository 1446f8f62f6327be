// Reading a mapped file that shrinks underneath raises SIGBUS on the page past
// the new end (a file rotated by an agent, a new ProfileWriter on the same
// path). The reader keeps mmap, where it is fastest, and runs each read of
// mapped bytes under this guard: a SIGBUS on the guarded thread returns false
// instead of killing the process. Signals outside a guarded call go to the
// handler that was installed before ours (or the default action). Windows:
// sigbus_windows.cc catches the same fault (EXCEPTION_IN_PAGE_ERROR).
#pragma once

namespace profpack {

// Runs fn(arg); false if a SIGBUS interrupted it. Whatever fn was building is
// then in an unknown state: the caller must discard it (no destructors ran
// for objects created inside fn, so fn must not own heap memory on its stack).
bool CallCatchingSigbus(void (*fn)(void*), void* arg);

// Convenience over CallCatchingSigbus for a lambda.
template <typename F>
bool CatchingSigbus(F&& f) {
  return CallCatchingSigbus([](void* p) { (*static_cast<F*>(p))(); }, &f);
}

}  // namespace profpack
