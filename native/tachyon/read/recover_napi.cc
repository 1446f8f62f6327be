// N-API glue for recovery's record check (recover_scan.h): one call per
// region, the bytes read in place.
#include <napi.h>

#include "common/module_registry.h"
#include "common/typed_array.h"
#include "tachyon/read/recover_scan.h"

namespace profpack {
namespace {

// salvageRecords(records: Uint8Array, littleEndian, startTimeUs: bigint) -> Float64Array [end, samples, threads,
// maxFrame]
Napi::Value SalvageRecords(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView records = ViewOfType(info[0], napi_uint8_array, "records");
  const bool littleEndian = info[1].ToBoolean().Value();
  if (!info[2].IsBigInt()) throw Napi::TypeError::New(env, "startTimeUs must be a bigint");
  bool lossless = true;
  const uint64_t startTimeUs = info[2].As<Napi::BigInt>().Uint64Value(&lossless);
  const tachyon::Salvage s = tachyon::SalvageRecords(records.data, records.length, littleEndian, startTimeUs);
  return CountersOut(env, {static_cast<double>(s.end), static_cast<double>(s.samples), static_cast<double>(s.threads),
                           static_cast<double>(s.maxFrame)});
}

PROFPACK_REGISTER_MODULE("tachyonRecover", {{"salvageRecords", SalvageRecords}});

}  // namespace
}  // namespace profpack
