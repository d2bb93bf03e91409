#include "analysis/importers/kineto/kineto_event.h"

#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/common/launch_context.h"

namespace qprof::importers {
namespace {

namespace od = simdjson::ondemand;

bool Eq(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(absl::string_view(a.data(), a.size()),
                                absl::string_view(b.data(), b.size()));
}

std::string Unquote(std::string_view tok) {
  while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' ||
                          tok.back() == '\t')) {
    tok.remove_suffix(1);
  }
  if (tok.size() >= 2 && tok.front() == '"' && tok.back() == '"') tok = tok.substr(1, tok.size() - 2);
  return Utf8Clean(tok);
}

bool IsIgnoredArg(std::string_view k) {
  static constexpr std::string_view kIgnored[] = {
      "External id", "external id", "queued", "context", "blocks per SM", "warps per SM",
      "est. achieved occupancy %", "theoretical occupancy %", "cbid", "Ev Idx",
      "memory bandwidth (GB/s)", "device", "stream", "correlation", "grid", "block",
      "registers per thread", "shared memory", "bytes"};
  for (std::string_view s : kIgnored) {
    if (k == s) return true;
  }
  return false;
}

// A JSON array's text without the whitespace between tokens (strings kept verbatim), so
// equal arrays intern to one frame whatever the writer's indentation.
void CompactJson(std::string_view raw, std::string* out) {
  out->clear();
  out->reserve(raw.size());
  bool in_string = false, escaped = false;
  for (char c : raw) {
    if (in_string) {
      out->push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '"') in_string = true;
    out->push_back(c);
  }
}

// A JSON string literal for `s` (quotes and backslashes escaped, control bytes as \u00XX).
void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[(c >> 4) & 0xF]);
      out->push_back(kHex[c & 0xF]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

// A non-negative integer as ParseUint reads `tok`, the token of `v`: through simdjson's
// parser when it is a plain JSON integer, as nearly all are, and ParseUint for the rest
// (it tolerates "42.0" and quoted digits, and refuses what simdjson refuses).
template <typename Value>
std::optional<uint64_t> UintOf(Value&& v, std::string_view tok) {
  if (uint64_t n = 0; std::forward<Value>(v).get_uint64().get(n) == simdjson::SUCCESS) return n;
  return ParseUint(tok);
}

// The top-level fields of an event that are read. Every field of every event is looked up,
// so the key's first byte picks the one name it can be before a comparison.
enum class EventField { kOther, kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs };

EventField EventFieldOf(od::raw_json_string key) {
  switch (key.raw()[0]) {
    case 'p':
      return key == "ph" ? EventField::kPh : key == "pid" ? EventField::kPid : EventField::kOther;
    case 'c':
      return key == "cat" ? EventField::kCat : EventField::kOther;
    case 'n':
      return key == "name" ? EventField::kName : EventField::kOther;
    case 't':
      return key == "ts" ? EventField::kTs : key == "tid" ? EventField::kTid : EventField::kOther;
    case 'd':
      return key == "dur" ? EventField::kDur : EventField::kOther;
    case 'a':
      return key == "args" ? EventField::kArgs : EventField::kOther;
    default:
      return EventField::kOther;
  }
}

}  // namespace

KinetoEventKind KindOfCategory(std::string_view cat) {
  struct Category {
    std::string_view name;
    KinetoEventKind kind;
  };
  static constexpr Category kCategories[] = {
      {"cpu_op", KinetoEventKind::kCpuOp},
      {"cuda_runtime", KinetoEventKind::kRuntime},
      {"python_function", KinetoEventKind::kPythonFunction},
      {"kernel", KinetoEventKind::kKernel},
      {"gpu_memcpy", KinetoEventKind::kMemcpy},
      {"gpu_memset", KinetoEventKind::kMemset},
      {"user_annotation", KinetoEventKind::kUserAnnotation},
      {"gpu_user_annotation", KinetoEventKind::kGpuUserAnnotation},
      {"cuda_driver", KinetoEventKind::kRuntime},
      {"cuda_profiler_range", KinetoEventKind::kProfilerRange},
      {"memcpy", KinetoEventKind::kMemcpy},
      {"memset", KinetoEventKind::kMemset},
      {"runtime", KinetoEventKind::kRuntime},
      {"driver", KinetoEventKind::kRuntime},
      {"operator", KinetoEventKind::kCpuOp},
  };
  // Every event asks: the length rules out most names, and writers spell them as here.
  for (const Category& c : kCategories) {
    if (c.name.size() == cat.size() && (cat == c.name || Eq(cat, c.name))) return c.kind;
  }
  return KinetoEventKind::kIgnored;
}

