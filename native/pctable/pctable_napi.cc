// N-API glue for PcTable: varint decode, linear encode/validate, and batch
// lookups that cross N-API once per batch. The contract is lib/pctable/native.ts.
// Tables live in C++-owned copies, validated once, so a caller mutating its
// Uint8Array afterwards cannot make a lookup read out of bounds.
#include <napi.h>

#include <cstring>
#include <memory>
#include <vector>

#include "common/error_codes.h"
#include "common/errors.h"
#include "common/module_registry.h"
#include "common/typed_array.h"
#include "pctable/linear_index.h"
#include "pctable/varint_table.h"

namespace profpack {
namespace {

using pctable::LinearTable;

struct TableHandle {
  std::vector<uint8_t> linear;  // the encoding, then kLookupPadding zero bytes
  std::vector<uint8_t> varint;  // empty for tables read with fromLinear
  LinearTable table;            // table.length excludes the padding
};

// One entry per table of a set, 16 bytes so the directory stays in cache.
struct SetEntry {
  uint32_t linearStart;  // into SetHandle::linear
  uint32_t size;
  uint32_t indexBytes;
  pctable::IndexWidth width;
  uint8_t quantum;
};

struct SetHandle {
  std::vector<uint8_t> linear;  // every encoding back to back, then kLookupPadding zero bytes
  std::vector<uint8_t> varint;
  std::vector<SetEntry> entries;
  std::vector<size_t> varintStart;  // per table, into `varint`; one extra end entry
  bool hasVarint = true;
};

void Pad(std::vector<uint8_t>& bytes) { bytes.resize(bytes.size() + pctable::kLookupPadding, 0); }

uint32_t QuantumArg(const Napi::CallbackInfo& info, size_t i) {
  const size_t quantum = IndexArg(info, i, "quantum");
  if (quantum < 1 || quantum > pctable::kMaxQuantum) throw Napi::RangeError::New(info.Env(), "quantum must be 1..255");
  return static_cast<uint32_t>(quantum);
}

// size 0 means "take it from the varint table" (fromVarint only).
uint32_t SizeArg(const Napi::CallbackInfo& info, size_t i, uint32_t quantum, bool allowZero) {
  const size_t size = IndexArg(info, i, "size");
  if (size > UINT32_MAX || (size == 0 && !allowZero) || size % quantum != 0) {
    throw Napi::RangeError::New(info.Env(), "size must be a positive multiple of quantum below 2^32");
  }
  return static_cast<uint32_t>(size);
}

template <typename T>
T* HandleArg(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || !info[i].IsExternal()) throw Napi::TypeError::New(info.Env(), "expected a pctable handle");
  return info[i].As<Napi::External<T>>().Data();
}

template <typename T>
Napi::External<T> Wrap(Napi::Env env, std::unique_ptr<T> handle) {
  return Napi::External<T>::New(env, handle.release(), [](Napi::Env, T* data) { delete data; });
}

// decodeVarint(bytes, quantum) -> { values: Int32Array, ends: Uint32Array, end }
Napi::Value DecodeVarint(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView in = ViewOfType(info[0], napi_uint8_array, "bytes");
  const uint32_t quantum = QuantumArg(info, 1);
  return Guarded(env, [&]() -> Napi::Value {
    const pctable::DecodedVarintTable decoded = pctable::DecodeVarintTable(in.data, in.length, quantum);
    Napi::Int32Array values = Napi::Int32Array::New(env, decoded.runs.size());
    Napi::Uint32Array ends = Napi::Uint32Array::New(env, decoded.runs.size());
    for (size_t i = 0; i < decoded.runs.size(); ++i) {
      values[i] = decoded.runs[i].value;
      ends[i] = decoded.runs[i].endPc;
    }
    Napi::Object result = Napi::Object::New(env);
    result.Set("values", values);
    result.Set("ends", ends);
    result.Set("end", Napi::Number::New(env, static_cast<double>(decoded.end)));
    return result;
  });
}

// fromVarint(bytes, quantum, size | 0) -> { linear, size, end, handle }
Napi::Value FromVarint(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView in = ViewOfType(info[0], napi_uint8_array, "bytes");
  const uint32_t quantum = QuantumArg(info, 1);
  const uint32_t expectedSize = SizeArg(info, 2, quantum, true);
  return Guarded(env, [&]() -> Napi::Value {
    const pctable::DecodedVarintTable decoded = pctable::DecodeVarintTable(in.data, in.length, quantum);
    const uint32_t size = decoded.runs.back().endPc;  // Next() succeeds at least once or throws
    if (expectedSize != 0 && size != expectedSize) {
      pctable::Fail(
          codes::kPctableSizeMismatch,
          "pcvalue table covers " + std::to_string(size) + " bytes, not the given size " + std::to_string(expectedSize),
          decoded.end - 1, "runs summing to " + std::to_string(expectedSize) + " bytes");
    }
    auto handle = std::make_unique<TableHandle>();
    handle->linear = pctable::EncodeLinear(decoded.runs, size, quantum);
    const size_t length = handle->linear.size();
    Pad(handle->linear);
    handle->varint.assign(in.data, in.data + decoded.end);
    handle->table = LinearTable::Open(handle->linear.data(), length, size, quantum);
    Napi::Object result = Napi::Object::New(env);
    result.Set("linear", CopyOut(env, handle->linear.data(), length));
    result.Set("size", Napi::Number::New(env, size));
    result.Set("end", Napi::Number::New(env, static_cast<double>(decoded.end)));
    result.Set("handle", Wrap(env, std::move(handle)));
    return result;
  });
}

// fromLinear(bytes, size, quantum) -> handle
Napi::Value FromLinear(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const RawView in = ViewOfType(info[0], napi_uint8_array, "bytes");
  const uint32_t quantum = QuantumArg(info, 2);
  const uint32_t size = SizeArg(info, 1, quantum, false);
  return Guarded(env, [&]() -> Napi::Value {
    auto handle = std::make_unique<TableHandle>();
    handle->linear.assign(in.data, in.data + in.length);
    Pad(handle->linear);
    handle->table = LinearTable::Open(handle->linear.data(), in.length, size, quantum);
    return Wrap(env, std::move(handle));
  });
}

struct Outside {
  bool fill;
  int32_t value;
};

Outside OutsideArg(const Napi::CallbackInfo& info, size_t i) {
  return {info[i].ToBoolean().Value(), info[i + 1].IsNumber() ? info[i + 1].As<Napi::Number>().Int32Value() : 0};
}

// lookupMany(handle, pcs, out, fillOutside, outsideValue) -> -1, or the index of
// the first PC outside [0, size) when fillOutside is false (out is then partial).
Napi::Value LookupMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const TableHandle* handle = HandleArg<TableHandle>(info, 0);
  const RawView pcs = ViewOfType(info[1], napi_uint32_array, "pcs");
  const RawView out = ViewOfType(info[2], napi_int32_array, "out");
  if (out.length < pcs.length) throw Napi::RangeError::New(env, "out is shorter than pcs");
  const Outside outside = OutsideArg(info, 3);
  const uint32_t* src = reinterpret_cast<const uint32_t*>(pcs.data);
  int32_t* dst = reinterpret_cast<int32_t*>(out.data);
  const LinearTable& table = handle->table;
  for (size_t i = 0; i < pcs.length; ++i) {
    const uint32_t pc = src[i];
    if (pc >= table.size) {
      if (!outside.fill) return Napi::Number::New(env, static_cast<double>(i));
      dst[i] = outside.value;
      continue;
    }
    dst[i] = pctable::LookupLinearPadded(table.data, table.indexBytes, table.width, table.quantum, pc);
  }
  return Napi::Number::New(env, -1);
}

