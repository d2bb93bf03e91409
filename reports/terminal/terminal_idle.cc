// Terminal section "GPU timeline": span, busy and idle, the gaps between kernels, the host's
// runtime calls, the launch-bound verdict, and Amdahl against the span (wall time of the
// kernels' timeline) next to Amdahl against kernel time.
#include <algorithm>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/terminal/table.h"
#include "reports/terminal/terminal_util.h"

namespace qprof::reports {

void ProfileDeviceLines(const proto::Profile& p, TermCtx& c);  // terminal_comm.cc
void ProfileIdleCauses(const proto::Profile& p, TermCtx& c);   // terminal_comm.cc

namespace {

double Of(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void Gaps(const proto::IdleSummary& s, TermCtx& c) {
  if (s.gap_count() == 0) return;
  TextTable t({{"gap between kernels"}, {"gaps", TextTable::kRight},
               {"idle time", TextTable::kRight}, {"of idle", TextTable::kRight}});
  for (const auto& b : s.gaps()) {
    if (b.count() == 0) continue;
    t.AddRow({{b.label()}, {std::to_string(b.count())}, {FormatNs(b.time_ns())},
              {FormatShare(Of(b.time_ns(), s.idle_ns()))}});
  }
  c.out += t.Render(c.o.color);
}

void Host(const proto::IdleSummary& s, TermCtx& c) {
  const auto& h = s.host();
  if (h.runtime_calls() == 0) return;
  c.out += FitOrWrap(
      fmt::format("host       {} CUDA runtime/driver calls, {} inside them ({} of the GPU "
                  "span); {} kernel launch calls, {}",
                  h.runtime_calls(), FormatNs(h.runtime_ns()),
                  FormatShare(Of(h.runtime_ns(), s.span_ns())), h.launch_calls(),
                  FormatNs(h.launch_ns())),
      c.width, "  ");
}

// Per step (when steps are known): the median step's span and the GPU idle it holds at
// least (span - kernel time); every step is in the JSON and HTML.
void Steps(const proto::Profile& p, TermCtx& c) {
  if (p.steps_size() == 0) return;
  std::vector<const proto::StepRow*> rows;
  for (const auto& s : p.steps()) rows.push_back(&s);
  std::sort(rows.begin(), rows.end(),
            [](const auto* a, const auto* b) { return a->span_ns() < b->span_ns(); });
  const proto::StepRow& m = *rows[rows.size() / 2];
  uint64_t in_steps = 0;
  for (const auto& s : p.steps()) in_steps += s.kernel_count();
  if (!m.has_idle_at_least_ns()) {
    c.out += Wrap(fmt::format("per step   {} steps; {} of {} kernels were launched inside a step "
                              "range of a single trace (the rest from other threads, outside "
                              "the steps or in other traces), so per-step idle time is not "
                              "known; the median step (step {}) "
                              "spans {}",
                              p.steps_size(), in_steps, p.totals().kernel_count(), m.step(),
                              FormatNs(m.span_ns())),
                  c.width, "  ");
    return;
  }
  c.out += Wrap(fmt::format("per step   {} steps; the median step (step {}) spans {}, {} of "
                            "kernel time: the GPU is idle at least {} ({}) of it",
                            p.steps_size(), m.step(), FormatNs(m.span_ns()),
                            FormatNs(m.kernel_time_ns()), FormatNs(m.idle_at_least_ns()),
                            FormatShare(Of(m.idle_at_least_ns(), m.span_ns()))),
                c.width, "  ");
}

// Amdahl against the span for the top roles: what vanishing a role gains in wall time.
void AmdahlSpan(const proto::Profile& p, TermCtx& c) {
  std::vector<const proto::AmdahlRow*> rows;
  for (const auto& a : p.ceilings().amdahl()) {
    if (a.scope() == "role" && a.span_share() > 0) rows.push_back(&a);
  }
  if (rows.empty()) return;
  TextTable t({{"if it vanished"}, {"of kernel time", TextTable::kRight},
               {"bound", TextTable::kRight}, {"of span", TextTable::kRight},
               {"bound in wall time", TextTable::kRight}});
  const size_t n = std::min<size_t>(rows.size(), static_cast<size_t>(c.o.top_roles));
  for (size_t i = 0; i < n; ++i) {
    const auto& a = *rows[i];
    t.AddRow({{"role " + a.name() + (a.time_basis().empty() ? "" : " (exposed)")},
              {FormatShare(a.share())},
              {FormatRatio(a.speedup_if_vanished())}, {FormatShare(a.span_share())},
              {a.speedup_if_vanished_span() > 0 ? FormatRatio(a.speedup_if_vanished_span())
                                                : "inf"}});
  }
  c.out += t.Render(c.o.color);
  c.out += Wrap("bound = 1/(1-f); against the span the GPUs' idle time stays when a kernel "
                "vanishes, so the wall-time bound is the one a user sees; (exposed): f is the "
                "communication no compute kernel hides, the only part that costs wall time",
                c.width, "  ");
}

}  // namespace

void ProfileIdle(const proto::Profile& p, TermCtx& c) {
  const proto::IdleSummary& s = p.idle();
  if (s.span_ns() == 0) return;
  c.Heading("GPU timeline (span, busy, idle)");
  c.out += FitOrWrap(
      fmt::format("span       {} (first kernel start to last end per GPU{})", FormatNs(s.span_ns()),
                  s.device_timelines() > 1
                      ? fmt::format("; summed over {} GPU timelines", s.device_timelines())
                      : ""),
      c.width, "  ");
  c.out += FitOrWrap(fmt::format("busy       {} ({})  idle {} ({}) in {} gaps, longest {}",
                                 FormatNs(s.busy_ns()), FormatShare(Of(s.busy_ns(), s.span_ns())),
                                 FormatNs(s.idle_ns()), FormatShare(s.idle_share()),
                                 s.gap_count(), FormatNs(s.gap_max_ns())),
                     c.width, "  ");
  c.out += FitOrWrap("times      " + (s.provenance().empty() ? ProfileProvenance(p)
                                                            : s.provenance()),
                     c.width, "  ");
  if (s.device_timelines() > 1) ProfileDeviceLines(p, c);
  Host(s, c);
  Gaps(s, c);
  ProfileIdleCauses(p, c);
  const std::string verdict = c.o.color && s.verdict() != "busy"
                                  ? std::string(kYellow) + s.verdict() + kReset
                                  : s.verdict();
  c.out += Wrap(verdict + ": " + s.note(), c.width, "  ");
  Steps(p, c);
  AmdahlSpan(p, c);
}

}  // namespace qprof::reports

namespace qprof::reports {

// NVTX ranges by name (like nsys stats' nvtx_sum): host time inside the ranges.
void ProfileNvtxSummary(const proto::Profile& p, TermCtx& c) {
  if (p.nvtx_summary_size() == 0) return;
  const int n = std::min<int>(c.o.top_roles, p.nvtx_summary_size());
  c.Heading(fmt::format("NVTX ranges by name ({} of {}, host time inside the ranges)", n,
                        p.nvtx_summary_size()));
  const size_t name_w = static_cast<size_t>(std::max(24, c.width - 60));
  TextTable t({{"range"}, {"time", TextTable::kRight}, {"share", TextTable::kRight},
               {"count", TextTable::kRight}, {"mean", TextTable::kRight},
               {"min", TextTable::kRight}, {"max", TextTable::kRight}});
  for (int i = 0; i < n; ++i) {
    const auto& r = p.nvtx_summary(i);
    t.AddRow({{Ellipsize(r.name(), name_w)}, {FormatNs(r.total_ns())}, {FormatShare(r.share())},
              {std::to_string(r.count())}, {FormatNs(r.mean_ns())}, {FormatNs(r.min_ns())},
              {FormatNs(r.max_ns())}});
  }
  c.out += t.Render(c.o.color);
  c.out += Wrap("names grouped with \", seq = N\" / \", op_id = N\" stripped and numbers folded; "
                "times " + ProfileProvenance(p),
                c.width, "  ");
}

}  // namespace qprof::reports
