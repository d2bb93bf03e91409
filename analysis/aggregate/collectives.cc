#include "analysis/aggregate/collectives.h"

#include <algorithm>
#include <cctype>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace qprof::aggregate {
namespace {

// Lower-case alphanumerics: "_allgather_base" -> "allgatherbase".
std::string Squash(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

bool Has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

const std::string* Arg(const proto::Activity& a, const char* key) {
  auto it = a.args().find(key);
  return it == a.args().end() ? nullptr : &it->second;
}

std::optional<uint64_t> ArgNumber(const proto::Activity& a, const char* key) {
  const std::string* v = Arg(a, key);
  uint64_t n = 0;
  if (v == nullptr || !absl::SimpleAtoi(*v, &n)) return std::nullopt;
  return n;
}

// The collective an NCCL NVTX range open at the launch names (nsys traces; the CUPTI
// collector keeps named domains apart in nvtx_domain_paths, nsys exports mix them into the
// path): the innermost "nccl<Op>" component that tells a type ("ncclGroupEnd" tells none).
std::string TypeFromNvtx(const proto::Activity& a) {
  auto from_path = [](std::string_view path) -> std::string {
    while (!path.empty()) {
      const size_t slash = path.rfind('/');
      std::string_view part = slash == std::string_view::npos ? path : path.substr(slash + 1);
      if (part.size() > 4 && Squash(part.substr(0, 4)) == "nccl") {
        std::string t = CollectiveTypeOfName(part.substr(4));
        if (!t.empty()) return t;
      }
      if (slash == std::string_view::npos) break;
      path = path.substr(0, slash);
    }
    return "";
  };
  for (const auto& [domain, path] : a.nvtx_domain_paths()) {
    if (std::string t = from_path(path); !t.empty()) return t;
  }
  return from_path(a.nvtx_path());
}

// "[0, 1, 2, 3]" -> "ranks 0-3", "[0, 2, 4]" -> "ranks 0,2,4" (the first 8 and a count
// beyond them); "" when the text is no list of ranks.
std::string RanksText(absl::string_view list) {
  std::vector<uint64_t> ranks;
  absl::string_view body = absl::StripAsciiWhitespace(list);
  if (body.size() < 2 || body.front() != '[' || body.back() != ']') return "";
  body = body.substr(1, body.size() - 2);
  for (absl::string_view part : absl::StrSplit(body, ',', absl::SkipWhitespace())) {
    uint64_t r = 0;
    if (!absl::SimpleAtoi(part, &r)) return "";
    ranks.push_back(r);
  }
  if (ranks.empty()) return "";
  bool run = true;
  for (size_t i = 1; i < ranks.size(); ++i) run &= ranks[i] == ranks[i - 1] + 1;
  if (run && ranks.size() > 1) return absl::StrCat("ranks ", ranks.front(), "-", ranks.back());
  std::vector<uint64_t> shown(ranks.begin(), ranks.begin() + std::min<size_t>(ranks.size(), 8));
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ", absl::StrJoin(shown, ","),
                      ranks.size() > shown.size() ? absl::StrCat(",... (", ranks.size(), ")") : "");
}

}  // namespace

std::string CollectiveTypeOfName(std::string_view name) {
  const std::string s = Squash(name);
  // Longer names first: "reducescatter" holds "reduce", "sendrecv" holds "send".
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"reducescatter", "reduce_scatter"}, {"allreduce", "all_reduce"},
      {"crossdevicereduce", "all_reduce"}, {"allgather", "all_gather"},
      {"alltoall", "all_to_all"},          {"sendrecv", "send_recv"},
      {"broadcast", "broadcast"},          {"dispatch", "dispatch"},
      {"combine", "combine"},              {"send", "send"},
      {"recv", "recv"},                    {"reduce", "reduce"},
      {"gather", "gather"},                {"scatter", "scatter"},
      {"barrier", "barrier"}};
  for (const auto& [pattern, type] : kTypes) {
    if (Has(s, pattern)) return std::string(type);
  }
  return "";
}

std::string CollectiveLibrary(std::string_view normalised) {
  const std::string s = Squash(normalised);
  if (Has(s, "deepep")) return "DeepEP";
  if (Has(s, "nccl")) return "NCCL";
  if (Has(s, "crossdevicereduce")) return "custom all-reduce";
  if (Has(s, "multimem")) return "symmetric memory";
  return "other";
}