// openSet(handles: External[]) -> set handle with every table copied contiguously.
Napi::Value OpenSet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "expected an array of pctable handles");
  Napi::Array list = info[0].As<Napi::Array>();
  const uint32_t count = list.Length();
  std::vector<const TableHandle*> members(count);
  size_t linearBytes = 0, varintBytes = 0;
  auto set = std::make_unique<SetHandle>();
  for (uint32_t i = 0; i < count; ++i) {
    Napi::Value item = list.Get(i);
    if (!item.IsExternal()) throw Napi::TypeError::New(env, "expected an array of pctable handles");
    members[i] = item.As<Napi::External<TableHandle>>().Data();
    linearBytes += members[i]->table.length;
    varintBytes += members[i]->varint.size();
    if (members[i]->varint.empty()) set->hasVarint = false;
  }
  if (linearBytes > UINT32_MAX) throw Napi::RangeError::New(env, "a set holds at most 4 GiB of linear tables");
  set->linear.reserve(linearBytes + pctable::kLookupPadding);
  if (set->hasVarint) set->varint.reserve(varintBytes);
  set->entries.resize(count);
  set->varintStart.reserve(count + 1);
  for (uint32_t i = 0; i < count; ++i) {
    const LinearTable& table = members[i]->table;  // geometry already validated
    set->entries[i] = {static_cast<uint32_t>(set->linear.size()), table.size, table.indexBytes, table.width,
                       static_cast<uint8_t>(table.quantum)};
    set->linear.insert(set->linear.end(), members[i]->linear.begin(), members[i]->linear.begin() + table.length);
    set->varintStart.push_back(set->varint.size());
    if (set->hasVarint) set->varint.insert(set->varint.end(), members[i]->varint.begin(), members[i]->varint.end());
  }
  set->varintStart.push_back(set->varint.size());
  Pad(set->linear);
  return Wrap(env, std::move(set));
}

