// The POSIX signal side of sigbus_guard.h (sigaction, sigsetjmp); Windows catches the same fault in sigbus_windows.cc.
#include "platform/sigbus_guard.h"

#if defined(__linux__) || defined(__APPLE__) || defined(__unix__)
#include <csetjmp>
#include <csignal>

namespace profpack {
namespace {

thread_local sigjmp_buf* tlJump = nullptr;
struct sigaction previous;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  if (tlJump != nullptr) siglongjmp(*tlJump, 1);
  // Not ours: behave as if we had never been installed.
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  if (previous.sa_handler == SIG_DFL) {
    // Returning re-executes the faulting access, which then takes the default action.
    ::signal(sig, SIG_DFL);
    return;
  }
  previous.sa_handler(sig);
}

void Install() {
  struct sigaction action = {};
  action.sa_sigaction = OnSigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &previous);
}

}  // namespace

bool CallCatchingSigbus(void (*fn)(void*), void* arg) {
  // A function-local static installs once, thread-safely, without std::call_once
  // (whose pthread_once would need GLIBC_2.34 in the prebuilds; see scripts/glibc-check.sh).
  static const bool installed = (Install(), true);
  (void)installed;
  sigjmp_buf jump;
  sigjmp_buf* const outer = tlJump;
  // volatile: read after a siglongjmp back into this frame.
  volatile bool ok = true;
  if (sigsetjmp(jump, 1) == 0) {
    tlJump = &jump;
    fn(arg);
  } else {
    ok = false;
  }
  tlJump = outer;
  return ok;
}

}  // namespace profpack
#elif !defined(_WIN32)
namespace profpack {
bool CallCatchingSigbus(void (*fn)(void*), void* arg) {
  fn(arg);
  return true;
}
}  // namespace profpack
#endif