uint32_t DtypeBytes(std::string_view dtype) {
  // c10::toString(ScalarType), as PyTorch's record_param_comms writes "dtype".
  static constexpr std::pair<std::string_view, uint32_t> kSizes[] = {
      {"Byte", 1},          {"Char", 1},           {"Short", 2},          {"Int", 4},
      {"Long", 8},          {"Half", 2},           {"Float", 4},          {"Double", 8},
      {"ComplexHalf", 4},   {"ComplexFloat", 8},   {"ComplexDouble", 16}, {"Bool", 1},
      {"QInt8", 1},         {"QUInt8", 1},         {"QInt32", 4},         {"BFloat16", 2},
      {"QUInt4x2", 1},      {"QUInt2x4", 1},       {"Bits8", 1},          {"Bits16", 2},
      {"Float8_e5m2", 1},   {"Float8_e4m3fn", 1},  {"Float8_e5m2fnuz", 1},
      {"Float8_e4m3fnuz", 1}, {"Float8_e8m0fnu", 1}, {"Float4_e2m1fn_x2", 1},
      {"UInt16", 2},        {"UInt32", 4},         {"UInt64", 8}};
  for (const auto& [name, bytes] : kSizes) {
    if (dtype == name) return bytes;
  }
  return 0;
}

std::optional<double> BusBandwidthFactor(std::string_view type, std::string_view library,
                                         uint32_t n, std::string* formula) {
  // nccl-tests doc/PERFORMANCE.md, "Summary": the factor that turns algbw = S/t into a
  // figure comparable with the hardware's per-rank link bandwidth.
  const double dn = static_cast<double>(n);
  if (type == "broadcast" || type == "reduce") {
    *formula = "1 (all data leaves or reaches the root)";
    return 1.0;
  }
  if (type == "send" || type == "recv" || type == "send_recv") {
    *formula = "1 (point-to-point: algbw is the bus bandwidth)";
    return 1.0;
  }
  const bool needs_n = type == "all_reduce" || type == "reduce_scatter" || type == "all_gather" || type == "all_to_all";
  if (!needs_n) {
    *formula = absl::StrCat("none: nccl-tests publishes no bus-bandwidth factor for ", std::string(type));
    return std::nullopt;
  }
  if (n < 2) {
    *formula = "unknown: needs the group size n, which the trace does not give";
    return std::nullopt;
  }
  if (type == "all_reduce" && library == "symmetric memory") {
    // NVLS multimem all-reduce reduces in the NVSwitch: the in-network factor.
    *formula = absl::StrCat("(n-1)/(n+1) with n = ", n, " (in-network reduction)");
    return (dn - 1) / (dn + 1);
  }
  if (type == "all_reduce") {
    *formula = absl::StrCat("2(n-1)/n with n = ", n);
    return 2.0 * (dn - 1) / dn;
  }
  *formula = absl::StrCat("(n-1)/n with n = ", n);
  return (dn - 1) / dn;
}

