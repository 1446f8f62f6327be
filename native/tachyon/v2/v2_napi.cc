// N-API glue for the version-2 region decoder: one crossing per region. The
// result carries the samples decoded before any error, and the error's
// fields, so the JS layer delivers those samples and then throws (the JS
// twin's behaviour).
#include <napi.h>
#include <cstring>

#include "common/error_codes.h"
#include "common/errors.h"
#include "common/module_registry.h"
#include "common/typed_array.h"
#include "tachyon/v2/block_encoder.h"
#include "tachyon/v2/heap_decoder.h"
#include "tachyon/v2/model_columns.h"
#include "tachyon/v2/region_decoder.h"

namespace profpack {
namespace {

uint64_t BigIntArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsBigInt())
    throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a bigint");
  bool lossless = false;
  const uint64_t v = info[i].As<Napi::BigInt>().Uint64Value(&lossless);
  if (!lossless) throw Napi::RangeError::New(info.Env(), std::string(what) + " must be a u64");
  return v;
}

Napi::Object DecodedToJs(Napi::Env env, const v2::DecodedRegion& decoded) {
  Napi::Object result = Napi::Object::New(env);
  result.Set("threadIds", CopyOut(env, decoded.threadIds));
  result.Set("interpreterIds", CopyOut(env, decoded.interpreterIds));
  result.Set("sampleThread", CopyOut(env, decoded.sampleThread));
  result.Set("timestamps", CopyOut(env, decoded.timestamps));
  result.Set("statuses", CopyOut(env, decoded.statuses));
  result.Set("stackOffsets", CopyOut(env, decoded.stackOffsets));
  result.Set("frames", CopyOut(env, decoded.frames));
  if (decoded.error) {
    result.Set("error", MakeProfpackError(env, *decoded.error).Value());
  }
  return result;
}

void CheckLittleEndianHost(Napi::Env env) {
  // Thread definitions are read with memcpy: little-endian hosts only (version 2 files are little-endian).
  const uint16_t probe = 1;
  if (*reinterpret_cast<const uint8_t*>(&probe) != 1)
    throw Napi::Error::New(env, "version-2 native decoding needs a little-endian host");
}

// decodeRegion(region: Uint8Array, base: number, startTimeUs: bigint, sampleIntervalUs: bigint)
Napi::Value DecodeRegion(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView region = ViewOfType(info[0], napi_uint8_array, "region");
  const size_t base = IndexArg(info, 1, "base");
  const uint64_t start = BigIntArg(info, 2, "startTimeUs");
  const uint64_t interval = BigIntArg(info, 3, "sampleIntervalUs");
  CheckLittleEndianHost(env);
  v2::DecodedRegion decoded;
  v2::DecodeRegion(region.data, region.length, static_cast<int64_t>(base), start, interval, decoded);
  return DecodedToJs(env, decoded);
}

// createDecoder(startTimeUs: bigint, sampleIntervalUs: bigint) -> handle (released by releaseDecoder or GC)
Napi::Value CreateDecoder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint64_t start = BigIntArg(info, 0, "startTimeUs");
  const uint64_t interval = BigIntArg(info, 1, "sampleIntervalUs");
  CheckLittleEndianHost(env);
  auto* holder = new std::unique_ptr<v2::RegionDecoder>(new v2::RegionDecoder(start, interval));
  return Napi::External<std::unique_ptr<v2::RegionDecoder>>::New(
      env, holder, [](Napi::Env, std::unique_ptr<v2::RegionDecoder>* h) { delete h; });
}

// A decoder handle (the first argument): an External holding the decoder, reset when released.
template <typename Decoder>
std::unique_ptr<Decoder>& HandleArg(const Napi::CallbackInfo& info, const char* expected) {
  if (info.Length() < 1 || !info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), expected);
  return *info[0].As<Napi::External<std::unique_ptr<Decoder>>>().Data();
}

std::unique_ptr<v2::RegionDecoder>& DecoderArg(const Napi::CallbackInfo& info) {
  return HandleArg<v2::RegionDecoder>(info, "decoder handle expected");
}

// decodeBlocks(handle, blocks: Uint8Array, base: number): whole blocks, state kept for the next call.
Napi::Value DecodeBlocks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::unique_ptr<v2::RegionDecoder>& decoder = DecoderArg(info);
  if (!decoder) throw MakeProfpackError(env, codes::kInvalidArgument, "the region decoder was released");
  const RawView blocks = ViewOfType(info[1], napi_uint8_array, "blocks");
  const size_t base = IndexArg(info, 2, "base");
  v2::DecodedRegion decoded;
  decoder->Decode(blocks.data, blocks.length, static_cast<int64_t>(base), decoded);
  return DecodedToJs(env, decoded);
}

// releaseDecoder(handle): frees the state now rather than at a later finalizer.
Napi::Value ReleaseDecoder(const Napi::CallbackInfo& info) {
  DecoderArg(info).reset();
  return info.Env().Undefined();
}

