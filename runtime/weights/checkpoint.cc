#include "runtime/weights/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "simdjson.h"

namespace qprof::weights {
namespace {

namespace fs = std::filesystem;

int64_t Product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

absl::Status Misshapen(const std::string& dir, const std::string& name, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(dir, ": tensor '", name, "': ", what));
}

// Reads a JSON file with the DOM API (config files are small). NotFound passes through.
absl::StatusOr<simdjson::dom::element> ParseJsonFile(const std::string& path,
                                                     simdjson::dom::parser& parser) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  simdjson::dom::element doc;
  if (parser.parse(*text).get(doc) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid JSON"));
  }
  return doc;
}

// Appends the strings of an array member; a missing member or other types add nothing.
void StringList(simdjson::simdjson_result<simdjson::dom::element> e,
                std::vector<std::string>* out) {
  simdjson::dom::array arr;
  if (e.get_array().get(arr) != simdjson::SUCCESS) return;
  for (auto item : arr) {
    std::string_view s;
    if (item.get_string().get(s) == simdjson::SUCCESS) out->emplace_back(s);
  }
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const char* CheckpointFormatName(CheckpointFormat f) {
  switch (f) {
    case CheckpointFormat::kMxfp4: return "mxfp4";
    case CheckpointFormat::kNvfp4: return "nvfp4";
    case CheckpointFormat::kNone: break;
  }
  return "none";
}

absl::StatusOr<Checkpoint> Checkpoint::Open(const std::string& path) {
  Checkpoint c;
  std::error_code ec;
  std::vector<std::string> shards;
  if (fs::is_regular_file(path, ec)) {
    c.dir_ = fs::path(path).parent_path().string();
    if (c.dir_.empty()) c.dir_ = ".";
    shards.push_back(path);
  } else if (fs::is_directory(path, ec)) {
    c.dir_ = path;
    const std::string index = (fs::path(path) / "model.safetensors.index.json").string();
    if (fs::exists(index, ec)) {
      simdjson::dom::parser parser;
      auto doc = ParseJsonFile(index, parser);
      if (!doc.ok()) return doc.status();
      simdjson::dom::object map;
      if ((*doc)["weight_map"].get_object().get(map) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(absl::StrCat(index, ": no \"weight_map\" object"));
      }
      std::set<std::string> files;
      for (auto [key, value] : map) {
        std::string_view f;
        if (value.get_string().get(f) != simdjson::SUCCESS) {
          return absl::InvalidArgumentError(
              absl::StrCat(index, ": weight_map entry '", std::string(key), "' is not a string"));
        }
        files.insert((fs::path(path) / std::string(f)).string());
      }
      shards.assign(files.begin(), files.end());
    } else {
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.path().extension() == ".safetensors") shards.push_back(entry.path().string());
      }
      std::sort(shards.begin(), shards.end());
    }
  } else {
    return absl::NotFoundError(absl::StrCat(path, ": no such checkpoint folder or file"));
  }
  if (shards.empty()) {
    return absl::NotFoundError(absl::StrCat(path, ": no .safetensors files"));
  }
  for (const std::string& shard : shards) {
    auto f = SafetensorsFile::Open(shard);
    if (!f.ok()) return f.status();
    c.files_.push_back(std::make_unique<SafetensorsFile>(std::move(*f)));
    const SafetensorsFile* file = c.files_.back().get();
    for (const TensorInfo& t : file->tensors()) {
      if (!c.stored_.emplace(t.name, Stored{file, &t}).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(shard, ": tensor '", t.name, "' is also stored in another shard"));
      }
    }
  }
  if (auto s = c.ReadConfig(); !s.ok()) return s;
  if (auto s = c.Index(); !s.ok()) return s;
  return c;
}

