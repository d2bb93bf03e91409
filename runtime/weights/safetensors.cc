#include "runtime/weights/safetensors.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/text.h"
#include "simdjson.h"

namespace qprof::weights {
namespace {

namespace od = simdjson::ondemand;

// The safetensors format caps headers at 100 MB; a larger claim is corruption.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeEntry {
  Dtype dtype;
  const char* name;
  size_t size;
};
constexpr DtypeEntry kDtypes[] = {
    {Dtype::kBool, "BOOL", 1},       {Dtype::kU8, "U8", 1},           {Dtype::kI8, "I8", 1},
    {Dtype::kU16, "U16", 2},         {Dtype::kI16, "I16", 2},         {Dtype::kU32, "U32", 4},
    {Dtype::kI32, "I32", 4},         {Dtype::kU64, "U64", 8},         {Dtype::kI64, "I64", 8},
    {Dtype::kF16, "F16", 2},         {Dtype::kBF16, "BF16", 2},       {Dtype::kF32, "F32", 4},
    {Dtype::kF64, "F64", 8},         {Dtype::kF8E4M3, "F8_E4M3", 1},  {Dtype::kF8E5M2, "F8_E5M2", 1},
    {Dtype::kF8E8M0, "F8_E8M0", 1},
};

absl::Status Bad(const std::string& file, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": invalid safetensors file: ", what));
}

// Element count x element size, or false on overflow / negative dimension.
bool ByteCount(const std::vector<int64_t>& shape, size_t elem, uint64_t* out) {
  uint64_t n = elem;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return false;
  }
  *out = n;
  return true;
}

absl::Status ParseTensorEntry(od::value& val, const std::string& file, TensorInfo* t) {
  od::object obj;
  if (val.get_object().get(obj) != simdjson::SUCCESS) {
    return Bad(file, absl::StrCat("tensor '", t->name, "' entry is not a JSON object"));
  }
  bool have_dtype = false, have_shape = false, have_offsets = false;
  for (auto field : obj) {
    std::string_view key_view;
    if (field.unescaped_key().get(key_view) != simdjson::SUCCESS) {
      return Bad(file, absl::StrCat("tensor '", t->name, "': malformed JSON"));
    }
    const std::string key(key_view);
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) {
      return Bad(file, absl::StrCat("tensor '", t->name, "': malformed JSON at '", key, "'"));
    }
    if (key == "dtype") {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) {
        return Bad(file, absl::StrCat("tensor '", t->name, "': dtype is not a string"));
      }
      auto d = ParseDtype(s);
      if (!d.ok()) {
        return Bad(file, absl::StrCat("tensor '", t->name, "': unknown dtype '", std::string(s),
                                      "'"));
      }
      t->dtype = *d;
      have_dtype = true;
    } else if (key == "shape" || key == "data_offsets") {
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) {
        return Bad(file, absl::StrCat("tensor '", t->name, "': ", key, " is not an array"));
      }
      std::vector<uint64_t> nums;
      for (auto elem : arr) {
        uint64_t n;
        if (elem.get_uint64().get(n) != simdjson::SUCCESS) {
          return Bad(file, absl::StrCat("tensor '", t->name, "': ", key,
                                        " holds something other than a non-negative integer"));
        }
        nums.push_back(n);
      }
      if (key == "shape") {
        for (uint64_t n : nums) {
          if (n > static_cast<uint64_t>(INT64_MAX)) {
            return Bad(file, absl::StrCat("tensor '", t->name, "': dimension ", n, " too large"));
          }
          t->shape.push_back(static_cast<int64_t>(n));
        }
        have_shape = true;
      } else {
        if (nums.size() != 2) {
          return Bad(file, absl::StrCat("tensor '", t->name,
                                        "': data_offsets must hold 2 numbers, not ", nums.size()));
        }
        t->begin = nums[0];
        t->end = nums[1];
        have_offsets = true;
      }
    }  // Unknown keys are ignored, as the reference reader does.
  }
  if (!have_dtype || !have_shape || !have_offsets) {
    return Bad(file, absl::StrCat("tensor '", t->name, "' lacks ",
                                  !have_dtype ? "dtype" : (!have_shape ? "shape" : "data_offsets")));
  }
  return absl::OkStatus();
}

absl::Status ParseMetadata(od::value& val, const std::string& file,
                           std::map<std::string, std::string>* out) {
  od::object obj;
  if (val.get_object().get(obj) != simdjson::SUCCESS) {
    return Bad(file, "__metadata__ is not a JSON object");
  }
  for (auto field : obj) {
    std::string_view key, value;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return Bad(file, "malformed __metadata__");
    std::string k(key);
    if (field.value().get_string().get(value) != simdjson::SUCCESS) {
      return Bad(file, absl::StrCat("__metadata__ value of '", k, "' is not a string"));
    }
    (*out)[k] = std::string(value);
  }
  return absl::OkStatus();
}

}  // namespace

const char* DtypeName(Dtype d) {
  for (const auto& e : kDtypes) {
    if (e.dtype == d) return e.name;
  }
  return "?";
}

