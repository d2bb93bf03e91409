#include "runtime/weights/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/text.h"
#include "base/file_util.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"
#include "runtime/weights/safetensors.h"
#include "simdjson.h"

namespace qprof::weights {
namespace {

namespace fs = std::filesystem;

struct ErrorSums {
  double sq_err = 0;
  double sq_ref = 0;
  double max_abs = 0;
};

ErrorSums CompareRange(const float* x, const float* y, int64_t begin, int64_t end) {
  ErrorSums s;
  for (int64_t i = begin; i < end; ++i) {
    const double d = static_cast<double>(x[i]) - y[i];
    s.sq_err += d * d;
    s.sq_ref += static_cast<double>(x[i]) * x[i];
    s.max_abs = std::max(s.max_abs, std::abs(d));
  }
  return s;
}

// Error statistics of the dequantized y against the input x, split over `threads`.
ErrorSums Compare(const float* x, const float* y, int64_t n, int threads) {
  const int parts = std::max(1, std::min<int>(threads, static_cast<int>(n / (1 << 20))));
  std::vector<ErrorSums> sums(parts);
  std::vector<std::thread> workers;
  const int64_t step = (n + parts - 1) / parts;
  for (int p = 1; p < parts; ++p) {
    workers.emplace_back([&, p] {
      sums[p] = CompareRange(x, y, p * step, std::min(n, (p + 1) * step));
    });
  }
  sums[0] = CompareRange(x, y, 0, std::min(n, step));
  for (auto& w : workers) w.join();
  ErrorSums total;
  for (const ErrorSums& s : sums) {
    total.sq_err += s.sq_err;
    total.sq_ref += s.sq_ref;
    total.max_abs = std::max(total.max_abs, s.max_abs);
  }
  return total;
}

std::string StripWeight(const std::string& name) {
  return absl::EndsWith(name, ".weight") ? name.substr(0, name.size() - 7) : name;
}

std::string JsonStringArray(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& s : items) quoted.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

// The input folder's config.json members (minified) other than `skip`, or "" if none.
std::string ConfigMembersExcept(const std::string& input, const std::string& skip) {
  const fs::path cfg = fs::path(input).parent_path() / "config.json";
  auto text = ReadFile(cfg.string());
  if (!text.ok()) return "";
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(*text).get_object().get(obj) != simdjson::SUCCESS) return "";
  std::string out;
  for (auto [key, value] : obj) {
    if (std::string_view(key) == skip) continue;
    absl::StrAppend(&out, "  ", JsonQuote(std::string_view(key)), ": ", simdjson::minify(value),
                    ",\n");
  }
  return out;
}

// Why a tensor stays as it is, or "" when it is converted.
std::string SkipReason(const TensorInfo& t, const std::string& format, int block,
                       const std::vector<std::regex>& exclude,
                       const std::vector<std::string>& exclude_text) {
  for (size_t i = 0; i < exclude.size(); ++i) {
    if (std::regex_search(t.name, exclude[i])) return absl::StrCat("--exclude '", exclude_text[i], "'");
  }
  if (t.dtype != Dtype::kF32 && t.dtype != Dtype::kBF16 && t.dtype != Dtype::kF16) {
    return absl::StrCat("dtype ", DtypeName(t.dtype));
  }
  if (t.shape.size() < 2) return absl::StrCat(t.shape.size(), "-D");
  if (t.NumElements() == 0) return "empty";
  if (t.shape.back() % block != 0) {
    return absl::StrCat("K = ", t.shape.back(), " not a multiple of ", block);
  }
  if (format == "nvfp4" && !absl::EndsWith(t.name, ".weight")) {
    return "name does not end in .weight (ModelOpt layout)";
  }
  return "";
}

template <typename T>
std::vector<uint8_t> ScalarBytes(T v) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

absl::StatusOr<std::vector<std::regex>> CompileExcludes(const std::vector<std::string>& text) {
  std::vector<std::regex> out;
  for (const std::string& e : text) {
    try {
      out.emplace_back(e, std::regex::ECMAScript);
    } catch (const std::regex_error& err) {
      return absl::InvalidArgumentError(
          absl::StrCat("--exclude '", e, "' is not a valid regular expression: ", err.what()));
    }
  }
  return out;
}

// The tensor's values as F32: in place when F32 and aligned (our writer and PyTorch's keep
// it so), else widened into *scratch.
absl::StatusOr<const float*> AsF32(const SafetensorsFile& in, const TensorInfo& t,
                                   std::vector<float>* scratch) {
  if (t.dtype == Dtype::kF32 && reinterpret_cast<uintptr_t>(in.Data(t)) % 4 == 0) {
    return reinterpret_cast<const float*>(in.Data(t));
  }
  auto w = in.ReadAsF32(t);
  if (!w.ok()) return w.status();
  *scratch = std::move(*w);
  return scratch->data();
}

// ModelOpt NVFP4: `name` packed [.., K/2], `name`_scale E4M3 [.., K/16], `name`_scale_2.
absl::Status AddNvfp4(const TensorInfo& t, const float* x, int64_t rows, int64_t cols,
                      int threads, SafetensorsWriter* writer, float* dequant,
                      TensorQuantReport* tr) {
  auto amax = fp4::AbsMaxFinite(x, rows, cols, t.name, threads);
  if (!amax.ok()) return amax.status();
  auto m = fp4::QuantizeNvfp4WithScale2(x, rows, cols, fp4::Nvfp4Scale2ForAmax(*amax), t.name,
                                        threads);
  if (!m.ok()) return m.status();
  fp4::DequantizeNvfp4(*m, dequant, threads);
  std::vector<int64_t> packed_shape(t.shape.begin(), t.shape.end() - 1), scale_shape = packed_shape;
  packed_shape.push_back(cols / 2);
  scale_shape.push_back(cols / fp4::kNvfp4BlockSize);
  tr->outputs = {t.name, t.name + "_scale", t.name + "_scale_2"};
  tr->output_bytes = m->packed.size() + m->scales.size() + 4;
  absl::Status s = writer->Add(tr->outputs[0], Dtype::kU8, packed_shape, std::move(m->packed));
  if (s.ok()) s = writer->Add(tr->outputs[1], Dtype::kF8E4M3, scale_shape, std::move(m->scales));
  if (s.ok()) s = writer->Add(tr->outputs[2], Dtype::kF32, {}, ScalarBytes(m->scale2));
  return s;
}

// gpt-oss MXFP4: `base`_blocks U8 [.., K/32, 16] and `base`_scales UE8M0 [.., K/32].
absl::Status AddMxfp4(const TensorInfo& t, const float* x, int64_t rows, int64_t cols,
                      int threads, SafetensorsWriter* writer, float* dequant,
                      TensorQuantReport* tr) {
  const int block = fp4::kMxfp4BlockSize;
  auto m = fp4::QuantizeMxfp4(x, rows, cols, t.name, threads);
  if (!m.ok()) return m.status();
  fp4::DequantizeMxfp4(*m, dequant, threads);
  const std::string base = StripWeight(t.name);
  std::vector<int64_t> blocks_shape(t.shape.begin(), t.shape.end() - 1), scales_shape = blocks_shape;
  blocks_shape.push_back(cols / block);
  blocks_shape.push_back(block / 2);
  scales_shape.push_back(cols / block);
  tr->outputs = {base + "_blocks", base + "_scales"};
  tr->output_bytes = m->packed.size() + m->scales.size();
  absl::Status s = writer->Add(tr->outputs[0], Dtype::kU8, blocks_shape, std::move(m->packed));
  if (s.ok()) s = writer->Add(tr->outputs[1], Dtype::kU8, scales_shape, std::move(m->scales));
  return s;
}

// Quantizes one tensor into `writer`; its error statistics against the input.
absl::StatusOr<ErrorSums> ConvertTensor(const SafetensorsFile& in, const TensorInfo& t,
                                        const QuantizeOptions& options,
                                        SafetensorsWriter* writer, TensorQuantReport* tr) {
  std::vector<float> widened;
  auto x = AsF32(in, t, &widened);
  if (!x.ok()) return x.status();
  const int64_t n = t.NumElements(), cols = t.shape.back(), rows = n / cols;
  std::vector<float> dequant(static_cast<size_t>(n));
  absl::Status s = options.format == "nvfp4"
                       ? AddNvfp4(t, *x, rows, cols, options.threads, writer, dequant.data(), tr)
                       : AddMxfp4(t, *x, rows, cols, options.threads, writer, dequant.data(), tr);
  if (!s.ok()) return s;
  const ErrorSums e = Compare(*x, dequant.data(), n, options.threads);
  tr->converted = true;
  tr->rel_rms_error = e.sq_ref > 0 ? std::sqrt(e.sq_err / e.sq_ref) : 0.0;
  tr->max_abs_error = e.max_abs;
  return e;
}

// The checkpoint's config files: ModelOpt's hf_quant_config.json (+ the model's own
// config.json when the input folder has one) or gpt-oss's config.json with
// quantization_config.
absl::Status WriteQuantConfig(const std::string& input, const std::string& out_dir,
                              const std::string& format, QuantizeReport* report) {
  const std::string modules = JsonStringArray(report->not_converted_modules);
  if (format == "mxfp4") {
    const std::string path = (fs::path(out_dir) / "config.json").string();
    const std::string json = absl::StrCat(
        "{\n", ConfigMembersExcept(input, "quantization_config"),
        "  \"quantization_config\": {\n    \"quant_method\": \"mxfp4\",\n",
        "    \"modules_to_not_convert\": ", modules, "\n  }\n}\n");
    if (auto s = WriteFileAtomic(path, json); !s.ok()) return s;
    report->files.push_back(path);
    return absl::OkStatus();
  }
  const std::string path = (fs::path(out_dir) / "hf_quant_config.json").string();
  const std::string json = absl::StrCat(
      "{\n  \"producer\": {\"name\": \"qprof\", \"version\": \"", QPROF_QUANTIZE_VERSION,
      "\"},\n  \"quantization\": {\n    \"quant_algo\": \"NVFP4\",\n",
      "    \"kv_cache_quant_algo\": null,\n    \"group_size\": 16,\n",
      "    \"exclude_modules\": ", modules, "\n  }\n}\n");
  if (auto s = WriteFileAtomic(path, json); !s.ok()) return s;
  report->files.push_back(path);
  // Keep the model's own config next to the weights when the input folder has one.
  const std::string members = ConfigMembersExcept(input, "");
  if (members.empty()) return absl::OkStatus();
  const std::string cfg = (fs::path(out_dir) / "config.json").string();
  std::string body = "{\n" + members;
  body.resize(body.size() - 2);  // drop the last ",\n"
  if (auto s = WriteFileAtomic(cfg, body + "\n}\n"); !s.ok()) return s;
  report->files.push_back(cfg);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<QuantizeReport> QuantizeSafetensors(const std::string& input,
                                                   const std::string& out_dir,
                                                   const QuantizeOptions& options) {
  const std::string& format = options.format;
  if (format != "mxfp4" && format != "nvfp4") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format must be mxfp4 or nvfp4, not '", format, "'"));
  }
  const int block = format == "nvfp4" ? fp4::kNvfp4BlockSize : fp4::kMxfp4BlockSize;
  auto exclude = CompileExcludes(options.exclude);
  if (!exclude.ok()) return exclude.status();
  auto in = SafetensorsFile::Open(input);
  if (!in.ok()) return in.status();
  if (auto s = MakeDirs(out_dir); !s.ok()) return s;

  QuantizeReport report;
  report.format = format;
  SafetensorsWriter writer;
  for (const auto& [k, v] : in->metadata()) writer.SetMetadata(k, v);
  writer.SetMetadata("quantized_by", absl::StrCat("qprof quantize --format ", format));
  uint64_t total_bytes = 0, done_bytes = 0;
  for (const TensorInfo& t : in->tensors()) total_bytes += t.end - t.begin;
  report.input_bytes = total_bytes;
  ErrorSums all;
  std::set<std::string> not_converted;
  size_t index = 0;
  for (const TensorInfo& t : in->tensors()) {
    TensorQuantReport tr;
    tr.name = t.name;
    tr.shape = t.shape;
    tr.dtype = DtypeName(t.dtype);
    tr.input_bytes = t.end - t.begin;
    tr.reason = SkipReason(t, format, block, *exclude, options.exclude);
    if (tr.reason.empty()) {
      auto e = ConvertTensor(*in, t, options, &writer, &tr);
      if (!e.ok()) return e.status();
      all.sq_err += e->sq_err;
      all.sq_ref += e->sq_ref;
      all.max_abs = std::max(all.max_abs, e->max_abs);
    } else {  // kept as it is
      if (auto s = writer.AddBorrowed(t.name, t.dtype, t.shape, in->Data(t), tr.input_bytes);
          !s.ok()) {
        return s;
      }
      tr.outputs = {t.name};
      tr.output_bytes = tr.input_bytes;
      if (t.shape.size() >= 1) not_converted.insert(StripWeight(t.name));
    }
    done_bytes += tr.input_bytes;
    report.tensors.push_back(std::move(tr));
    if (options.progress) options.progress(done_bytes, total_bytes, ++index, in->tensors().size());
  }
  report.rel_rms_error = all.sq_ref > 0 ? std::sqrt(all.sq_err / all.sq_ref) : 0.0;
  report.max_abs_error = all.max_abs;
  report.not_converted_modules.assign(not_converted.begin(), not_converted.end());
  const std::string model = (fs::path(out_dir) / "model.safetensors").string();
  if (auto s = writer.Write(model); !s.ok()) return s;
  report.files.push_back(model);
  std::error_code ec;
  report.output_bytes = fs::file_size(model, ec);
  if (auto s = WriteQuantConfig(input, out_dir, format, &report); !s.ok()) return s;
  return report;
}

}  // namespace qprof::weights
