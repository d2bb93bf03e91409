#include "analysis/importers/nsys_stats/nsys_stats_csv.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "analysis/importers/common/csv_reader.h"
#include "analysis/importers/common/import_util.h"
#include "base/file_util.h"
#include "base/status_macros.h"

namespace qprof::importers {
namespace {

// How far into the file the header row may be (nsys prints notices before the table when
// the output goes to stdout).
constexpr size_t kHeaderSearchBytes = 64 * 1024;
// Launches are laid out one by one; a summary counting more than this (a whole day of a
// busy GPU is ~1e9) is refused rather than taking minutes. The real decode summaries seen
// count under 2e6.
constexpr double kMaxLaunches = 2e8;

// "Total Time (ns)" -> {"Total Time", "ns"}; "Time(%)" -> {"Time", "%"}; "Name" -> {"Name", ""}.
struct Column {
  std::string base;
  std::string unit;
};

Column ParseColumn(std::string_view h) {
  std::string s(absl::StripAsciiWhitespace(absl::string_view(h.data(), h.size())));
  Column c;
  if (!s.empty() && s.back() == ')') {
    const size_t open = s.rfind('(');
    if (open != std::string::npos) {
      c.unit = s.substr(open + 1, s.size() - open - 2);
      s = std::string(absl::StripAsciiWhitespace(s.substr(0, open)));
    }
  }
  c.base = s;
  return c;
}

// Nanoseconds per unit of a time column; 0 when `unit` is no time unit.
double NsPerUnit(std::string_view unit) {
  if (unit == "ns" || unit == "nsec") return 1;
  if (unit == "us" || unit == "usec") return 1e3;
  if (unit == "ms" || unit == "msec") return 1e6;
  if (unit == "s" || unit == "sec") return 1e9;
  return 0;
}

enum class Report { kNone, kKernSum, kKernExecSum, kOther };

struct Header {
  Report report = Report::kNone;
  std::vector<Column> columns;
  size_t pos = 0, line = 0;  // where the header row starts
};

int Find(const std::vector<Column>& cols, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].base == n) return static_cast<int>(i);
    }
  }
  return -1;
}

Report Classify(const std::vector<Column>& cols) {
  if (cols.size() < 3) return Report::kNone;
  bool timed = false;
  for (const Column& c : cols) timed |= NsPerUnit(c.unit) > 0 || (c.base == "Time" && c.unit == "%");
  if (!timed) return Report::kNone;
  if (Find(cols, {"Name"}) >= 0 && Find(cols, {"Instances"}) >= 0 &&
      Find(cols, {"Total Time"}) >= 0) {
    return Report::kKernSum;
  }
  if (Find(cols, {"Kernel Name"}) >= 0 && Find(cols, {"Count"}) >= 0 &&
      Find(cols, {"KAvg"}) >= 0) {
    return Report::kKernExecSum;
  }
  return Report::kOther;
}

std::optional<Header> FindHeader(std::string_view text) {
  size_t pos = 0, line = 1;
  const size_t limit = std::min(text.size(), kHeaderSearchBytes);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;  // UTF-8 BOM
  while (pos < limit) {
    size_t eol = text.find('\n', pos);
    std::string_view l = text.substr(pos, eol == std::string_view::npos ? text.size() - pos : eol - pos);
    std::vector<Column> cols;
    for (const std::string& f : SplitCsvLine(l)) cols.push_back(ParseColumn(f));
    if (Report r = Classify(cols); r != Report::kNone) return Header{r, std::move(cols), pos, line};
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
    ++line;
  }
  return std::nullopt;
}

bool Has(const std::vector<Column>& cols, std::string_view base) {
  return Find(cols, {base}) >= 0;
}

// The report another stats CSV most likely is, from its columns, and what it holds.
std::string DescribeOther(const std::vector<Column>& cols) {
  if (Has(cols, "Start") && Has(cols, "Duration")) {
    return "cuda_gpu_trace or another trace report (one row per activity)";
  }
  if (Has(cols, "NVTX Range") || Has(cols, "Range")) return "an NVTX range summary (nvtx_*)";
  if (Has(cols, "Num Calls")) return "an API or OS runtime call summary (cuda_api_sum, osrt_sum)";
  if (Has(cols, "Operation")) return "a memory operation summary (cuda_gpu_mem_time_sum, "
                                     "cuda_gpu_mem_size_sum)";
  return "a summary that is not of CUDA kernels";
}

