#include "reports/terminal/terminal_report.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/terminal/table.h"
#include "reports/terminal/terminal_launch.h"
#include "reports/terminal/terminal_roofline.h"
#include "reports/terminal/terminal_util.h"

namespace qprof::reports {

void ProfileIdle(const proto::Profile& p, TermCtx& c);         // terminal_idle.cc
void ProfileNvtxSummary(const proto::Profile& p, TermCtx& c);  // terminal_idle.cc
void ProfileComm(const proto::Profile& p, TermCtx& c);         // terminal_comm.cc

namespace {

using Ctx = TermCtx;

void ProfileHeadline(const proto::Profile& p, Ctx& c) {
  const auto& run = p.run();
  std::string title = "qprof profile";
  std::vector<std::string> parts;
  if (!p.label().empty()) parts.push_back(p.label());
  if (!run.model().empty()) parts.push_back(run.model());
  if (!run.format().empty() && run.format() != p.label()) parts.push_back(run.format());
  if (run.batch()) parts.push_back(fmt::format("batch {}", run.batch()));
  if (run.steps()) parts.push_back(fmt::format("{} steps", run.steps()));
  for (size_t i = 0; i < parts.size(); ++i) title += (i ? " | " : ": ") + parts[i];
  c.Line(c.o.color ? std::string(kBold) + title + kReset : title);
  const std::string prov = ProfileProvenance(p);
  c.Line(fmt::format("  device     {}", DeviceLine(p)));
  if (run.format().empty() && !p.format_inferred().empty()) {
    c.out += FitOrWrap(fmt::format("format     {} (inferred: {})", p.format_inferred(),
                                   p.format_inferred_from()),
                       c.width, "  ");
  }
  const auto& t = p.totals();
  if (t.tokens_per_s() > 0) {
    std::string detail = prov;
    if (t.tokens() && t.wall_time_ns()) {
      detail += fmt::format("; {} tokens in {} {}", t.tokens(), FormatNs(t.wall_time_ns()),
                            t.tokens_source().empty() ? "wall"
                            : t.step_time_ns() > 0    ? "of the steps' GPU time"
                                                      : "of GPU span");
    }
    c.Line(fmt::format("  tokens/s   {}  ({})", FormatTokensPerS(t.tokens_per_s()), detail));
    if (!t.tokens_source().empty()) {
      c.out += FitOrWrap("per step   " + t.tokens_source(), c.width, "  ");
    }
  } else {
    c.Line(fmt::format("  tokens/s   n/a  (the input has no token count or wall time)"));
  }
  c.out += FitOrWrap(fmt::format("kernels    {} launches, {} kernel time{}", t.kernel_count(),
                                  FormatNs(t.kernel_time_ns()),
                                  p.no_timeline().empty()
                                      ? fmt::format(", {} busy (union)", FormatNs(t.busy_time_ns()))
                                      : ""),
                      c.width, "  ");
  if (p.has_other_class()) {
    // Class "other" above 5% of kernel time: the split below leaves that much out.
    const auto& o = p.other_class();
    std::string names;
    for (const auto& k : o.top()) {
      names += fmt::format("{}{} {}", names.empty() ? "" : ", ",
                           ShortKernelName(k.name(), c.o.wide ? std::string::npos : 60),
                           FormatShare(k.share()));
    }
    const std::string line = fmt::format(
        "other      {} of kernel time is class \"other\" (no evidence of its pipe; {} kernel{}): {}",
        FormatShare(o.share()), o.kernel_rows(), o.kernel_rows() == 1 ? "" : "s", names);
    c.out += FitOrWrap(line, c.width, "  ");
  }
  // Said once: without a timeline the idle, overlap and step sections are left out.
  if (!p.no_timeline().empty()) {
    c.out += FitOrWrap(fmt::format("timeline   none: {}", p.no_timeline()), c.width, "  ");
  }
  c.out += FitOrWrap("times      " + prov, c.width, "  ");
  for (const auto& s : p.sources()) {
    c.out += FitOrWrap(fmt::format("source     {} ({}{})", s.path(), s.kind(),
                                   s.truncated() ? ", truncated" : ""),
                       c.width, "  ");
  }
}

void ProfileClasses(const proto::Profile& p, Ctx& c) {
  c.Heading("Pipe classes (share of kernel time)");
  c.Line("  " + ClassBar(SharesOf(p), c.width - 4, c.o.color));
  c.Line("  " + BarLegend(SharesOf(p)));
  TextTable t({{"class"}, {"time", TextTable::kRight}, {"share", TextTable::kRight},
               {"calls", TextTable::kRight}});
  for (const auto& r : p.classes()) {
    if (r.time_ns() == 0) continue;
    t.AddRow({ClassCell(r.class_()), {FormatNs(r.time_ns())}, {FormatShare(r.share())},
              {std::to_string(r.calls())}});
  }
  c.out += t.Render(c.o.color);
  if (IsAmdProfile(p)) {
    c.Line("  on AMD GPUs \"tensor\" is the matrix cores (MFMA/XDL kernels), \"simt\" the vector ALUs");
  }
}

void ProfileKernels(const proto::Profile& p, Ctx& c) {
  const int n = std::min<int>(c.o.top_kernels, p.kernels_size());
  c.Heading(fmt::format("Top kernels ({} of {}, by time)", n, p.kernels_size()));
  bool any_tc = false;
  for (const auto& k : p.kernels()) any_tc |= k.has_tensor_pipe_pct();
  // Fixed columns take ~72 columns (~66 without tensor %); the name gets the rest. Below
  // 24 columns for the name the role column goes (the roles table follows anyway).
  int fixed = any_tc ? 72 : 66;
  const bool with_role = c.width - fixed >= 24;
  if (!with_role) fixed -= 17;
  const size_t name_w =
      c.o.wide ? std::string::npos : static_cast<size_t>(std::max(20, c.width - fixed));
  // Wide: the full name goes last, as in nsys stats, so the other columns stay aligned.
  std::vector<TextTable::Column> cols = {{"#", TextTable::kRight}};
  if (!c.o.wide) cols.push_back({"kernel", TextTable::kLeft});
  for (TextTable::Column col : std::vector<TextTable::Column>{
           {"time", TextTable::kRight}, {"share", TextTable::kRight}, {"class"}}) {
    cols.push_back(col);
  }
  if (with_role) cols.push_back({"role"});
  cols.push_back({"fmt"});
  if (any_tc) cols.push_back({"tc%", TextTable::kRight});
  cols.push_back({"evidence"});
  if (c.o.wide) cols.push_back({"kernel", TextTable::kLeft});
  TextTable t(cols);
  for (int i = 0; i < n; ++i) {
    const auto& k = p.kernels(i);
    std::vector<Cell> row = {{std::to_string(i + 1)}};
    if (!c.o.wide) row.push_back({ShortKernelName(k.name(), name_w)});
    row.push_back({FormatNs(k.time_ns())});
    row.push_back({FormatShare(k.share())});
    row.push_back(ClassCell(k.class_()));
    if (with_role) row.push_back({c.o.wide ? k.role() : Ellipsize(k.role(), 15)});
    row.push_back({k.format().empty() || k.format() == "unknown" ? "-" : k.format()});
    if (any_tc) {
      row.push_back({k.has_tensor_pipe_pct() ? fmt::format("{:.1f}", k.tensor_pipe_pct())
                                             : "-"});
    }
    row.push_back({k.evidence().empty() ? "unknown" : k.evidence()});
    if (c.o.wide) row.push_back({ShortKernelName(k.name(), name_w)});
    t.AddRow(std::move(row));
  }
  c.out += t.Render(c.o.color);
  bool any_measured = false;
  for (const auto& k : p.kernels()) any_measured |= k.evidence() == "measured";
  if (any_tc) {
    c.out += Wrap("tc% = measured tensor-pipe utilisation (sm__pipe_tensor_cycles_active); "
                  "- = not measured", c.width, "  ");
  } else if (any_measured) {
    // Counters of tensor work (ncu --metrics sm__ops_path_tensor_*, sm__inst_executed_pipe_*)
    // class a kernel without a utilisation: evidence "measured", no tc%.
    c.Line("  tensor-pipe utilisation not measured; evidence \"measured\" = tensor-pipe work "
           "counted by ncu counters (--json: evidence_detail)");
  } else {
    c.Line("  tensor-pipe % not measured (no counter metrics in the input)");
  }
}

void ProfileRoles(const proto::Profile& p, Ctx& c) {
  c.Heading("Roles");
  TextTable t({{"role"}, {"class"}, {"time", TextTable::kRight}, {"share", TextTable::kRight},
               {"calls", TextTable::kRight}, {"if it vanished", TextTable::kRight}});
  const int n = std::min<int>(c.o.top_roles, p.roles_size());
  for (int i = 0; i < n; ++i) {
    const auto& r = p.roles(i);
    // Amdahl: removing a share f of the time leaves (1 - f): speedup 1 / (1 - f).
    std::string amdahl = r.share() < 1 ? FormatRatio(1.0 / (1.0 - r.share())) : "inf";
    t.AddRow({{r.role()}, ClassCell(r.class_()), {FormatNs(r.time_ns())},
              {FormatShare(r.share())}, {std::to_string(r.calls())}, {amdahl}});
  }
  c.out += t.Render(c.o.color);
}

void ProfileCeilings(const proto::Profile& p, Ctx& c) {
  const auto& ce = p.ceilings();
  if (ce.amdahl_size() == 0 && ce.formats_size() == 0 && ce.roles_size() == 0) return;
  c.Heading("Ceilings");
  const double measured =
      ce.measured_tokens_per_s() > 0 ? ce.measured_tokens_per_s() : p.totals().tokens_per_s();
  if (measured > 0) {
    c.Line(fmt::format("  {:<10} {}  ({})", ThroughputWord(p), FormatTokensPerS(measured),
                       ProfileProvenance(p)));
  }
  if (ce.amdahl_size() > 0) {
    // Columns nothing fills are left out: no tok/s bound without a measured throughput, no
    // "at roofline" without a row that has one.
    bool at_roof = false;
    for (const auto& a : ce.amdahl()) at_roof |= a.has_speedup_at_roofline();
    std::vector<TextTable::Column> cols = {
        {"Amdahl"}, {"share f", TextTable::kRight}, {"1/(1-f)", TextTable::kRight}};
    if (measured > 0) cols.push_back({"tok/s bound", TextTable::kRight});
    if (at_roof) cols.push_back({"at roofline", TextTable::kRight});
    TextTable t(cols);
    for (const auto& a : ce.amdahl()) {
      // Rows with a time basis (comm: its exposed time) say so.
      std::vector<Cell> row = {{fmt::format("{} {}{}", a.scope(), a.name(),
                                            a.time_basis().empty() ? "" : " (exposed)")},
                               {FormatShare(a.share())},
                               {a.share() < 1 ? FormatRatio(a.speedup_if_vanished()) : "inf"}};
      if (measured > 0) row.push_back({FormatSig3(measured * a.speedup_if_vanished())});
      if (at_roof) {
        row.push_back({a.has_speedup_at_roofline() ? FormatRatio(a.speedup_at_roofline()) : "-"});
      }
      t.AddRow(std::move(row));
    }
    c.out += t.Render(c.o.color);
  }
  if (ce.formats_size() > 0) {
    c.Line();
    TextTable t({{"device"}, {"format"}, {"bits/w", TextTable::kRight}, {"pipe"},
                 {"bytes/step", TextTable::kRight}, {"step", TextTable::kRight},
                 {"bound"}, {"tok/s", TextTable::kRight}});
    bool starred = false;
    for (const auto& f : ce.formats()) {
      std::string dev = Ellipsize(f.device(), static_cast<size_t>(std::clamp(c.width - 72, 10, 30)));
      if (f.is_profiled_device() && f.is_run_format()) {
        dev += " *";
        starred = true;
      }
      t.AddRow({{dev}, {f.format()}, {fmt::format("{:.2f}", f.bits_per_weight())}, {f.pipe()},
                {FormatBytes(f.bytes_per_step())}, {FormatNs(f.step_time_ns())}, {f.bound()},
                {FormatSig3(f.tokens_per_s())}});
    }
    c.out += t.Render(c.o.color);
    std::string batch = ce.formats(0).batch() ? fmt::format(" at batch {}", ce.formats(0).batch())
                                              : "";
    c.out += Wrap(fmt::format("{}Format ceilings are modelled{}: tok/s = B / max(bytes / "
                              "bandwidth, FLOPs / pipe rate)",
                              starred ? "* marks this run's format and device. " : "", batch),
                  c.width, "  ");
  }
  ProfileRoleCeilings(p, c);
  if (!ce.notes().empty()) c.out += Wrap(ce.notes(), c.width, "  ");
}

// Ranks: the straggler sentence, then the ranks with the most compute first (all of them
// when there are few).
void ProfileRanks(const proto::Profile& p, Ctx& c) {
  if (p.ranks_size() < 2) return;
  constexpr int kShown = 8;
  c.Heading(fmt::format("Ranks ({} traces)", p.ranks_size()));
  c.out += Wrap(p.rank_summary().note(), c.width, "  ");
  std::vector<const proto::RankRow*> rows;
  for (const auto& r : p.ranks()) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->compute_time_ns() > b->compute_time_ns();
  });
  TextTable t({{"rank", TextTable::kRight}, {"compute", TextTable::kRight},
               {"vs median", TextTable::kRight}, {"comm", TextTable::kRight},
               {"kernel time", TextTable::kRight}, {"busy", TextTable::kRight}});
  const int n = p.ranks_size() <= kShown + 2 ? p.ranks_size() : kShown;
  for (int i = 0; i < n; ++i) {
    const proto::RankRow& r = *rows[static_cast<size_t>(i)];
    t.AddRow({{fmt::format("{}{}", r.rank(), r.slowest() ? " *" : "")},
              {FormatNs(static_cast<double>(r.compute_time_ns()))},
              {FormatRatio(r.compute_vs_median())},
              {FormatShare(r.comm_share())},
              {FormatNs(static_cast<double>(r.kernel_time_ns()))},
              {FormatNs(static_cast<double>(r.busy_time_ns()))}});
  }
  c.out += t.Render(c.o.color);
  std::string tail = "* the slowest rank; compute = kernel time outside communication";
  if (n < p.ranks_size()) {
    tail += fmt::format("; {} more ranks in --json/--html", p.ranks_size() - n);
  }
  c.out += Wrap(tail, c.width, "  ");
}