// decodeValueColumn(column: Uint8Array, base: number, n: number): { values, used } or { error }
Napi::Value DecodeValueColumn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView column = ViewOfType(info[0], napi_uint8_array, "column");
  const size_t base = IndexArg(info, 1, "base");
  const size_t n = IndexArg(info, 2, "n");
  Napi::Object result = Napi::Object::New(env);
  // Every value takes a byte at least: a count beyond the column is the JS layer's check, not an allocation here.
  if (n > column.length) throw Napi::RangeError::New(env, "n exceeds the column's bytes");
  Napi::Float64Array values = Napi::Float64Array::New(env, n);
  try {
    const size_t used = v2::DecodeDeltaColumn(column.data, column.length, static_cast<int64_t>(base), n, values.Data());
    result.Set("values", values);
    result.Set("used", Napi::Number::New(env, static_cast<double>(used)));
  } catch (const FormatError& e) {
    result.Set("error", MakeProfpackError(env, e).Value());
  }
  return result;
}

constexpr uint32_t kMaxStackDepth = 4096;  // lib/tachyon/codec/format.ts V2_MAX_STACK_DEPTH

Napi::Error InvalidArgument(Napi::Env env, const std::string& message) {
  return MakeProfpackError(env, codes::kInvalidArgument, message);
}

v2::BlockEncoder* EncoderArg(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "encoder handle expected");
  return info[0].As<Napi::External<v2::BlockEncoder>>().Data();
}

// createEncoder(kind 4|6, sampleIntervalUs: bigint, startTimeUs: bigint, blockMaxSamples) -> handle
Napi::Value CreateEncoder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t kind = IndexArg(info, 0, "kind");
  if (kind != 4 && kind != 6)
    throw InvalidArgument(env, "kind must be 4 (predict) or 6 (stack table, recency references)");
  const uint64_t interval = BigIntArg(info, 1, "sampleIntervalUs");
  const uint64_t start = BigIntArg(info, 2, "startTimeUs");
  const size_t blockMax = IndexArg(info, 3, "blockMaxSamples");
  if (blockMax == 0 || blockMax > 0xffffffffu) throw InvalidArgument(env, "blockMaxSamples must be 1..2^32-1");
  auto* encoder = new v2::BlockEncoder(static_cast<uint8_t>(kind), interval, start, static_cast<uint32_t>(blockMax));
  return Napi::External<v2::BlockEncoder>::New(env, encoder, [](Napi::Env, v2::BlockEncoder* e) { delete e; });
}

// encodeSamples(handle, threadIds: BigUint64Array, interpreterIds: Uint32Array, timestamps: BigUint64Array,
//               statuses: Uint8Array, stackEnds: Uint32Array, frames: Uint32Array) -> Uint8Array[] (finished blocks)
// Sample k's stack is frames[stackEnds[k-1] .. stackEnds[k]), innermost first, at most 4,096 frames
// (lib/tachyon/codec/format.ts V2_MAX_STACK_DEPTH).
// Everything is checked before the first sample is coded, so a refused batch leaves no trace.
Napi::Value EncodeSamples(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  v2::BlockEncoder* encoder = EncoderArg(info);
  const RawView tids = ViewOfType(info[1], napi_biguint64_array, "threadIds");
  const RawView interps = ViewOfType(info[2], napi_uint32_array, "interpreterIds");
  const RawView stamps = ViewOfType(info[3], napi_biguint64_array, "timestamps");
  const RawView statuses = ViewOfType(info[4], napi_uint8_array, "statuses");
  const RawView ends = ViewOfType(info[5], napi_uint32_array, "stackEnds");
  const RawView frames = ViewOfType(info[6], napi_uint32_array, "frames");
  const size_t n = tids.length;
  if (interps.length != n || stamps.length != n || statuses.length != n || ends.length != n) {
    throw InvalidArgument(
        env, "threadIds, interpreterIds, timestamps, statuses and stackEnds must have one entry per sample");
  }
  const auto* endValues = reinterpret_cast<const uint32_t*>(ends.data);
  uint32_t previous = 0;
  for (size_t k = 0; k < n; ++k) {
    if (endValues[k] < previous || endValues[k] > frames.length)
      throw InvalidArgument(env, "stackEnds must not decrease and must stay within frames");
    if (endValues[k] - previous > kMaxStackDepth) throw InvalidArgument(env, "a stack has more than 4096 frames");
    previous = endValues[k];
  }
  const auto* tidValues = reinterpret_cast<const uint64_t*>(tids.data);
  const auto* interpValues = reinterpret_cast<const uint32_t*>(interps.data);
  const auto* stampValues = reinterpret_cast<const uint64_t*>(stamps.data);
  const auto* frameValues = reinterpret_cast<const uint32_t*>(frames.data);
  Napi::Array blocks = Napi::Array::New(env);
  uint32_t from = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t to = endValues[k];
    if (encoder->EndsBlockBefore(to - from) || encoder->LeavesPredictionAt(tidValues[k], interpValues[k])) {
      std::vector<uint8_t> pending = encoder->Flush();
      if (!pending.empty()) blocks.Set(blocks.Length(), CopyOut(env, pending));
    }
    if (encoder->Add(tidValues[k], interpValues[k], stampValues[k], statuses.data[k], frameValues + from, to - from)) {
      blocks.Set(blocks.Length(), CopyOut(env, encoder->Flush()));
    }
    from = to;
  }
  return blocks;
}