simdjson::error_code KinetoEventDecoder::ReadId(od::value v, KinetoEvent::IdField field,
                                                KinetoEvent* e, uint64_t* out) {
  // Most ids are plain integers: simdjson's parser takes them without asking for the type.
  if (uint64_t n = 0; v.get_uint64().get(n) == simdjson::SUCCESS) {
    *out = n;
    return simdjson::SUCCESS;
  }
  od::json_type t;
  SIMDJSON_TRY(v.type().get(t));
  if (t == od::json_type::string) {
    std::string_view s;
    SIMDJSON_TRY(v.get_string().get(s));
    if (auto n = TrailingNumber(s)) {
      *out = *n;
      return simdjson::SUCCESS;
    }
    e->text_ids.emplace_back(field, std::string(s));
    return simdjson::SUCCESS;
  }
  std::string_view tok = v.raw_json_token();
  if (auto n = ParseUint(tok)) {
    *out = *n;
  } else {
    // Negative or beyond 64 bits: a stable stand-in id rather than a failure.
    e->text_ids.emplace_back(field, std::string(tok));
  }
  return simdjson::SUCCESS;
}

void IdNumbering::Resolve(KinetoEvent* e) {
  for (const auto& [field, text] : e->text_ids) {
    auto [it, inserted] = ids_.try_emplace(text, 0);
    if (inserted) it->second = (uint64_t{1} << 31) + ids_.size();
    if (field == KinetoEvent::IdField::kPid) {
      e->pid_num = static_cast<uint32_t>(it->second);
    } else {
      e->tid_num = it->second;
    }
  }
}

simdjson::error_code KinetoEventDecoder::Decode(od::object& obj, KinetoEvent* e) {
  e->kind = KinetoEventKind::kIgnored;
  e->name.clear();
  e->has_ts = e->has_dur = e->has_correlation = false;
  e->ts_ns = e->dur_ns = 0;
  e->pid_num = 0;
  e->tid_num = 0;
  e->correlation = 0;
  e->gpu = {};
  e->extra_args.clear();
  e->launch_kernel.clear();
  e->metrics.clear();
  e->text_ids.clear();
  e->shapes.clear();
  e->name_hash = e->shapes_hash = 0;
  input_dims_.clear();
  input_types_.clear();
  concrete_inputs_.clear();
  bool have_cat = false, is_complete = true;
  for (auto field_result : obj) {
    od::field field;
    SIMDJSON_TRY(std::move(field_result).get(field));
    const EventField which = EventFieldOf(field.key());
    if (which == EventField::kPh) {
      std::string_view ph;
      SIMDJSON_TRY(field.value().get_string().get(ph));
      is_complete = ph == "X";
      if (!is_complete) {
        e->kind = KinetoEventKind::kIgnored;
        return simdjson::SUCCESS;
      }
    } else if (which == EventField::kCat) {
      std::string_view cat;
      SIMDJSON_TRY(field.value().get_string().get(cat));
      e->kind = KindOfCategory(cat);
      have_cat = true;
      if (e->kind == KinetoEventKind::kIgnored) return simdjson::SUCCESS;
    } else if (which == EventField::kName) {
      std::string_view name;
      SIMDJSON_TRY(field.value().get_string().get(name));
      e->name.assign(name.data(), name.size());  // simdjson validated the UTF-8
    } else if (which == EventField::kPid) {
      uint64_t pid = 0;
      SIMDJSON_TRY(ReadId(field.value(), KinetoEvent::IdField::kPid, e, &pid));
      e->pid_num = static_cast<uint32_t>(pid);
    } else if (which == EventField::kTid) {
      SIMDJSON_TRY(ReadId(field.value(), KinetoEvent::IdField::kTid, e, &e->tid_num));
    } else if (which == EventField::kTs || which == EventField::kDur) {
      std::string_view tok = field.value().raw_json_token();
      // A time given as a string ("dur": "12") is not a number in the trace-event format: the
      // event counts as having no time (skipped with a warning), never silently summed.
      std::optional<int64_t> ns =
          !tok.empty() && tok.front() == '"' ? std::nullopt : MicrosToNs(tok);
      if (which == EventField::kTs) {
        e->has_ts = ns.has_value();
        e->ts_ns = ns.value_or(0);
      } else {
        e->has_dur = ns.has_value();
        e->dur_ns = ns.value_or(0);
      }
    } else if (which == EventField::kArgs) {
      if (have_cat && e->kind == KinetoEventKind::kCpuOp) {
        // An operator's recorded shapes (record_shapes=True): the work of what it launched.
        od::object args;
        if (field.value().get_object().get(args) != simdjson::SUCCESS) continue;
        SIMDJSON_TRY(DecodeOpShapes(args, e));
        continue;
      }
      if (have_cat && (e->kind == KinetoEventKind::kUserAnnotation ||
                       e->kind == KinetoEventKind::kPythonFunction)) {
        continue;  // these frames need nothing from args (GPU annotations need device/stream)
      }
      od::object args;
      if (field.value().get_object().get(args) != simdjson::SUCCESS) continue;
      SIMDJSON_TRY(DecodeArgs(args, e));
    }
  }
  if (!have_cat) e->kind = KinetoEventKind::kIgnored;
  if (e->kind == KinetoEventKind::kIgnored) return simdjson::SUCCESS;
  e->name_hash = PrehashedStrings::Hash(e->name);
  if (e->kind == KinetoEventKind::kCpuOp) {
    e->shapes = PackShapes(input_dims_, input_types_, concrete_inputs_);
    e->shapes_hash = PrehashedStrings::Hash(e->shapes);
  }
  return simdjson::SUCCESS;
}

