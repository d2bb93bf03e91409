#include "reports/terminal/terminal_roofline.h"

#include <algorithm>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/terminal/table.h"

namespace qprof::reports {
namespace {

std::string Tflops(double t, bool known) {
  if (!known) return "-";
  return t >= 100 ? fmt::format("{:.0f}", t) : t >= 1 ? fmt::format("{:.1f}", t) : fmt::format("{:.3g}", t);
}

std::string Fraction(bool known, double f) { return known ? FormatShare(f) : "-"; }

// A row with FLOPs and no pipe has no roof for them (its class has none): "none", not HBM.
std::string RoofCell(const proto::KernelRow& k) {
  return !k.roof_pipe().empty() ? k.roof_pipe() : k.flops() > 0 ? "none" : "HBM";
}

}  // namespace

std::string FormatGbps(double gbps, bool known) {
  if (!known) return "-";
  return gbps >= 1000 ? fmt::format("{:.2f} TB/s", gbps / 1000) : fmt::format("{:.0f} GB/s", gbps);
}

std::string FormatTflops(const proto::KernelRow& k) {
  return Tflops(k.achieved_tflops(), k.has_achieved_tflops());
}

void ProfileAchieved(const proto::Profile& p, TermCtx& c) {
  bool any = false;
  for (const auto& r : p.roles()) any |= r.work_launches() > 0;
  if (!any) {
    if (!p.launch_summary().graph_work().empty()) {
      c.Heading("Achieved vs roof");
      c.out += Wrap("Graph replays: " + p.launch_summary().graph_work() + ".", c.width, "  ");
    }
    return;
  }
  c.Heading("Achieved vs roof (launches with work: TFLOP/s and GB/s over their time)");
  TextTable roles({{"role"}, {"work time", TextTable::kRight}, {"launches", TextTable::kRight},
                   {"TFLOP/s", TextTable::kRight}, {"GB/s", TextTable::kRight},
                   {"of roof", TextTable::kRight}, {"bound"}});
  for (const auto& r : p.roles()) {
    if (r.work_launches() == 0) continue;
    roles.AddRow({{r.role()}, {FormatNs(static_cast<double>(r.work_time_ns()))},
                  {fmt::format("{}/{}", r.work_launches(), r.calls())},
                  {Tflops(r.achieved_tflops(), r.has_achieved_tflops())},
                  {FormatGbps(r.achieved_gbps(), r.has_achieved_gbps())},
                  {Fraction(r.has_peak_fraction(), r.peak_fraction())},
                  {r.bound().empty() ? "-" : r.bound()}});
  }
  c.out += roles.Render(c.o.color);
  for (const auto& r : p.roles()) {
    if (!r.roof_note().empty()) c.out += Wrap(fmt::format("{}: {}", r.role(), r.roof_note()), c.width, "  ");
  }
  // Top kernels with work, in the order of the top-kernels table.
  std::vector<int> rows;
  for (int i = 0; i < p.kernels_size() && static_cast<int>(rows.size()) < c.o.top_kernels; ++i) {
    if (p.kernels(i).work_launches() > 0) rows.push_back(i);
  }
  if (rows.empty()) return;
  c.Line();
  // The other columns and gaps take 66 characters at their widest ("1.52 TB/s", "tensor_bf16").
  const size_t name_w = c.o.wide ? std::string::npos
                                 : static_cast<size_t>(std::max(12, c.width - 66));
  TextTable t({{"#", TextTable::kRight}, {"kernel"}, {"TFLOP/s", TextTable::kRight},
               {"GB/s", TextTable::kRight}, {"roof"}, {"of roof", TextTable::kRight},
               {"bound"}, {"launches", TextTable::kRight}});
  for (int i : rows) {
    const proto::KernelRow& k = p.kernels(i);
    t.AddRow({{std::to_string(i + 1)}, {ShortKernelName(k.name(), name_w)}, {FormatTflops(k)},
              {FormatGbps(k.achieved_gbps(), k.has_achieved_gbps())}, {RoofCell(k)},
              {Fraction(k.has_peak_fraction(), k.peak_fraction())},
              {k.bound().empty() ? "-" : k.bound()},
              {fmt::format("{}/{}", k.work_launches(), k.calls())}});
  }
  c.out += t.Render(c.o.color);
  for (int i : rows) {
    const proto::KernelRow& k = p.kernels(i);
    std::string line = fmt::format("#{} {}", i + 1, k.work_source());
    if (!k.work_note().empty()) line += "; " + k.work_note();
    c.out += Wrap(line, c.width, "  ");
  }
  c.out += Wrap("# as in the top-kernels table. of roof = roofline time / measured time, with "
                "roofline time = max(bytes / memory bandwidth, FLOPs / the roof of the kernel's "
                "pipe and precision) on the profiled device (datasheet figures, `qprof devices "
                "--sources`); bound: memory or compute (the roof the work's intensity meets), "
                "latency (under 25% of it, or flagged latency- or parallelism-bound); HBM = "
                "bytes only; none = FLOPs with no roof for the kernel's class. Work: derived "
                "from the shapes the trace recorded (for "
                "graph-replayed kernels, their op call's at graph capture), modelled from "
                "--model-shape, or the registry's work model, as each line says.",
                c.width, "  ");
  if (!p.launch_summary().graph_work().empty()) {
    c.out += Wrap("Graph replays: " + p.launch_summary().graph_work() + ".", c.width, "  ");
  }
}

void ProfileRoleCeilings(const proto::Profile& p, TermCtx& c) {
  const auto& roles = p.ceilings().roles();
  if (roles.empty()) return;
  c.Line();
  c.Line("  Per role, from its measured work (per step: " + roles[0].steps_source() + "):");
  for (const auto& r : roles) c.out += Wrap(r.note(), c.width, "  - ");
}

}  // namespace qprof::reports