CollectiveLaunch DescribeCollective(const proto::Activity& a, const std::string& normalised,
                                    const proto::TraceHeader& header) {
  CollectiveLaunch c;
  CollectiveKey& k = c.key;
  k.library = CollectiveLibrary(normalised);
  if (const std::string* n = Arg(a, "Collective name")) k.name = CollectiveTypeOfName(*n);
  if (k.name.empty()) k.name = CollectiveTypeOfName(normalised);
  if (k.name.empty()) k.name = TypeFromNvtx(a);
  if (k.name.empty()) k.name = "unknown";
  const std::string* pg = Arg(a, "Process Group Name");
  const std::string* desc = Arg(a, "Process Group Description");
  const std::optional<uint64_t> size = ArgNumber(a, "Group size");
  if (pg != nullptr) {
    // PyTorch describes groups it did not name as "undefined": the group is then told by its
    // ranks (or its size), never by that word.
    const std::string* ranks = Arg(a, "Process Group Ranks");
    const std::string ranks_text = ranks != nullptr ? RanksText(*ranks) : "";
    const bool named = desc != nullptr && !desc->empty() && *desc != "undefined";
    k.process_group = named                  ? absl::StrCat(*pg, " (", *desc, ")")
                      : !ranks_text.empty()  ? absl::StrCat(*pg, " (", ranks_text, ")")
                      : size && *size > 0    ? absl::StrCat(*pg, " (", *size, " ranks)")
                                             : *pg;
  }
  const auto& extra = header.run().extra();
  const auto pg_size = pg != nullptr ? extra.find(absl::StrCat("distributed.pg_size.", *pg))
                                     : extra.end();
  uint32_t pg_n = 0;
  if (auto n = size; n && *n > 0 && *n < (1u << 31)) {
    k.group_size = static_cast<uint32_t>(*n);
    k.group_size_source = "Kineto \"Group size\"";
  } else if (pg_size != extra.end() && absl::SimpleAtoi(pg_size->second, &pg_n) && pg_n > 0) {
    k.group_size = pg_n;
    k.group_size_source = "distributedInfo.pg_config (pg_size of its process group)";
  } else if (header.run().tp() > 0) {
    k.group_size = header.run().tp();
    k.group_size_source = "run info: tensor-parallel degree";
  } else if (auto w = extra.find("distributed.world_size");
             pg == nullptr && w != extra.end() && absl::SimpleAtoi(w->second, &pg_n) && pg_n > 1) {
    // A collective whose process group the trace does not name (vLLM's custom all-reduce)
    // is taken to span the world the trace states; the source says so.
    k.group_size = pg_n;
    k.group_size_source = "distributedInfo.world_size (the trace names no process group)";
  }
  // S: the larger of the input and output element counts (all-gather's output and
  // reduce-scatter's input are the whole buffer) times the element size.
  const std::optional<uint64_t> in = ArgNumber(a, "In msg nelems");
  const std::optional<uint64_t> out = ArgNumber(a, "Out msg nelems");
  const std::string* dtype = Arg(a, "dtype");
  if (in || out) {
    const uint32_t size = dtype != nullptr ? DtypeBytes(*dtype) : 0;
    if (size > 0) {
      c.bytes = std::max(in.value_or(0), out.value_or(0)) * size;
      c.bytes_source = "Kineto: max(\"In msg nelems\", \"Out msg nelems\") x sizeof(\"dtype\")";
    } else {
      c.bytes_source = absl::StrCat("unknown: Kineto gives element counts but dtype \"",
                                    dtype != nullptr ? *dtype : "", "\" has no known size");
    }
  } else if (a.work().comm_bytes() > 0) {
    c.bytes = static_cast<uint64_t>(a.work().comm_bytes());
    c.bytes_source = "registry work model (comm_bytes)";
  } else {
    c.bytes_source =
        "unknown: the trace has no message size (Kineto records one only with "
        "record_param_comms; nsys exports NCCL's NVTX payloads only when NCCL was profiled "
        "with them)";
  }
  return c;
}

CopyKey CopyKeyOf(const proto::Activity& a) {
  CopyKey k;
  if (a.kind() == proto::ACTIVITY_KIND_MEMSET) {
    k.kind = "memset";
    k.memory = a.dst_memory();
  } else {
    k.kind = a.copy_kind().empty() ? "unknown" : a.copy_kind();
    if (!a.src_memory().empty() || !a.dst_memory().empty()) {
      k.memory = absl::StrCat(a.src_memory().empty() ? "unknown" : a.src_memory(), " -> ",
                              a.dst_memory().empty() ? "unknown" : a.dst_memory());
    }
  }
  return k;
}

void CollectiveAcc::Merge(const CollectiveAcc& o, uint32_t trace_offset) {
  calls += o.calls;
  time_ns += o.time_ns;
  graph_calls += o.graph_calls;
  graph_time_ns += o.graph_time_ns;
  if (calls_with_bytes == 0 && o.calls_with_bytes > 0) bytes_source = o.bytes_source;
  if (bytes_source.empty()) bytes_source = o.bytes_source;
  bytes += o.bytes;
  calls_with_bytes += o.calls_with_bytes;
  time_with_bytes_ns += o.time_with_bytes_ns;
  for (const auto& [t, d] : o.devices) devices.emplace(t + trace_offset, d);
}

void CopyAcc::Merge(const CopyAcc& o, uint32_t trace_offset) {
  calls += o.calls;
  bytes += o.bytes;
  time_ns += o.time_ns;
  graph_calls += o.graph_calls;
  for (const auto& [t, d] : o.devices) devices.emplace(t + trace_offset, d);
}

}  // namespace qprof::aggregate