absl::Status Checkpoint::ReadConfig() {
  simdjson::dom::parser parser;
  const std::string hf_quant = (fs::path(dir_) / "hf_quant_config.json").string();
  auto q = ParseJsonFile(hf_quant, parser);
  if (q.ok()) {
    simdjson::dom::element quant;
    if ((*q)["quantization"].get(quant) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat(hf_quant, ": no \"quantization\" object"));
    }
    std::string_view algo;
    if (quant["quant_algo"].get_string().get(algo) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat(hf_quant, ": no quantization.quant_algo"));
    }
    bool nvfp4 = Lower(algo) == "nvfp4";
    if (Lower(algo) == "mixed_precision") {
      simdjson::dom::object layers;
      if (quant["quantized_layers"].get_object().get(layers) == simdjson::SUCCESS) {
        for (auto [layer, cfg] : layers) {
          std::string_view a;
          if (cfg["quant_algo"].get_string().get(a) == simdjson::SUCCESS && Lower(a) == "nvfp4") {
            nvfp4 = true;
          }
        }
      }
    }
    if (!nvfp4) {
      return absl::InvalidArgumentError(absl::StrCat(
          hf_quant, ": quant_algo '", std::string(algo), "' is not supported (NVFP4 is)"));
    }
    format_ = CheckpointFormat::kNvfp4;
    format_source_ = "hf_quant_config.json";
    StringList(quant["exclude_modules"], &excluded_);
    return absl::OkStatus();
  } else if (!absl::IsNotFound(q.status())) {
    return q.status();
  }
  const std::string config = (fs::path(dir_) / "config.json").string();
  auto cfg = ParseJsonFile(config, parser);
  if (!cfg.ok()) return absl::IsNotFound(cfg.status()) ? absl::OkStatus() : cfg.status();
  simdjson::dom::element qc;
  if ((*cfg)["quantization_config"].get(qc) != simdjson::SUCCESS) return absl::OkStatus();
  std::string_view method, algo;
  const bool has_method = qc["quant_method"].get_string().get(method) == simdjson::SUCCESS;
  const bool has_algo = qc["quant_algo"].get_string().get(algo) == simdjson::SUCCESS;
  if (has_method && Lower(method) == "mxfp4") {
    format_ = CheckpointFormat::kMxfp4;
    StringList(qc["modules_to_not_convert"], &excluded_);
  } else if (has_algo && Lower(algo) == "nvfp4") {
    format_ = CheckpointFormat::kNvfp4;
    StringList(qc["exclude_modules"], &excluded_);
    StringList(qc["ignore"], &excluded_);
  } else {
    return absl::OkStatus();  // some other quantization: tensors stay plain
  }
  format_source_ = "config.json";
  return absl::OkStatus();
}

absl::Status Checkpoint::Index() {
  std::set<std::string> nv_bases, mx_bases;
  for (const auto& [name, stored] : stored_) {
    if (absl::EndsWith(name, ".weight_scale_2")) {
      nv_bases.insert(name.substr(0, name.size() - std::strlen("_scale_2")));
    } else if (absl::EndsWith(name, ".weight_scale")) {
      nv_bases.insert(name.substr(0, name.size() - std::strlen("_scale")));
    } else if (absl::EndsWith(name, "_blocks")) {
      mx_bases.insert(name.substr(0, name.size() - std::strlen("_blocks")));
    } else if (absl::EndsWith(name, "_scales") && format_ == CheckpointFormat::kMxfp4) {
      mx_bases.insert(name.substr(0, name.size() - std::strlen("_scales")));
    }
  }
  for (const std::string& b : nv_bases) {
    if (auto s = AddNvfp4(b); !s.ok()) return s;
  }
  for (const std::string& b : mx_bases) {
    if (auto s = AddMxfp4(b); !s.ok()) return s;
  }
  if (format_ == CheckpointFormat::kNone && !quantized_.empty()) {
    // No config file: the tensor names decide (both layouts are unambiguous).
    format_ = quantized_.begin()->second.kind;
    format_source_ = "tensor names";
  }
  return absl::OkStatus();
}