std::optional<double> Number(std::string_view s) {
  std::string digits;
  for (char c : s) {
    if (c != ',' && c != ' ') digits += c;
  }
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// "  32    4    1" (GridXYZ, BlockXYZ) -> three numbers.
void ParseXyz(std::string_view s, proto::Dim3* d) {
  uint32_t v[3] = {0, 0, 0};
  int i = 0;
  uint64_t n = 0;
  bool in = false;
  for (char c : std::string(s) + " ") {
    if (c >= '0' && c <= '9') {
      n = std::min<uint64_t>(n * 10 + static_cast<uint64_t>(c - '0'), UINT32_MAX);
      in = true;
    } else if (in) {
      if (i < 3) v[i++] = static_cast<uint32_t>(n);
      n = 0;
      in = false;
    }
  }
  if (i == 3) {
    d->set_x(v[0]);
    d->set_y(v[1]);
    d->set_z(v[2]);
  }
}

// One kernel row: its launches, and where its columns are.
struct RowColumns {
  int name = -1, count = -1, total = -1, avg = -1, min = -1, max = -1;
  int device = -1, pid = -1, grid = -1, block = -1;
  double total_scale = 0, avg_scale = 0, min_scale = 0, max_scale = 0;
};

RowColumns ColumnsOf(const Header& h) {
  RowColumns c;
  auto scale = [&h](int i) { return i >= 0 ? NsPerUnit(h.columns[static_cast<size_t>(i)].unit) : 0; };
  const auto& cols = h.columns;
  if (h.report == Report::kKernSum) {
    c.name = Find(cols, {"Name"});
    c.count = Find(cols, {"Instances"});
    c.total = Find(cols, {"Total Time"});
    c.avg = Find(cols, {"Avg", "Average"});
    c.min = Find(cols, {"Min", "Minimum"});
    c.max = Find(cols, {"Max", "Maximum"});
    c.grid = Find(cols, {"GridXYZ"});
    c.block = Find(cols, {"BlockXYZ", "BlkXYZ"});
  } else {
    c.name = Find(cols, {"Kernel Name"});
    c.count = Find(cols, {"Count"});
    c.avg = Find(cols, {"KAvg"});
    c.min = Find(cols, {"KMin"});
    c.max = Find(cols, {"KMax"});
    c.device = Find(cols, {"DevId"});
    c.pid = Find(cols, {"PID"});
  }
  // Old reports name no unit: their times are nanoseconds.
  auto or_ns = [](double s, int i) { return i >= 0 && s == 0 ? 1.0 : s; };
  c.total_scale = or_ns(scale(c.total), c.total);
  c.avg_scale = or_ns(scale(c.avg), c.avg);
  c.min_scale = or_ns(scale(c.min), c.min);
  c.max_scale = or_ns(scale(c.max), c.max);
  return c;
}

// The durations of `n` launches totalling `total` ns: one at `min`, one at `max`, the rest
// sharing what is left (within a nanosecond of each other), when that is consistent with
// the minimum and maximum; otherwise all at the average.
std::vector<std::pair<int64_t, uint64_t>> Durations(uint64_t n, int64_t total,
                                                    std::optional<int64_t> min,
                                                    std::optional<int64_t> max) {
  std::vector<std::pair<int64_t, uint64_t>> out;  // (duration, launches)
  auto share = [&out](int64_t rest, uint64_t m) {
    if (m == 0) return;
    const int64_t base = rest / static_cast<int64_t>(m);
    const uint64_t extra = static_cast<uint64_t>(rest % static_cast<int64_t>(m));
    if (extra > 0) out.push_back({base + 1, extra});
    if (m > extra) out.push_back({base, m - extra});
  };
  if (n >= 2 && min && max && *min <= *max) {
    const int64_t rest = total - *min - *max;
    const uint64_t m = n - 2;
    const bool fits = m == 0 ? rest == 0
                             : rest >= *min * static_cast<int64_t>(m) &&
                                   rest <= *max * static_cast<int64_t>(m);
    if (fits) {
      out.push_back({*min, 1});
      out.push_back({*max, 1});
      share(rest, m);
      return out;
    }
  }
  share(total, n);
  return out;
}

// The header of a summary read as a profile without a timeline, saying so.
proto::TraceHeader SummaryHeader(const std::string& path, const char* report) {
  proto::TraceHeader header;
  FillImportedHeader(&header, path, "nsys-stats-csv");
  header.set_no_timeline(absl::StrCat(
      "an nsys stats kernel summary (", report, ") holds each kernel's total time, launch "
      "count, minimum and maximum, not when the launches ran: idle time, overlap, steps and "
      "per-launch quantiles are unknown"));
  header.add_notes(absl::StrCat(
      "nsys-stats-csv: ", report, " read as a profile without a timeline: each kernel's "
      "launches are laid end to end with the file's total time, count, minimum and maximum"));
  return header;
}

// The devices the rows named, the launch count and the rows left out.
void FinishHeader(std::vector<uint32_t> devices, uint64_t launches, uint64_t skipped,
                  proto::TraceHeader* header) {
  std::sort(devices.begin(), devices.end());
  for (uint32_t id : devices) {
    proto::DeviceInfo* d = header->add_devices();
    d->set_id(id);
    d->set_kind("gpu");
    d->set_vendor("NVIDIA");  // nsys profiles CUDA
    d->set_name("unknown");
  }
  header->mutable_collector()->set_records_total(launches);
  if (skipped > 0) {
    header->mutable_collector()->add_warnings(absl::StrCat(
        skipped, " rows without a kernel name, instance count or total time were left out"));
  }
}

}  // namespace

