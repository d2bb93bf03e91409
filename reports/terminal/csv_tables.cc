#include "reports/terminal/csv_tables.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fmt/format.h"

namespace qprof::reports {
namespace {

// A table under construction: the header, then rows of already formatted fields.
class Csv {
 public:
  explicit Csv(std::vector<std::string> header) { Row(header); }
  void Row(const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) out_ += ',';
      out_ += CsvField(fields[i]);
    }
    out_ += '\n';
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string Num(uint64_t v) { return std::to_string(v); }
std::string Num(int64_t v) { return std::to_string(v); }
// Shortest text that reads back as the same double.
std::string Num(double v) { return fmt::format("{}", v); }
std::string Opt(bool has, double v) { return has ? Num(v) : std::string(); }

std::string Classes(const proto::Profile& p) {
  Csv t({"class", "time_ns", "share", "calls"});
  for (const auto& r : p.classes()) t.Row({r.class_(), Num(r.time_ns()), Num(r.share()), Num(r.calls())});
  return t.Take();
}

std::string Kernels(const proto::Profile& p) {
  Csv t({"rank", "name", "raw_name", "calls", "time_ns", "share", "mean_ns", "median_ns",
         "p90_ns", "min_ns", "max_ns", "class", "role", "format", "evidence",
         "evidence_detail", "tensor_pipe_pct", "kernel_id", "provenance"});
  int i = 0;
  for (const auto& k : p.kernels()) {
    t.Row({Num(static_cast<int64_t>(++i)), k.name(), k.raw_name(), Num(k.calls()),
           Num(k.time_ns()), Num(k.share()), Num(k.mean_ns()), Num(k.median_ns()),
           Num(k.p90_ns()), Num(k.min_ns()), Num(k.max_ns()), k.class_(), k.role(), k.format(),
           k.evidence(), k.evidence_detail(), Opt(k.has_tensor_pipe_pct(), k.tensor_pipe_pct()),
           k.kernel_id(), k.provenance()});
  }
  return t.Take();
}

std::string Roles(const proto::Profile& p) {
  Csv t({"role", "class", "time_ns", "share", "calls", "speedup_if_vanished"});
  for (const auto& r : p.roles()) {
    // Amdahl: removing a share f of the time leaves (1 - f): speedup 1 / (1 - f).
    t.Row({r.role(), r.class_(), Num(r.time_ns()), Num(r.share()), Num(r.calls()),
           r.share() < 1 ? Num(1.0 / (1.0 - r.share())) : "inf"});
  }
  return t.Take();
}

std::string Ranges(const proto::Profile& p) {
  Csv t({"path", "time_ns", "share", "calls"});
  for (const auto& r : p.ranges()) t.Row({r.path(), Num(r.time_ns()), Num(r.share()), Num(r.calls())});
  return t.Take();
}

std::string Ranks(const proto::Profile& p) {
  Csv t({"rank", "source", "kernel_time_ns", "busy_time_ns", "span_ns", "idle_ns",
         "kernel_count", "comm_time_ns", "comm_share", "compute_time_ns", "compute_vs_median",
         "slowest"});
  for (const auto& r : p.ranks()) {
    t.Row({Num(static_cast<uint64_t>(r.rank())), r.source(), Num(r.kernel_time_ns()),
           Num(r.busy_time_ns()), Num(r.span_ns()), Num(r.idle_ns()), Num(r.kernel_count()),
           Num(r.comm_time_ns()), Num(r.comm_share()), Num(r.compute_time_ns()),
           Num(r.compute_vs_median()), r.slowest() ? "true" : "false"});
  }
  return t.Take();
}

std::string DiffRows(const google::protobuf::RepeatedPtrField<proto::DiffRow>& rows,
                     bool kernels) {
  std::vector<std::string> header = {"key"};
  if (kernels) {
    for (const char* h : {"role", "status", "a_name", "b_name", "a_raw_name", "b_raw_name"}) {
      header.push_back(h);
    }
  }
  for (const char* h : {"a_class", "b_class", "a_time_ns", "b_time_ns", "delta_ns", "a_share",
                        "b_share", "delta_share", "a_calls", "b_calls", "ratio"}) {
    header.push_back(h);
  }
  Csv t(header);
  for (const auto& r : rows) {
    std::vector<std::string> f = {r.key()};
    if (kernels) {
      for (const std::string* s : {&r.role(), &r.status(), &r.a_name(), &r.b_name(),
                                   &r.a_raw_name(), &r.b_raw_name()}) {
        f.push_back(*s);
      }
    }
    for (std::string s : {r.a_class(), r.b_class(), Num(r.a_time_ns()), Num(r.b_time_ns()),
                          Num(r.delta_ns()), Num(r.a_share()), Num(r.b_share()),
                          Num(r.delta_share()), Num(r.a_calls()), Num(r.b_calls()),
                          Opt(r.has_ratio(), r.ratio())}) {
      f.push_back(std::move(s));
    }
    t.Row(f);
  }
  return t.Take();
}

std::string DiffRanks(const proto::Diff& d) {
  Csv t({"rank", "status", "a_compute_ns", "b_compute_ns", "a_kernel_time_ns",
         "b_kernel_time_ns", "a_comm_share", "b_comm_share", "compute_ratio"});
  for (const auto& r : d.ranks()) {
    t.Row({Num(static_cast<uint64_t>(r.rank())), r.status(), Num(r.a_compute_ns()),
           Num(r.b_compute_ns()), Num(r.a_kernel_time_ns()), Num(r.b_kernel_time_ns()),
           Num(r.a_comm_share()), Num(r.b_comm_share()),
           Opt(r.has_compute_ratio(), r.compute_ratio())});
  }
  return t.Take();
}

template <typename T>
absl::StatusOr<std::string> Render(
    const T& in, const std::vector<std::string>& all, std::vector<std::string> tables,
    const std::map<std::string, std::function<std::string(const T&)>>& makers) {
  if (tables.empty()) tables = all;
  for (const std::string& name : tables) {
    if (std::find(all.begin(), all.end(), name) == all.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--table ", name, ": no such table (choices: ", absl::StrJoin(all, ", "), ")"));
    }
  }
  if (tables.size() == 1) return makers.at(tables[0])(in);
  std::string out;
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i) out += "\n";
    out += "# " + tables[i] + "\n" + makers.at(tables[i])(in);
  }
  return out;
}

}  // namespace

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

