// CPU feature detection, done once at load: SIMD kernels are chosen from these.
#pragma once

namespace profpack {

struct CpuFeatures {
  bool sse41 = false;
  bool avx2 = false;
  bool bmi2 = false;
  bool popcnt = false;
};

const CpuFeatures& DetectedCpuFeatures();

}  // namespace profpack