// "Input Dims" and "Input type" kept as compact JSON; "Concrete Inputs" rebuilt with the
// values KeepConcreteValue keeps (others blank). The name comes before args in Kineto's
// writer; when it does not, every value is kept blank but flags and lists.
simdjson::error_code KinetoEventDecoder::DecodeOpShapes(od::object& args, KinetoEvent* e) {
  for (auto field_result : args) {
    od::field field;
    SIMDJSON_TRY(std::move(field_result).get(field));
    od::raw_json_string key = field.key();
    const bool dims = key == "Input Dims";
    const bool types = !dims && key == "Input type";
    const bool concrete = !dims && !types && key == "Concrete Inputs";
    if (!dims && !types && !concrete) continue;
    od::array arr;
    if (field.value().get_array().get(arr) != simdjson::SUCCESS) continue;
    if (!concrete) {
      std::string_view raw;
      SIMDJSON_TRY(arr.raw_json().get(raw));
      CompactJson(raw, dims ? &input_dims_ : &input_types_);
      continue;
    }
    std::string& out = concrete_inputs_;
    out.clear();
    out.push_back('[');
    bool first = true;
    for (auto v : arr) {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) s = "";
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(KeepConcreteValue(e->name, s) ? s : std::string_view(), &out);
    }
    out.push_back(']');
  }
  return simdjson::SUCCESS;
}

simdjson::error_code KinetoEventDecoder::DecodeArgs(od::object& args, KinetoEvent* e) {
  const bool all_metrics = e->kind == KinetoEventKind::kProfilerRange;
  for (auto field_result : args) {
    od::field field;
    SIMDJSON_TRY(std::move(field_result).get(field));
    std::string_view key;
    SIMDJSON_TRY(field.unescaped_key().get(key));
    od::value v = field.value();
    if (key == "grid" || key == "block") {
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) continue;
      uint32_t* dst = key == "grid" ? e->gpu.grid : e->gpu.block;
      int i = 0;
      for (auto x : arr) {
        std::string_view tok;
        SIMDJSON_TRY(x.raw_json_token().get(tok));
        if (i < 3) dst[i++] = static_cast<uint32_t>(UintOf(x, tok).value_or(0));
      }
      continue;
    }
    od::json_type t;
    SIMDJSON_TRY(v.type().get(t));
    if (t == od::json_type::object || t == od::json_type::array) continue;  // skipped
    std::string_view tok = v.raw_json_token();
    if (all_metrics) {
      if (t == od::json_type::number) {
        if (auto d = ParseDouble(tok)) e->metrics.emplace_back(Utf8Clean(key), *d);
      }
      continue;
    }
    if (key == "correlation") {
      if (auto n = UintOf(v, tok)) {
        e->correlation = *n;
        e->has_correlation = true;
      }
    } else if (key == "device") {
      if (auto n = UintOf(v, tok)) {
        e->gpu.device = *n;
        e->gpu.has_device = true;
      }
    } else if (key == "stream") {
      if (auto n = UintOf(v, tok)) {
        e->gpu.stream = *n;
        e->gpu.has_stream = true;
      }
    } else if (key == "registers per thread") {
      e->gpu.registers = static_cast<uint32_t>(UintOf(v, tok).value_or(0));
    } else if (key == "shared memory") {
      e->gpu.shared_memory = static_cast<uint32_t>(UintOf(v, tok).value_or(0));
    } else if (key == "bytes") {
      e->gpu.bytes = UintOf(v, tok).value_or(0);
    } else if (key == "est. achieved occupancy %" && e->kind == KinetoEventKind::kKernel) {
      if (auto d = ParseDouble(tok)) {
        e->gpu.reported_occupancy_pct = *d;
        e->gpu.has_reported_occupancy = true;
      }
    } else if (key == "kernel" && e->kind == KinetoEventKind::kRuntime &&
               t == od::json_type::string) {
      e->launch_kernel = Unquote(tok);  // kernel names hold no JSON escapes
    } else if (e->kind == KinetoEventKind::kKernel && !IsIgnoredArg(key)) {
      // Collective args of NCCL kernels and the like, verbatim.
      e->extra_args.emplace_back(Utf8Clean(key), Unquote(tok));
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace qprof::importers