const std::vector<std::string>& ProfileCsvTables() {
  static const auto* t = new std::vector<std::string>{"classes", "kernels", "roles", "ranges", "ranks"};
  return *t;
}

const std::vector<std::string>& DiffCsvTables() {
  static const auto* t = new std::vector<std::string>{"classes", "roles", "kernels", "ranks"};
  return *t;
}

absl::StatusOr<std::string> ProfileCsv(const proto::Profile& profile,
                                       const std::vector<std::string>& tables) {
  using P = proto::Profile;
  return Render<P>(profile, ProfileCsvTables(), tables,
                   {{"classes", Classes}, {"kernels", Kernels}, {"roles", Roles},
                    {"ranges", Ranges}, {"ranks", Ranks}});
}

absl::StatusOr<std::string> DiffCsv(const proto::Diff& diff,
                                    const std::vector<std::string>& tables) {
  using D = proto::Diff;
  return Render<D>(diff, DiffCsvTables(), tables,
                   {{"classes", [](const D& d) { return DiffRows(d.classes(), false); }},
                    {"roles", [](const D& d) { return DiffRows(d.roles(), false); }},
                    {"kernels", [](const D& d) { return DiffRows(d.kernels(), true); }},
                    {"ranks", DiffRanks}});
}

}  // namespace qprof::reports
