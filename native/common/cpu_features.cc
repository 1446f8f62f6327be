#include "common/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace profpack {

const CpuFeatures& DetectedCpuFeatures() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    // __builtin_cpu_supports reads CPUID and also checks that the OS saves
    // the AVX state (OSXSAVE/XGETBV), which a raw CPUID bit does not.
    __builtin_cpu_init();
    f.sse41 = __builtin_cpu_supports("sse4.1");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.bmi2 = __builtin_cpu_supports("bmi2");
    f.popcnt = __builtin_cpu_supports("popcnt");
    f.fastPext = f.bmi2;
    if (__builtin_cpu_is("amd")) {
      unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
      if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        const unsigned baseFamily = (eax >> 8) & 0xf;
        const unsigned family = baseFamily == 0xf ? baseFamily + ((eax >> 20) & 0xff) : baseFamily;
        f.fastPext = f.bmi2 && family >= 0x19;
      }
    }
#endif
#if defined(__aarch64__)
    f.neon = true;
#endif
    return f;
  }();
  return features;
}

}  // namespace profpack