absl::Status Checkpoint::AddNvfp4(const std::string& base) {
  const std::string scale = base + "_scale", scale2 = base + "_scale_2";
  for (const std::string& n : {base, scale, scale2}) {
    if (!stored_.count(n)) {
      return absl::NotFoundError(absl::StrCat(dir_, ": NVFP4 tensor '", n, "' is missing (",
                                              "needed with '", base, "')"));
    }
  }
  const TensorInfo& w = *stored_.at(base).info;
  const TensorInfo& s = *stored_.at(scale).info;
  const TensorInfo& s2 = *stored_.at(scale2).info;
  if (w.dtype != Dtype::kU8 || w.shape.size() < 2) {
    return Misshapen(dir_, base, absl::StrCat("NVFP4 packed weight must be U8 [..., N, K/2], is ",
                                              DtypeName(w.dtype), " ", ShapeString(w.shape)));
  }
  std::vector<int64_t> shape = w.shape;
  shape.back() *= 2;
  const int64_t k = shape.back();
  std::vector<int64_t> want_scale = w.shape;
  want_scale.back() = k / fp4::kNvfp4BlockSize;
  if (k % fp4::kNvfp4BlockSize != 0) {
    return Misshapen(dir_, base, absl::StrCat("K = ", k, " is not a multiple of 16"));
  }
  if ((s.dtype != Dtype::kF8E4M3 && s.dtype != Dtype::kU8) || s.shape != want_scale) {
    return Misshapen(dir_, scale, absl::StrCat("expected F8_E4M3 ", ShapeString(want_scale),
                                               ", found ", DtypeName(s.dtype), " ",
                                               ShapeString(s.shape)));
  }
  const int64_t experts = shape.size() >= 3 ? shape[0] : 1;
  if (s2.dtype != Dtype::kF32 || (s2.NumElements() != 1 && s2.NumElements() != experts)) {
    return Misshapen(dir_, scale2, absl::StrCat("expected an F32 scalar (or [", experts,
                                                "] per expert), found ", DtypeName(s2.dtype), " ",
                                                ShapeString(s2.shape)));
  }
  quantized_[base] = Quantized{CheckpointFormat::kNvfp4, shape, base, scale, scale2};
  return absl::OkStatus();
}

absl::Status Checkpoint::AddMxfp4(const std::string& base) {
  const std::string blocks = base + "_blocks", scales = base + "_scales";
  for (const std::string& n : {blocks, scales}) {
    if (!stored_.count(n)) {
      return absl::NotFoundError(absl::StrCat(dir_, ": MXFP4 tensor '", n, "' is missing (",
                                              "needed with '", base, "')"));
    }
  }
  const TensorInfo& b = *stored_.at(blocks).info;
  const TensorInfo& s = *stored_.at(scales).info;
  if (b.dtype != Dtype::kU8 || b.shape.size() < 3 || b.shape.back() != 16) {
    return Misshapen(dir_, blocks, absl::StrCat("MXFP4 blocks must be U8 [..., N, K/32, 16], is ",
                                                DtypeName(b.dtype), " ", ShapeString(b.shape)));
  }
  std::vector<int64_t> want_scales(b.shape.begin(), b.shape.end() - 1);
  if ((s.dtype != Dtype::kU8 && s.dtype != Dtype::kF8E8M0) || s.shape != want_scales) {
    return Misshapen(dir_, scales, absl::StrCat("expected U8 ", ShapeString(want_scales),
                                                ", found ", DtypeName(s.dtype), " ",
                                                ShapeString(s.shape)));
  }
  std::vector<int64_t> shape(b.shape.begin(), b.shape.end() - 2);
  shape.push_back(b.shape[b.shape.size() - 2] * fp4::kMxfp4BlockSize);
  quantized_[base] = Quantized{CheckpointFormat::kMxfp4, shape, blocks, scales, ""};
  return absl::OkStatus();
}