bool LooksLikeNsysStatsCsv(std::string_view head) { return FindHeader(head).has_value(); }

absl::Status StreamNsysStatsCsvText(std::string_view text, const std::string& path,
                                    TraceSink* sink) {
  std::optional<Header> h = FindHeader(text);
  if (!h) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not an nsys stats CSV (no header row with time columns)"));
  }
  if (h->report == Report::kOther) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": an nsys stats report, ", DescribeOther(h->columns),
        ", not a kernel summary; export the kernel summary instead (nsys stats --report "
        "cuda_gpu_kern_sum --format csv --output . REPORT.nsys-rep), or the whole timeline "
        "(nsys export --type sqlite REPORT.nsys-rep)"));
  }
  const RowColumns c = ColumnsOf(*h);
  const char* report = h->report == Report::kKernSum
                           ? (c.grid >= 0 ? "cuda_gpu_kern_gb_sum" : "cuda_gpu_kern_sum")
                           : "cuda_kern_exec_sum";
  proto::TraceHeader header = SummaryHeader(path, report);
  sink->Begin(header);
  CsvReader reader(text, h->pos, h->line);
  CsvRow row;
  std::string error;
  reader.Next(&row, &error);  // the header
  const size_t width = h->columns.size();
  int64_t t = 0;
  uint64_t kernels = 0, launches = 0, skipped = 0;
  std::vector<uint32_t> devices;
  proto::Activity a;
  while (reader.Next(&row, &error)) {
    // A row of another width ends the table (another report may follow in the same file).
    if (row.fields.size() != width) break;
    auto field = [&row](int i) -> std::string_view {
      return i >= 0 ? std::string_view(row.fields[static_cast<size_t>(i)]) : std::string_view();
    };
    // Times in ns, capped at ~3 years so the timeline cannot overflow.
    auto ns = [&](int i, double s) -> std::optional<int64_t> {
      std::optional<double> v = Number(field(i));
      if (!v) return std::nullopt;
      return static_cast<int64_t>(std::llround(std::min(*v * s, 1e17)));
    };
    const std::optional<double> count = Number(field(c.count));
    // cuda_kern_exec_sum has no total: Count x KAvg (KAvg is rounded to 0.1 ns).
    std::optional<int64_t> total_ns = ns(c.total, c.total_scale);
    if (c.total < 0 && count) {
      if (std::optional<int64_t> avg = ns(c.avg, c.avg_scale * *count)) total_ns = avg;
    }
    const std::string name(field(c.name));
    if (!count || !total_ns || *count < 1 || name.empty()) {
      ++skipped;
      continue;
    }
    if (static_cast<double>(launches) + *count > kMaxLaunches) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": line ", row.line, ": the summary counts more than ",
          static_cast<uint64_t>(kMaxLaunches), " launches, which qprof lays out one by one"));
    }
    a.Clear();
    a.set_kind(proto::ACTIVITY_KIND_KERNEL);
    a.set_name(name);
    const uint32_t device = static_cast<uint32_t>(Number(field(c.device)).value_or(0));
    a.set_device_id(device);
    if (c.pid >= 0) a.set_pid(static_cast<uint32_t>(Number(field(c.pid)).value_or(0)));
    if (c.grid >= 0) ParseXyz(field(c.grid), a.mutable_grid());
    if (c.block >= 0) ParseXyz(field(c.block), a.mutable_block());
    for (const auto& [dur, n] : Durations(static_cast<uint64_t>(*count), *total_ns,
                                          ns(c.min, c.min_scale), ns(c.max, c.max_scale))) {
      for (uint64_t i = 0; i < n; ++i) {
        a.set_start_ns(t);
        a.set_end_ns(t + dur);
        t += dur;
        sink->Activity(a);
      }
      launches += n;
    }
    ++kernels;
    if (std::find(devices.begin(), devices.end(), device) == devices.end()) devices.push_back(device);
  }
  if (!error.empty()) return absl::DataLossError(absl::StrCat(path, ": ", error));
  if (kernels == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": an nsys stats kernel summary (", report, ") without kernel rows"));
  }
  FinishHeader(std::move(devices), launches, skipped, &header);
  sink->End(header, false, "");
  return absl::OkStatus();
}

absl::Status StreamNsysStatsCsv(const std::string& path, TraceSink* sink) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return StreamNsysStatsCsvText(text, path, sink);
}

}  // namespace qprof::importers