void ProfileWarnings(const proto::Profile& p, Ctx& c) {
  const auto& col = p.collector();
  std::vector<std::string> lines;
  for (const auto& w : p.warnings()) lines.push_back(w.code() + ": " + w.message());
  if (col.records_dropped() > 0) {
    bool said = false;
    for (const auto& w : p.warnings()) said |= w.code() == "records_dropped";
    if (!said) lines.push_back(fmt::format("records_dropped: {} activity records were dropped "
                                           "by the collector", col.records_dropped()));
  }
  for (const auto& n : p.notes()) lines.push_back("note: " + n);
  if (lines.empty()) return;
  c.Heading("Warnings and notes");
  for (const auto& l : lines) {
    std::string w = Wrap(l, c.width, "  ! ");
    if (c.o.color) w = std::string(kYellow) + w.substr(0, w.size() - 1) + kReset + "\n";
    c.out += w;
  }
}

}  // namespace

bool ShouldUseColor(std::FILE* out) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  return out != nullptr && ::isatty(::fileno(out)) == 1;
}

std::string ProfileSummaryText(const proto::Profile& profile, const TerminalOptions& options) {
  Ctx c{options, ClampWidth(options.width), {}};
  ProfileHeadline(profile, c);
  ProfileClasses(profile, c);
  ProfileKernels(profile, c);
  ProfileLaunches(profile, c);
  ProfileLatency(profile, c);
  ProfileRoles(profile, c);
  ProfileAchieved(profile, c);
  ProfileRanks(profile, c);
  if (profile.no_timeline().empty()) {  // idle gaps and exposed time need a timeline
    ProfileIdle(profile, c);
    ProfileComm(profile, c);
  }
  ProfileNvtxSummary(profile, c);
  ProfileCeilings(profile, c);
  ProfileWarnings(profile, c);
  return c.out;
}

void PrintProfileSummary(const proto::Profile& profile, std::FILE* out,
                         const TerminalOptions& options) {
  std::string s = ProfileSummaryText(profile, options);
  std::fwrite(s.data(), 1, s.size(), out);
  std::fflush(out);
}

}  // namespace qprof::reports
