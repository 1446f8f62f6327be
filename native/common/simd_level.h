// The SIMD level the addon's kernels run at, chosen once at load from CPUID
// (cpu_features.h) and the PROFPACK_SIMD override, and reported to JS as
// backend.features.simd.
#pragma once
#include <string>

#include "common/cpu_features.h"

namespace profpack {

// On x86-64 each level implies the ones below it (AVX2 CPUs have SSE4.1);
// NEON is the arm64 level and stands alone.
enum class SimdLevel { kScalar = 0, kSse41 = 1, kAvx2 = 2, kNeon = 3 };

// Every level, scalar first: the order kernelLevels() and the fuzzers list them in.
inline constexpr SimdLevel kAllSimdLevels[] = {SimdLevel::kScalar, SimdLevel::kSse41, SimdLevel::kAvx2,
                                               SimdLevel::kNeon};

const char* SimdLevelName(SimdLevel level);

bool SimdLevelSupported(SimdLevel level, const CpuFeatures& cpu);

// The best level `cpu` supports.
SimdLevel BestSimdLevel(const CpuFeatures& cpu);

// Resolves a PROFPACK_SIMD value ("", "auto", "scalar", "sse41", "avx2", "neon") for
// `cpu`. Returns false and sets `error` for an unknown name or a level the CPU
// lacks: forcing a kernel the CPU cannot run must never fall back silently.
bool ResolveSimdLevel(const std::string& requested, const CpuFeatures& cpu, SimdLevel& level, std::string& error);

// BMI2's pext for the batch varint decoders (varint/leb128_bmi2.cc) is part of
// the avx2 level (both came with Haswell and Zen), where pext is fast: so
// PROFPACK_SIMD=sse41 or scalar also runs the portable varint kernel.
bool SimdLevelUsesPext(SimdLevel level, const CpuFeatures& cpu);

// The level for this process: PROFPACK_SIMD read once at load, or what the
// setKernelLevel test hook set since (UseSimdLevel in module_registry.h).
// When PROFPACK_SIMD is unusable this is the best supported level and
// SimdLevelError() says why; module init turns that into a load error.
SimdLevel ActiveSimdLevel();
void SetActiveSimdLevel(SimdLevel level);
const std::string& SimdLevelError();

}  // namespace profpack
