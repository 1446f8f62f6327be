// Keeps the Linux prebuilds loadable on glibc 2.28 (what Node 20+'s own
// binaries need) although this toolchain's glibc is 2.36: the static
// libstdc++ (binding.gyp: -static-libstdc++) refers to two symbols newer than
// that. Defined here, hidden, they bind inside the addon and never reach the
// dynamic symbol table; scripts/glibc-check.sh checks the result.
#include <cerrno>
#include <cstdint>
#include <cstdlib>  // defines __GLIBC__

#if defined(__linux__) && defined(__GLIBC__)
#include <sys/random.h>

// glibc 2.32: libstdc++ skips atomic reference counts while it is nonzero.
// Always 0 ("other threads may exist") keeps the atomics: correct, if not the fastest.
extern "C" __attribute__((visibility("hidden"))) char __libc_single_threaded;
char __libc_single_threaded = 0;

// glibc 2.36: only std::random_device("arc4random") would call it, which the
// addon never does; getrandom() is glibc 2.25.
extern "C" __attribute__((visibility("hidden"))) uint32_t arc4random(void) noexcept {
  uint32_t value = 0;
  ssize_t got;
  do {
    got = getrandom(&value, sizeof value, 0);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof value)) std::abort();  // as glibc's own arc4random does
  return value;
}
#endif