std::vector<std::string> Checkpoint::QuantizedNames() const {
  std::vector<std::string> out;
  for (const auto& [name, q] : quantized_) out.push_back(name);
  return out;
}

std::vector<std::string> Checkpoint::PlainNames() const {
  std::set<std::string> parts;
  for (const auto& [name, q] : quantized_) {
    parts.insert(q.packed);
    parts.insert(q.scales);
    if (!q.scale2.empty()) parts.insert(q.scale2);
  }
  std::vector<std::string> out;
  for (const auto& [name, stored] : stored_) {
    if (!parts.count(name) && !quantized_.count(name)) out.push_back(name);
  }
  return out;
}

bool Checkpoint::IsQuantized(std::string_view name) const {
  return quantized_.find(name) != quantized_.end();
}

absl::StatusOr<std::vector<int64_t>> Checkpoint::Shape(std::string_view name) const {
  if (auto it = quantized_.find(name); it != quantized_.end()) return it->second.shape;
  if (auto it = stored_.find(name); it != stored_.end()) return it->second.info->shape;
  return absl::NotFoundError(absl::StrCat(dir_, ": no tensor named '", std::string(name), "'"));
}

absl::StatusOr<Checkpoint::Stored> Checkpoint::Raw(std::string_view physical_name) const {
  auto it = stored_.find(physical_name);
  if (it == stored_.end()) {
    return absl::NotFoundError(
        absl::StrCat(dir_, ": no stored tensor named '", std::string(physical_name), "'"));
  }
  return it->second;
}

absl::StatusOr<std::vector<uint8_t>> Checkpoint::Bytes(const std::string& physical) const {
  auto st = Raw(physical);
  if (!st.ok()) return st.status();
  const uint8_t* p = st->file->Data(*st->info);
  return std::vector<uint8_t>(p, p + (st->info->end - st->info->begin));
}

absl::StatusOr<const Checkpoint::Quantized*> Checkpoint::FindQuantized(
    std::string_view name, CheckpointFormat want) const {
  auto it = quantized_.find(name);
  if (it == quantized_.end()) {
    return absl::NotFoundError(absl::StrCat(dir_, ": no ", CheckpointFormatName(want),
                                            " tensor named '", std::string(name), "'"));
  }
  if (it->second.kind != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir_, ": tensor '", std::string(name), "' is ", CheckpointFormatName(it->second.kind),
        ", not ", CheckpointFormatName(want)));
  }
  return &it->second;
}

absl::StatusOr<fp4::Nvfp4Matrix> Checkpoint::LoadNvfp4(std::string_view name) const {
  auto q = FindQuantized(name, CheckpointFormat::kNvfp4);
  if (!q.ok()) return q.status();
  auto s2 = Raw((*q)->scale2);
  if (!s2.ok()) return s2.status();
  if (s2->info->NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir_, ": tensor '", (*q)->scale2, "' holds one scale per expert; load '",
        std::string(name), "' with LoadNvfp4Experts"));
  }
  fp4::Nvfp4Matrix m;
  m.cols = (*q)->shape.back();
  m.rows = Product((*q)->shape, 0, (*q)->shape.size() - 1);
  std::memcpy(&m.scale2, s2->file->Data(*s2->info), 4);
  auto packed = Bytes((*q)->packed);
  auto scales = Bytes((*q)->scales);
  if (!packed.ok()) return packed.status();
  if (!scales.ok()) return scales.status();
  m.packed = std::move(*packed);
  m.scales = std::move(*scales);
  return m;
}

