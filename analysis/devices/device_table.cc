#include "analysis/devices/device_table.h"

#include <map>
#include <set>
#include <string>

#include "base/status_macros.h"
#include "fmt/core.h"
#include "simdjson.h"

namespace qprof::devices {
namespace {

using Sources = std::map<std::string, std::string, std::less<>>;

// The figures every device file gives, and where each goes.
struct FigureField {
  const char* key;
  Figure DeviceSpec::*field;
};
constexpr FigureField kFigures[] = {
    {"sm_count", &DeviceSpec::sm_count},
    {"memory_gb", &DeviceSpec::memory_gb},
    {"memory_bandwidth_gbps", &DeviceSpec::memory_bandwidth_gbps},
    {"fp32_simt_tflops", &DeviceSpec::fp32_simt_tflops},
    {"tf32_tensor_tflops", &DeviceSpec::tf32_tensor_tflops},
    {"bf16_tensor_tflops", &DeviceSpec::bf16_tensor_tflops},
    {"fp16_tensor_tflops", &DeviceSpec::fp16_tensor_tflops},
    {"fp8_tensor_tflops", &DeviceSpec::fp8_tensor_tflops},
    {"fp6_tensor_tflops", &DeviceSpec::fp6_tensor_tflops},
    {"fp4_tensor_tflops", &DeviceSpec::fp4_tensor_tflops},
    {"interconnect_gbps", &DeviceSpec::interconnect_gbps},
    {"host_link_gbps", &DeviceSpec::host_link_gbps},
    {"launch_overhead_us", &DeviceSpec::launch_overhead_us},
    {"boost_clock_mhz", &DeviceSpec::boost_clock_mhz},
};

absl::Status Bad(std::string_view file, std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("device table {}: {}", file, what));
}

absl::StatusOr<Sources> ReadSources(simdjson::dom::object doc, std::string_view file) {
  Sources out;
  simdjson::dom::object sources;
  if (doc["sources"].get(sources) != simdjson::SUCCESS) return out;
  for (auto [key, value] : sources) {
    std::string_view text;
    if (value.get(text) != simdjson::SUCCESS || text.empty()) {
      return Bad(file, fmt::format("source '{}' is not a non-empty string", key));
    }
    out.emplace(std::string(key), std::string(text));
  }
  return out;
}

// [value, "source key"] -> Figure, the key resolved in the file's sources, then common's.
absl::StatusOr<Figure> ReadFigure(simdjson::dom::element e, std::string_view file,
                                  std::string_view name, const Sources& own,
                                  const Sources& common) {
  simdjson::dom::array pair;
  double value = 0;
  std::string_view key;
  if (e.get(pair) != simdjson::SUCCESS || pair.size() != 2 ||
      pair.at(0).get(value) != simdjson::SUCCESS || pair.at(1).get(key) != simdjson::SUCCESS) {
    return Bad(file, fmt::format("{}: expected [value, \"source key\"]", name));
  }
  if (value < 0) return Bad(file, fmt::format("{}: negative value", name));
  auto it = own.find(key);
  if (it == own.end()) it = common.find(key);
  if (it == common.end()) return Bad(file, fmt::format("{}: unknown source '{}'", name, key));
  return Figure{value, it->second};
}

absl::StatusOr<std::string> ReadString(simdjson::dom::object doc, std::string_view file,
                                       const char* key) {
  std::string_view s;
  if (doc[key].get(s) != simdjson::SUCCESS || s.empty()) {
    return Bad(file, fmt::format("'{}' is missing or not a string", key));
  }
  return std::string(s);
}

absl::StatusOr<std::vector<std::string>> ReadStrings(simdjson::dom::element e,
                                                     std::string_view file, std::string_view key) {
  std::vector<std::string> out;
  simdjson::dom::array arr;
  if (e.get(arr) != simdjson::SUCCESS) return Bad(file, fmt::format("{}: expected a list", key));
  for (simdjson::dom::element x : arr) {
    std::string_view s;
    if (x.get(s) != simdjson::SUCCESS) return Bad(file, fmt::format("{}: not a string", key));
    out.emplace_back(s);
  }
  return out;
}

absl::StatusOr<DeviceSpec> ReadDevice(simdjson::dom::object doc, std::string_view file,
                                      const Sources& common) {
  ASSIGN_OR_RETURN(Sources own, ReadSources(doc, file));
  DeviceSpec d;
  ASSIGN_OR_RETURN(d.key, ReadString(doc, file, "key"));
  ASSIGN_OR_RETURN(d.name, ReadString(doc, file, "name"));
  ASSIGN_OR_RETURN(d.vendor, ReadString(doc, file, "vendor"));
  ASSIGN_OR_RETURN(d.arch, ReadString(doc, file, "arch"));
  ASSIGN_OR_RETURN(d.interconnect, ReadString(doc, file, "interconnect"));
  ASSIGN_OR_RETURN(d.host_link, ReadString(doc, file, "host_link"));
  if (d.vendor != "NVIDIA" && d.vendor != "AMD") return Bad(file, "vendor must be NVIDIA or AMD");
  std::set<std::string, std::less<>> seen;
  double latency_cycles = -1;
  for (auto [key, value] : doc) {
    seen.emplace(key);
    if (key == "aliases") {
      ASSIGN_OR_RETURN(d.aliases, ReadStrings(value, file, key));
    } else if (key == "match") {
      simdjson::dom::object m;
      std::string_view contains;
      simdjson::dom::element excludes;
      if (value.get(m) != simdjson::SUCCESS || m["contains"].get(contains) != simdjson::SUCCESS ||
          contains.empty() || m["excludes"].get(excludes) != simdjson::SUCCESS) {
        return Bad(file, "match: expected {\"contains\": \"...\", \"excludes\": [...]}");
      }
      d.match_contains = std::string(contains);
      ASSIGN_OR_RETURN(d.match_excludes, ReadStrings(excludes, file, "match.excludes"));
    } else if (key == "measured_copy_gbps") {
      ASSIGN_OR_RETURN(d.measured_copy_gbps, ReadFigure(value, file, key, own, common));
    } else if (key == "warp_size") {
      ASSIGN_OR_RETURN(d.warp_size, ReadFigure(value, file, key, own, common));
    } else if (key == "memory_latency_cycles") {
      ASSIGN_OR_RETURN(Figure f, ReadFigure(value, file, key, own, common));
      latency_cycles = f.value;
      d.memory_latency_ns.source = f.source;
    } else if (key == "key" || key == "name" || key == "vendor" || key == "arch" ||
               key == "interconnect" || key == "host_link" || key == "sources") {
      continue;  // read above
    } else {
      bool known = false;
      for (const FigureField& f : kFigures) {
        if (key != f.key) continue;
        ASSIGN_OR_RETURN(d.*f.field, ReadFigure(value, file, key, own, common));
        known = true;
      }
      if (!known) return Bad(file, fmt::format("unknown field '{}'", key));
    }
  }
  for (const FigureField& f : kFigures) {
    if (!seen.count(f.key)) return Bad(file, fmt::format("'{}' is missing", f.key));
  }
  if (d.match_contains.empty()) return Bad(file, "'match' is missing");
  if (latency_cycles < 0) return Bad(file, "'memory_latency_cycles' is missing");
  if (d.boost_clock_mhz.value <= 0) return Bad(file, "boost_clock_mhz must be positive");
  // A load's latency in cycles over the SM clock: cycles / MHz * 1000 = ns.
  d.memory_latency_ns.value = latency_cycles / d.boost_clock_mhz.value * 1000.0;
  if (d.warp_size.value == 0) {
    d.warp_size =
        Figure{32, "CUDA C++ Programming Guide: warp size 32 on every compute capability"};
  }
  return d;
}

}  // namespace

absl::StatusOr<std::vector<DeviceSpec>> ParseDeviceTable(const std::vector<EmbeddedText>& files) {
  simdjson::dom::parser parser;
  Sources common;
  for (const EmbeddedText& f : files) {
    if (f.name != "common.json") continue;
    simdjson::dom::object doc;
    if (parser.parse(f.text.data(), f.text.size()).get(doc) != simdjson::SUCCESS) {
      return Bad(f.name, "not a JSON object");
    }
    ASSIGN_OR_RETURN(common, ReadSources(doc, f.name));
  }
  std::vector<DeviceSpec> out;
  std::set<std::string> keys;
  for (const EmbeddedText& f : files) {
    if (f.name == "common.json") continue;
    simdjson::dom::object doc;
    if (parser.parse(f.text.data(), f.text.size()).get(doc) != simdjson::SUCCESS) {
      return Bad(f.name, "not a JSON object");
    }
    ASSIGN_OR_RETURN(DeviceSpec d, ReadDevice(doc, f.name, common));
    if (!keys.insert(d.key).second) return Bad(f.name, fmt::format("key '{}' twice", d.key));
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace qprof::devices
