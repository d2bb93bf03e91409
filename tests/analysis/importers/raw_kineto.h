// A plain reader of raw Kineto JSON(.gz) for test oracles: the whole document parsed with
// simdjson's DOM (not the importer's streaming path), events flattened into structs. Tests
// compute what they expect from these, never from the importer or the analyzer.
#ifndef QPROF_TESTS_IMPORTERS_RAW_KINETO_H_
#define QPROF_TESTS_IMPORTERS_RAW_KINETO_H_

#include <zlib.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "simdjson.h"

namespace qprof::testing_raw {

struct RawEvent {
  std::string cat;   // lower case
  std::string name;
  int64_t pid = -1, tid = -1;
  double ts = 0, dur = 0;  // microseconds
  bool has_dur = false;
  std::optional<uint64_t> correlation;
  int64_t device = -1, stream = -1;
  int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int64_t registers = 0, shared_memory = 0;
  std::optional<double> est_occupancy;  // "est. achieved occupancy %"
  std::optional<uint64_t> bytes;        // copies and memsets: "bytes"
  // Scalar args as text (numbers as written, strings unquoted): collective args and the like.
  std::map<std::string, std::string> text_args;
};

inline std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

inline int64_t AsInt(simdjson::dom::element e) {
  if (e.is_int64()) return e.get_int64().value();
  if (e.is_uint64()) return static_cast<int64_t>(e.get_uint64().value());
  if (e.is_double()) return static_cast<int64_t>(e.get_double().value());
  if (e.is_string()) {
    std::string s(e.get_string().value());
    size_t i = s.find_last_not_of("0123456789");
    std::string digits = i == std::string::npos ? s : s.substr(i + 1);
    return digits.empty() ? -1 : std::stoll(digits);
  }
  return -1;
}

inline double AsDouble(simdjson::dom::element e) {
  if (e.is_double()) return e.get_double().value();
  if (e.is_int64()) return static_cast<double>(e.get_int64().value());
  if (e.is_uint64()) return static_cast<double>(e.get_uint64().value());
  return 0;
}

struct RawTrace {
  std::vector<RawEvent> events;  // ph "X" only
  std::map<int64_t, std::map<std::string, int64_t>> device_props;  // id -> numeric fields
};

inline RawTrace ReadRaw(const std::string& json) {
  RawTrace out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json);
  simdjson::dom::array props;
  if (!doc["deviceProperties"].get(props)) {
    for (simdjson::dom::element p : props) {
      std::map<std::string, int64_t> m;
      for (auto [k, v] : p.get_object()) {
        if (v.is_number()) m[std::string(k)] = AsInt(v);
      }
      out.device_props[m["id"]] = m;
    }
  }
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view ph, cat;
    if (e["ph"].get(ph) || ph != "X" || e["cat"].get(cat)) continue;
    RawEvent r;
    for (char c : cat) r.cat.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    std::string_view name;
    if (!e["name"].get(name)) r.name = std::string(name);
    simdjson::dom::element v;
    if (!e["pid"].get(v)) r.pid = AsInt(v);
    if (!e["tid"].get(v)) r.tid = AsInt(v);
    if (!e["ts"].get(v)) r.ts = AsDouble(v);
    if (!e["dur"].get(v)) { r.dur = AsDouble(v); r.has_dur = true; }
    simdjson::dom::object args;
    if (!e["args"].get(args)) {
      for (auto [k, a] : args) {
        if (k == "correlation") r.correlation = static_cast<uint64_t>(AsInt(a));
        else if (k == "device") r.device = AsInt(a);
        else if (k == "stream") r.stream = AsInt(a);
        else if (k == "registers per thread") r.registers = AsInt(a);
        else if (k == "shared memory") r.shared_memory = AsInt(a);
        else if (k == "est. achieved occupancy %") r.est_occupancy = AsDouble(a);
        else if (k == "bytes") r.bytes = static_cast<uint64_t>(AsInt(a));
        else if ((k == "grid" || k == "block") && a.is_array()) {
          int i = 0;
          for (simdjson::dom::element x : a.get_array()) {
            if (i < 3) (k == "grid" ? r.grid : r.block)[i++] = AsInt(x);
          }
        }
        if (a.is_string()) {
          r.text_args[std::string(k)] = std::string(a.get_string().value());
        } else if (a.is_int64() || a.is_uint64()) {
          r.text_args[std::string(k)] = std::to_string(AsInt(a));
        }
      }
    }
    out.events.push_back(std::move(r));
  }
  return out;
}

}  // namespace qprof::testing_raw

#endif  // QPROF_TESTS_IMPORTERS_RAW_KINETO_H_
