// Stream VByte kernels without Node: the same distributions as bench/svb.mjs,
// every kernel level and memcpy timed in interleaved rounds, reported as the
// median and the best round (million uint32/s). On a shared, loaded machine
// the best round is the steadiest estimate of what a kernel can do; the JS
// benchmark (npm run bench -- svb) has the N-API path and the JS baselines.
//
//   g++ -O3 -std=c++17 -Inative bench/svb_kernels.cc native/svb/svb_scalar.cc native/svb/svb_sse41.cc
//       native/svb/svb_avx2.cc native/common/simd_level.cc native/common/cpu_features.cc -o /tmp/svb_kernels
//   /tmp/svb_kernels [rounds] [log2 n ...]      (defaults: 25 rounds, n = 2^20 and 2^24)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/cpu_features.h"
#include "common/simd_level.h"
#include "svb/svb_format.h"
#include "svb/svb_kernels.h"

using namespace profpack;
using namespace profpack::svb;

namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Xorshift {
  uint32_t s;
  uint32_t operator()() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  }
};

std::vector<uint32_t> Make(const std::string& dist, size_t n) {
  Xorshift r{0x9e3779b9u ^ static_cast<uint32_t>(n) ^ static_cast<uint32_t>(dist.size())};
  std::vector<uint32_t> v(n);
  uint32_t acc = 0;
  for (size_t i = 0; i < n; ++i) {
    if (dist == "u8") v[i] = r() & 0xFF;
    else if (dist == "u16") v[i] = r() & 0xFFFF;
    else if (dist == "u32") v[i] = r();
    else if (dist == "sortedgeo") {  // Geometric(p = 0.1) steps
      acc += static_cast<uint32_t>(std::floor(std::log((r() + 1.0) / 4294967297.0) / std::log(0.9)));
      v[i] = acc;
    } else {  // timestamps: 1000 +- 150 us, plus 0..50 ms on 0.5% of gaps
      uint32_t gap = 850 + r() % 301;
      if (r() % 1000 < 5) gap += r() % 50001;
      acc += gap;
      v[i] = acc;
    }
  }
  return v;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 25;
  std::vector<int> logs;
  for (int i = 2; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
  if (logs.empty()) logs = {20, 24};
  std::vector<const Kernels*> levels;
  for (SimdLevel level : {SimdLevel::kScalar, SimdLevel::kSse41, SimdLevel::kAvx2}) {
    if (SimdLevelSupported(level, DetectedCpuFeatures()) && KernelsFor(level) != nullptr) levels.push_back(KernelsFor(level));
  }
  std::printf("| n | data | codec | B/int | op |");
  for (const Kernels* k : levels) std::printf(" %s |", SimdLevelName(k->level));
  std::printf(" memcpy |");
  for (const Kernels* k : levels) {
    if (k->level != SimdLevel::kScalar) std::printf(" %s/memcpy |", SimdLevelName(k->level));
  }
  std::printf("\n|---|---|---|---|---|");
  for (size_t i = 0; i < 2 * levels.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (int lg : logs) {
    const size_t n = size_t{1} << lg;
    for (const std::string dist : {"u8", "u16", "u32", "sortedgeo", "timestamps"}) {
      const std::vector<uint32_t> values = Make(dist, n);
      const bool sorted = dist == "sortedgeo" || dist == "timestamps";
      struct Codec { const char* name; int mode; };
      const std::vector<Codec> codecs = sorted ? std::vector<Codec>{{"1234", 0}, {"delta", 1}} : std::vector<Codec>{{"1234", 0}, {"0124", 4}};
      for (const Codec& codec : codecs) {
        std::vector<uint8_t> stream(MaxEncodedLength(n)), scratch(MaxEncodedLength(n));
        std::vector<uint32_t> decoded(n), copy(n);
        auto enc = [&](const Kernels* k, uint8_t* out) { return codec.mode == 4 ? k->encode0124(values.data(), n, out, 0) : k->encode1234[codec.mode](values.data(), n, out, 0); };
        auto dec = [&](const Kernels* k, size_t length) { return codec.mode == 4 ? k->decode0124(stream.data(), length, n, decoded.data(), 0) : k->decode1234[codec.mode](stream.data(), length, n, decoded.data(), 0); };
        const size_t length = enc(levels[0], stream.data());
        for (const Kernels* k : levels) {
          if (enc(k, scratch.data()) != length || std::memcmp(scratch.data(), stream.data(), length) != 0) return std::printf("encode mismatch\n"), 1;
          dec(k, length);
          if (std::memcmp(decoded.data(), values.data(), 4 * n) != 0) return std::printf("decode mismatch\n"), 1;
        }
        // cases: memcpy, then encode and decode per level, rotated each round
        std::vector<std::function<void()>> cases;
        cases.push_back([&] { std::memcpy(copy.data(), values.data(), 4 * n); });
        for (const Kernels* k : levels) cases.push_back([&, k] { enc(k, scratch.data()); });
        for (const Kernels* k : levels) cases.push_back([&, k] { dec(k, length); });
        std::vector<std::vector<double>> times(cases.size());
        for (int r = 0; r < rounds + 1; ++r) {
          for (size_t c = 0; c < cases.size(); ++c) {
            const size_t which = (c + r) % cases.size();
            const double t0 = Seconds();
            cases[which]();
            const double dt = Seconds() - t0;
            if (r > 0) times[which].push_back(dt);
          }
        }
        auto cell = [&](size_t c) {
          static char buf[64];
          std::snprintf(buf, sizeof buf, "%.0f (%.0f)", n / Median(times[c]) / 1e6, n / *std::min_element(times[c].begin(), times[c].end()) / 1e6);
          return std::string(buf);
        };
        auto ratio = [&](size_t c) {
          std::vector<double> per;
          for (int r = 0; r < rounds; ++r) per.push_back(times[0][r] / times[c][r]);
          static char buf[64];
          std::snprintf(buf, sizeof buf, "%.2f (%.2f)", Median(per), *std::min_element(times[0].begin(), times[0].end()) / *std::min_element(times[c].begin(), times[c].end()));
          return std::string(buf);
        };
        for (int op = 0; op < 2; ++op) {
          std::printf("| %s | %s | %s | %.3f | %s |", lg == 20 ? "1M" : lg == 24 ? "16M" : std::to_string(n).c_str(), dist.c_str(), codec.name,
                      static_cast<double>(length) / n, op == 0 ? "enc" : "dec");
          for (size_t l = 0; l < levels.size(); ++l) std::printf(" %s |", cell(1 + op * levels.size() + l).c_str());
          std::printf(" %s |", cell(0).c_str());
          for (size_t l = 0; l < levels.size(); ++l) {
            if (levels[l]->level != SimdLevel::kScalar) std::printf(" %s |", ratio(1 + op * levels.size() + l).c_str());
          }
          std::printf("\n");
        }
      }
    }
  }
  return 0;
}