absl::StatusOr<std::vector<fp4::Nvfp4Matrix>> Checkpoint::LoadNvfp4Experts(
    std::string_view name) const {
  auto q = FindQuantized(name, CheckpointFormat::kNvfp4);
  if (!q.ok()) return q.status();
  const auto& shape = (*q)->shape;
  const int64_t experts = shape.size() >= 3 ? shape[0] : 1;
  const int64_t rows = Product(shape, shape.size() >= 3 ? 1 : 0, shape.size() - 1);
  const int64_t cols = shape.back();
  auto s2 = Raw((*q)->scale2);
  auto p = Raw((*q)->packed);
  auto s = Raw((*q)->scales);
  if (!s2.ok() || !p.ok() || !s.ok()) return absl::InternalError("checkpoint index out of date");
  const float* scale2 = reinterpret_cast<const float*>(s2->file->Data(*s2->info));
  const uint8_t* packed = p->file->Data(*p->info);
  const uint8_t* scales = s->file->Data(*s->info);
  const size_t packed_per = rows * cols / 2, scales_per = rows * cols / fp4::kNvfp4BlockSize;
  std::vector<fp4::Nvfp4Matrix> out(experts);
  for (int64_t e = 0; e < experts; ++e) {
    fp4::Nvfp4Matrix& m = out[e];
    m.rows = rows;
    m.cols = cols;
    std::memcpy(&m.scale2, scale2 + (s2->info->NumElements() == 1 ? 0 : e), 4);
    m.packed.assign(packed + e * packed_per, packed + (e + 1) * packed_per);
    m.scales.assign(scales + e * scales_per, scales + (e + 1) * scales_per);
  }
  return out;
}

absl::StatusOr<fp4::Mxfp4Matrix> Checkpoint::LoadMxfp4(std::string_view name) const {
  auto q = FindQuantized(name, CheckpointFormat::kMxfp4);
  if (!q.ok()) return q.status();
  fp4::Mxfp4Matrix m;
  m.cols = (*q)->shape.back();
  m.rows = Product((*q)->shape, 0, (*q)->shape.size() - 1);
  auto packed = Bytes((*q)->packed);
  auto scales = Bytes((*q)->scales);
  if (!packed.ok()) return packed.status();
  if (!scales.ok()) return scales.status();
  m.packed = std::move(*packed);
  m.scales = std::move(*scales);
  return m;
}

absl::StatusOr<std::vector<fp4::Mxfp4Matrix>> Checkpoint::LoadMxfp4Experts(
    std::string_view name) const {
  auto whole = LoadMxfp4(name);
  if (!whole.ok()) return whole.status();
  auto shape = *Shape(name);
  const int64_t experts = shape.size() >= 3 ? shape[0] : 1;
  const int64_t rows = whole->rows / experts, cols = whole->cols;
  const size_t packed_per = rows * cols / 2, scales_per = rows * cols / fp4::kMxfp4BlockSize;
  std::vector<fp4::Mxfp4Matrix> out(experts);
  for (int64_t e = 0; e < experts; ++e) {
    out[e].rows = rows;
    out[e].cols = cols;
    out[e].packed.assign(whole->packed.begin() + e * packed_per,
                         whole->packed.begin() + (e + 1) * packed_per);
    out[e].scales.assign(whole->scales.begin() + e * scales_per,
                         whole->scales.begin() + (e + 1) * scales_per);
  }
  return out;
}

absl::StatusOr<std::vector<float>> Checkpoint::Dequantize(std::string_view name) const {
  auto it = quantized_.find(name);
  if (it == quantized_.end()) {
    auto st = Raw(name);
    if (!st.ok()) return st.status();
    return st->file->ReadAsF32(*st->info);
  }
  const auto& shape = it->second.shape;
  std::vector<float> out(static_cast<size_t>(Product(shape, 0, shape.size())));
  if (it->second.kind == CheckpointFormat::kMxfp4) {
    auto m = LoadMxfp4(name);
    if (!m.ok()) return m.status();
    fp4::DequantizeMxfp4(*m, out.data());
    return out;
  }
  auto experts = LoadNvfp4Experts(name);  // handles shared and per-expert weight_scale_2
  if (!experts.ok()) return experts.status();
  float* o = out.data();
  for (const auto& m : *experts) {
    fp4::DequantizeNvfp4(m, o);
    o += m.rows * m.cols;
  }
  return out;
}

}  // namespace qprof::weights
