// CPU feature detection, done once at load: SIMD kernels are chosen from these.
#pragma once

namespace profpack {

struct CpuFeatures {
  bool sse41 = false;
  bool avx2 = false;
  bool bmi2 = false;
  bool popcnt = false;
  // BMI2 pext/pdep at full speed: not on AMD before Zen 3 (family 0x19), where they are microcoded.
  bool fastPext = false;
  // Advanced SIMD: part of every AArch64 CPU, so true whenever the addon is built for arm64.
  bool neon = false;
};

const CpuFeatures& DetectedCpuFeatures();

}  // namespace profpack
