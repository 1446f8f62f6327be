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
  Napi::Float64Array out = Napi::Float64Array::New(env, 4);
  out[0] = static_cast<double>(s.end);
  out[1] = static_cast<double>(s.samples);
  out[2] = s.threads;
  out[3] = static_cast<double>(s.maxFrame);
  return out;
}

void InitTachyonRecover(Napi::Env env, Napi::Object exports) {
  exports.Set("salvageRecords", Napi::Function::New(env, SalvageRecords, "salvageRecords"));
}

PROFPACK_REGISTER_MODULE("tachyonRecover", InitTachyonRecover);

}  // namespace
}  // namespace profpack