// setLookupMany(set, tableIndex, pcs, out, fillOutside, outsideValue, useVarint)
// -> -1, or the index of the first pair with a bad table index or (without
// fillOutside) a PC outside its table.
Napi::Value SetLookupMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const SetHandle* set = HandleArg<SetHandle>(info, 0);
  const RawView tableIndex = ViewOfType(info[1], napi_uint32_array, "tableIndex");
  const RawView pcs = ViewOfType(info[2], napi_uint32_array, "pcs");
  const RawView out = ViewOfType(info[3], napi_int32_array, "out");
  if (tableIndex.length != pcs.length) throw Napi::RangeError::New(env, "tableIndex and pcs differ in length");
  if (out.length < pcs.length) throw Napi::RangeError::New(env, "out is shorter than pcs");
  const Outside outside = OutsideArg(info, 4);
  const bool useVarint = info[6].ToBoolean().Value();
  if (useVarint && !set->hasVarint) throw Napi::TypeError::New(env, "the set has tables without varint bytes");
  const uint32_t* tables = reinterpret_cast<const uint32_t*>(tableIndex.data);
  const uint32_t* src = reinterpret_cast<const uint32_t*>(pcs.data);
  int32_t* dst = reinterpret_cast<int32_t*>(out.data);
  const size_t count = set->entries.size();
  const uint8_t* linear = set->linear.data();
  return Guarded(env, [&]() -> Napi::Value {
    for (size_t i = 0; i < pcs.length; ++i) {
#if defined(__GNUC__)
      // Pairs are independent: start the directory and table loads of later pairs now.
      if (i + 16 < pcs.length && tables[i + 16] < count) __builtin_prefetch(&set->entries[tables[i + 16]]);
      if (i + 8 < pcs.length && tables[i + 8] < count) {
        const SetEntry& ahead = set->entries[tables[i + 8]];
        __builtin_prefetch(useVarint ? set->varint.data() + set->varintStart[tables[i + 8]]
                                     : linear + ahead.linearStart + ahead.indexBytes);
      }
#endif
      const uint32_t t = tables[i];
      if (t >= count) return Napi::Number::New(env, static_cast<double>(i));
      const SetEntry& table = set->entries[t];
      const uint32_t pc = src[i];
      if (pc >= table.size) {
        if (!outside.fill) return Napi::Number::New(env, static_cast<double>(i));
        dst[i] = outside.value;
        continue;
      }
      if (useVarint) {
        const size_t start = set->varintStart[t];
        pctable::VarintRun hit{};
        // Varint tables were fully decoded once, so every in-range PC is found.
        pctable::LookupVarint(set->varint.data() + start, set->varintStart[t + 1] - start, table.quantum, pc, &hit);
        dst[i] = hit.value;
      } else {
        dst[i] =
            pctable::LookupLinearPadded(linear + table.linearStart, table.indexBytes, table.width, table.quantum, pc);
      }
    }
    return Napi::Number::New(env, -1);
  });
}

PROFPACK_REGISTER_MODULE("pctable", {{"decodeVarint", DecodeVarint},
                                     {"fromVarint", FromVarint},
                                     {"fromLinear", FromLinear},
                                     {"lookupMany", LookupMany},
                                     {"openSet", OpenSet},
                                     {"setLookupMany", SetLookupMany}});

}  // namespace
}  // namespace profpack
