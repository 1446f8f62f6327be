#include "common/simd_level.h"

#include <atomic>
#include <cctype>
#include <cstdlib>

namespace profpack {

const char* SimdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kSse41: return "sse41";
    case SimdLevel::kNeon: return "neon";
    case SimdLevel::kScalar: break;
  }
  return "scalar";
}

bool SimdLevelSupported(SimdLevel level, const CpuFeatures& cpu) {
  switch (level) {
    case SimdLevel::kAvx2: return cpu.avx2 && cpu.sse41;
    case SimdLevel::kSse41: return cpu.sse41;
    case SimdLevel::kNeon: return cpu.neon;
    case SimdLevel::kScalar: break;
  }
  return true;
}

bool SimdLevelUsesPext(SimdLevel level, const CpuFeatures& cpu) {
  return level == SimdLevel::kAvx2 && SimdLevelSupported(level, cpu) && cpu.bmi2 && cpu.fastPext;
}

SimdLevel BestSimdLevel(const CpuFeatures& cpu) {
  if (SimdLevelSupported(SimdLevel::kNeon, cpu)) return SimdLevel::kNeon;
  if (SimdLevelSupported(SimdLevel::kAvx2, cpu)) return SimdLevel::kAvx2;
  if (SimdLevelSupported(SimdLevel::kSse41, cpu)) return SimdLevel::kSse41;
  return SimdLevel::kScalar;
}

bool ResolveSimdLevel(const std::string& requested, const CpuFeatures& cpu, SimdLevel& level, std::string& error) {
  std::string name;
  for (char c : requested) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (name.empty() || name == "auto") {
    level = BestSimdLevel(cpu);
    return true;
  }
  SimdLevel wanted;
  if (name == "scalar") wanted = SimdLevel::kScalar;
  else if (name == "sse41") wanted = SimdLevel::kSse41;
  else if (name == "avx2") wanted = SimdLevel::kAvx2;
  else if (name == "neon") wanted = SimdLevel::kNeon;
  else {
    error = "PROFPACK_SIMD must be one of auto, scalar, sse41, avx2, neon, not \"" + requested + "\"";
    return false;
  }
  if (!SimdLevelSupported(wanted, cpu)) {
    error = std::string("PROFPACK_SIMD=") + SimdLevelName(wanted) +
            " but this CPU lacks it (best available: " + SimdLevelName(BestSimdLevel(cpu)) + ")";
    return false;
  }
  level = wanted;
  return true;
}

namespace {

struct Choice {
  SimdLevel level = SimdLevel::kScalar;
  std::string error;
};

const Choice& Chosen() {
  static const Choice choice = [] {
    Choice c;
    const char* env = std::getenv("PROFPACK_SIMD");
    if (!ResolveSimdLevel(env == nullptr ? "" : env, DetectedCpuFeatures(), c.level, c.error)) {
      c.level = BestSimdLevel(DetectedCpuFeatures());
    }
    return c;
  }();
  return choice;
}

// Relaxed: every worker's load stores the same level; only the test hook changes it.
std::atomic<SimdLevel>& Active() {
  static std::atomic<SimdLevel> level{Chosen().level};
  return level;
}

}  // namespace

SimdLevel ActiveSimdLevel() { return Active().load(std::memory_order_relaxed); }
void SetActiveSimdLevel(SimdLevel level) { Active().store(level, std::memory_order_relaxed); }
const std::string& SimdLevelError() { return Chosen().error; }

}  // namespace profpack