absl::StatusOr<Dtype> ParseDtype(std::string_view name) {
  for (const auto& e : kDtypes) {
    if (std::string_view(e.name) == name) return e.dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown safetensors dtype '", std::string(name), "'"));
}

size_t DtypeSize(Dtype d) {
  for (const auto& e : kDtypes) {
    if (e.dtype == d) return e.size;
  }
  return 0;
}

int64_t TensorInfo::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

namespace {

// The header's tensors and metadata, from its JSON.
absl::Status ParseHeaderJson(const uint8_t* json_data, uint64_t json_len, const std::string& file,
                             SafetensorsHeader* h) {
  simdjson::padded_string json(reinterpret_cast<const char*>(json_data), json_len);
  od::parser parser;
  od::document doc;
  od::object top;
  if (parser.iterate(json).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(top) != simdjson::SUCCESS) {
    return Bad(file, "the header is not a JSON object");
  }
  std::map<std::string, size_t> seen;
  for (auto field : top) {
    std::string_view key_view;
    if (field.unescaped_key().get(key_view) != simdjson::SUCCESS) {
      return Bad(file, "malformed JSON header");
    }
    std::string key(key_view);
    od::value val;
    if (field.value().get(val) != simdjson::SUCCESS) {
      return Bad(file, absl::StrCat("malformed JSON header at '", key, "'"));
    }
    if (key == "__metadata__") {
      if (auto s = ParseMetadata(val, file, &h->metadata); !s.ok()) return s;
      continue;
    }
    if (seen.count(key)) return Bad(file, absl::StrCat("tensor '", key, "' appears twice"));
    TensorInfo t;
    t.name = key;
    if (auto s = ParseTensorEntry(val, file, &t); !s.ok()) return s;
    seen[key] = h->tensors.size();
    h->tensors.push_back(std::move(t));
  }
  return absl::OkStatus();
}

// Each tensor's byte range matches its dtype and shape, lies in the data section of
// `data_size` bytes, and overlaps no other.
absl::Status CheckTensorRanges(const SafetensorsHeader& h, uint64_t data_size,
                               const std::string& file) {
  for (const TensorInfo& t : h.tensors) {
    uint64_t bytes = 0;
    if (!ByteCount(t.shape, DtypeSize(t.dtype), &bytes)) {
      return Bad(file, absl::StrCat("tensor '", t.name, "': shape ", ShapeString(t.shape),
                                    " overflows"));
    }
    if (t.begin > t.end) {
      return Bad(file, absl::StrCat("tensor '", t.name, "': data_offsets [", t.begin, ", ",
                                    t.end, "] run backwards"));
    }
    if (t.end - t.begin != bytes) {
      return Bad(file, absl::StrCat("tensor '", t.name, "': ", DtypeName(t.dtype), " ",
                                    ShapeString(t.shape), " needs ", bytes,
                                    " bytes but data_offsets span ", t.end - t.begin));
    }
    if (t.end > data_size) {
      return absl::DataLossError(absl::StrCat(
          file, ": truncated safetensors file: tensor '", t.name, "' ends at data byte ", t.end,
          " but the data section holds ", data_size, " bytes"));
    }
  }
  // Overlap check on the non-empty ranges sorted by start.
  std::vector<const TensorInfo*> by_begin;
  for (const TensorInfo& t : h.tensors) {
    if (t.end > t.begin) by_begin.push_back(&t);
  }
  std::sort(by_begin.begin(), by_begin.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_begin.size(); ++i) {
    if (by_begin[i]->begin < by_begin[i - 1]->end) {
      return Bad(file, absl::StrCat("tensors '", by_begin[i - 1]->name, "' and '",
                                    by_begin[i]->name, "' overlap"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SafetensorsHeader> ParseSafetensors(const uint8_t* data, size_t size,
                                                   const std::string& file) {
  if (size < 8) {
    return absl::DataLossError(absl::StrCat(file, ": truncated safetensors file: ", size,
                                            " bytes, less than the 8-byte header length"));
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | data[i];  // little-endian
  if (header_len > size - 8) {
    return Bad(file, absl::StrCat("header length ", header_len, " exceeds the file (", size,
                                  " bytes)"));
  }
  if (header_len > kMaxHeaderBytes) {
    return Bad(file, absl::StrCat("header length ", header_len, " exceeds the 100 MB limit"));
  }
  SafetensorsHeader h;
  h.data_offset = 8 + header_len;
  if (auto s = ParseHeaderJson(data + 8, header_len, file, &h); !s.ok()) return s;
  if (auto s = CheckTensorRanges(h, size - h.data_offset, file); !s.ok()) return s;
  return h;
}

absl::StatusOr<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  auto map = MappedFile::Open(path);
  if (!map.ok()) return map.status();
  f.map_ = std::move(*map);
  auto header = ParseSafetensors(f.map_.data(), f.map_.size(), path);
  if (!header.ok()) return header.status();
  f.header_ = std::move(*header);
  for (size_t i = 0; i < f.header_.tensors.size(); ++i) f.index_[f.header_.tensors[i].name] = i;
  return f;
}

const TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

absl::StatusOr<const TensorInfo*> SafetensorsFile::Get(std::string_view name) const {
  const TensorInfo* t = Find(name);
  if (t == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(path_, ": no tensor named '", std::string(name), "'"));
  }
  return t;
}

float Bf16ToFloat(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float F16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t man = h & 0x3FF;
  uint32_t u;
  if (exp == 0x1F) {
    u = sign | 0x7F800000u | (man << 13);  // Inf / NaN (payload kept)
  } else if (exp != 0) {
    u = sign | ((exp + 112) << 23) | (man << 13);  // rebias 15 -> 127
  } else {
    // Subnormal (or zero): man * 2^-24, exact in fp32.
    float f = static_cast<float>(man) * 5.9604644775390625e-8f;
    std::memcpy(&u, &f, 4);
    u |= sign;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

uint16_t FloatToF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00;           // NaN
  if (a >= 0x477FF000u) return sign | 0x7C00;          // rounds to >= 65536: Inf
  if (a >= 0x38800000u) {                              // normal half (>= 2^-14)
    const uint32_t r = a + 0xFFF + ((a >> 13) & 1);
    return static_cast<uint16_t>(sign | ((r >> 13) - (112u << 10)));
  }
  // Subnormal half: multiples of 2^-24, rounded by adding 2^-1 (ulp 2^-24 at that scale).
  float mag;
  std::memcpy(&mag, &a, 4);
  const float sum = mag + 0.5f;
  uint32_t s;
  std::memcpy(&s, &sum, 4);
  return static_cast<uint16_t>(sign | (s - 0x3F000000u));
}

absl::StatusOr<std::vector<float>> SafetensorsFile::ReadAsF32(const TensorInfo& t) const {
  const int64_t n = t.NumElements();
  std::vector<float> out(static_cast<size_t>(n));
  const uint8_t* p = Data(t);
  switch (t.dtype) {
    case Dtype::kF32:
      std::memcpy(out.data(), p, static_cast<size_t>(n) * 4);
      break;
    case Dtype::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, p + 2 * i, 2);
        out[i] = Bf16ToFloat(b);
      }
      break;
    case Dtype::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, p + 2 * i, 2);
        out[i] = F16ToFloat(b);
      }
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(path_, ": tensor '", t.name, "' is ",
                                                     DtypeName(t.dtype),
                                                     "; only F32, BF16 and F16 read as floats"));
  }
  return out;
}

absl::Status SafetensorsWriter::Check(const std::string& name, Dtype dtype,
                                      const std::vector<int64_t>& shape, size_t size) const {
  if (name == "__metadata__" || name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid tensor name '", name, "'"));
  }
  for (const Entry& e : entries_) {
    if (e.name == name) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' added twice"));
    }
  }
  uint64_t bytes = 0;
  if (!ByteCount(shape, DtypeSize(dtype), &bytes) || bytes != size) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': ", DtypeName(dtype),
                                                   " ", ShapeString(shape), " does not match ",
                                                   size, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::Add(const std::string& name, Dtype dtype,
                                    std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
  if (auto s = Check(name, dtype, shape, bytes.size()); !s.ok()) return s;
  Entry e{name, dtype, std::move(shape), std::move(bytes), nullptr, 0};
  e.size = e.owned.size();
  entries_.push_back(std::move(e));
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::AddBorrowed(const std::string& name, Dtype dtype,
                                            std::vector<int64_t> shape, const uint8_t* data,
                                            size_t size) {
  if (auto s = Check(name, dtype, shape, size); !s.ok()) return s;
  entries_.push_back(Entry{name, dtype, std::move(shape), {}, data, size});
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::Write(const std::string& path) const {
  std::string header = "{";
  if (!metadata_.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata_) {
      absl::StrAppend(&header, first ? "" : ",", JsonQuote(k), ":", JsonQuote(v));
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    absl::StrAppend(&header, (i > 0 || !metadata_.empty()) ? "," : "", JsonQuote(e.name),
                    ":{\"dtype\":\"", DtypeName(e.dtype), "\",\"shape\":[",
                    absl::StrJoin(e.shape, ","), "],\"data_offsets\":[", offset, ",",
                    offset + e.size, "]}");
    offset += e.size;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned

  const std::string tmp = TempPathFor(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return absl::InternalError(absl::StrCat(tmp, ": cannot create: ", std::strerror(errno)));
  }
  bool ok = true;
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i));
  ok = ok && std::fwrite(len, 1, 8, f) == 8;
  ok = ok && std::fwrite(header.data(), 1, header.size(), f) == header.size();
  for (const Entry& e : entries_) {
    const uint8_t* p = e.data != nullptr ? e.data : e.owned.data();
    ok = ok && (e.size == 0 || std::fwrite(p, 1, e.size, f) == e.size);
  }
  ok = ok && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  const int err = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat(path, ": write failed: ", std::strerror(ok ? errno : err)));
  }
  return absl::OkStatus();
}

}  // namespace qprof::weights