// flushEncoder(handle) -> Uint8Array (empty when no sample is pending)
Napi::Value FlushEncoder(const Napi::CallbackInfo& info) { return CopyOut(info.Env(), EncoderArg(info)->Flush()); }

// encoderCounts(handle) -> [samples, threads]
Napi::Value EncoderCounts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  v2::BlockEncoder* encoder = EncoderArg(info);
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, static_cast<double>(encoder->sampleCount())));
  out.Set(1u, Napi::Number::New(env, encoder->threadCount()));
  return out;
}

// createHeapDecoder(startTimeUs, frameCount, maxLive, maxEvents: numbers) -> handle (released by releaseHeapDecoder or
// GC). Limits are heap-limits.ts heapReadLimits, read once by the JS layer.
Napi::Value CreateHeapDecoder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "startTimeUs must be a number");
  const double start = info[0].As<Napi::Number>().DoubleValue();
  const size_t frames = IndexArg(info, 1, "frameCount");
  if (frames > 0xffffffffu) throw InvalidArgument(env, "frameCount must fit u32");
  const double maxLive = static_cast<double>(IndexArg(info, 2, "maxLive"));
  const double maxEvents = static_cast<double>(IndexArg(info, 3, "maxEvents"));
  CheckLittleEndianHost(env);
  auto* holder = new std::unique_ptr<v2::HeapDecoder>(
      new v2::HeapDecoder(start, static_cast<uint32_t>(frames), maxLive, maxEvents));
  return Napi::External<std::unique_ptr<v2::HeapDecoder>>::New(
      env, holder, [](Napi::Env, std::unique_ptr<v2::HeapDecoder>* h) { delete h; });
}

std::unique_ptr<v2::HeapDecoder>& HeapDecoderArg(const Napi::CallbackInfo& info) {
  return HandleArg<v2::HeapDecoder>(info, "heap decoder handle expected");
}

// decodeHeapRecords(handle, records: Uint8Array, base: number): one chunk's records, state kept for the next.
Napi::Value DecodeHeapRecords(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::unique_ptr<v2::HeapDecoder>& decoder = HeapDecoderArg(info);
  if (!decoder) throw MakeProfpackError(env, codes::kInvalidArgument, "the heap decoder was released");
  const RawView bytes = ViewOfType(info[1], napi_uint8_array, "records");
  const size_t base = IndexArg(info, 2, "base");
  v2::HeapRecords r;
  decoder->Decode(bytes.data, bytes.length, static_cast<int64_t>(base), r);
  Napi::Object result = Napi::Object::New(env);
  result.Set("recordInts", CopyOut(env, r.recordInts));
  result.Set("recordNums", CopyOut(env, r.recordNums));
  result.Set("ordinals", CopyOut(env, r.ordinals));
  result.Set("sizes", CopyOut(env, r.sizes));
  result.Set("allocTimesUs", CopyOut(env, r.allocTimesUs));
  result.Set("stackOffsets", CopyOut(env, r.stackOffsets));
  result.Set("frames", CopyOut(env, r.frames));
  result.Set("freed", CopyOut(env, r.freed));
  result.Set("threadIds", CopyOut(env, r.threadIds));
  result.Set("totals", CopyOut(env, r.totals, 5));
  if (r.error) result.Set("error", MakeProfpackError(env, *r.error).Value());
  return result;
}

// releaseHeapDecoder(handle): frees the threads' live lists now rather than at a later finalizer.
Napi::Value ReleaseHeapDecoder(const Napi::CallbackInfo& info) {
  HeapDecoderArg(info).reset();
  return info.Env().Undefined();
}

PROFPACK_REGISTER_MODULE("v2", {{"decodeRegion", DecodeRegion},
                                {"decodeValueColumn", DecodeValueColumn},
                                {"createDecoder", CreateDecoder},
                                {"decodeBlocks", DecodeBlocks},
                                {"releaseDecoder", ReleaseDecoder},
                                {"createEncoder", CreateEncoder},
                                {"encodeSamples", EncodeSamples},
                                {"flushEncoder", FlushEncoder},
                                {"encoderCounts", EncoderCounts},
                                {"createHeapDecoder", CreateHeapDecoder},
                                {"decodeHeapRecords", DecodeHeapRecords},
                                {"releaseHeapDecoder", ReleaseHeapDecoder}});

}  // namespace
}  // namespace profpack
