// Terminal sections for communication, copies and waits: one line per GPU (span, busy, idle,
// exposed comm), the idle gaps by cause and the host's synchronisation time (inside "GPU
// timeline"), and the "Communication and copies" section: exposed and hidden comm, the
// collectives with their bus bandwidth against the link, the copies with their rates, and the
// tensor-parallel diagnosis.
#include <algorithm>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/terminal/table.h"
#include "reports/terminal/terminal_util.h"

namespace qprof::reports {
namespace {

double Of(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string Gbps(double v) { return FormatSig3(v) + " GB/s"; }

std::string DeviceName(const proto::Profile& p, const proto::ProfileDevice& d) {
  std::string name = fmt::format("GPU {}", d.id());
  if (p.sources_size() > 1) name += fmt::format(" (input {})", d.trace() + 1);
  return name;
}

}  // namespace

// One line per GPU timeline: nothing here sums across devices.
void ProfileDeviceLines(const proto::Profile& p, TermCtx& c) {
  int shown = 0;
  for (const auto& d : p.devices()) shown += d.span_ns() > 0;
  if (shown == 0) return;
  TextTable t({{"per GPU"}, {"span", TextTable::kRight}, {"busy", TextTable::kRight},
               {"idle", TextTable::kRight}, {"comm", TextTable::kRight},
               {"exposed comm", TextTable::kRight}, {"exposed copies", TextTable::kRight}});
  constexpr int kMax = 16;
  int n = 0;
  for (const auto& d : p.devices()) {
    if (d.span_ns() == 0 || n++ >= kMax) continue;
    t.AddRow({{DeviceName(p, d)}, {FormatNs(static_cast<double>(d.span_ns()))},
              {FormatShare(Of(d.busy_time_ns(), d.span_ns()))},
              {FormatShare(Of(d.idle_ns(), d.span_ns()))},
              {FormatNs(static_cast<double>(d.comm_ns()))},
              {FormatNs(static_cast<double>(d.comm_exposed_ns()))},
              {FormatNs(static_cast<double>(d.copy_exposed_ns()))}});
  }
  c.out += t.Render(c.o.color);
  if (n > kMax) c.out += Wrap(fmt::format("{} more GPUs in --json/--html", n - kMax), c.width, "  ");
}

// The gaps by cause (HTA's categories) and the host's time in synchronising calls.
void ProfileIdleCauses(const proto::Profile& p, TermCtx& c) {
  const proto::IdleSummary& s = p.idle();
  if (!s.causes().empty()) {
    TextTable t({{"idle by cause"}, {"gaps", TextTable::kRight}, {"idle time", TextTable::kRight},
                 {"of idle", TextTable::kRight}});
    for (const auto& r : s.causes()) {
      if (r.gaps() == 0) continue;
      t.AddRow({{r.cause()}, {std::to_string(r.gaps())}, {FormatNs(static_cast<double>(r.time_ns()))},
                {FormatShare(r.share())}});
    }
    c.out += t.Render(c.o.color);
    c.out += Wrap(s.cause_rule(), c.width, "  ");
  }
  const proto::HostSummary& h = s.host();
  if (h.sync_calls() > 0) {
    std::string kinds;
    for (const auto& k : h.sync()) {
      kinds += fmt::format("{}{} {} x {}", kinds.empty() ? "" : ", ", k.kind(), k.calls(),
                           FormatNs(static_cast<double>(k.time_ns())));
    }
    c.out += FitOrWrap(fmt::format("host sync  {} in {} blocking calls ({} of the GPU span): {}",
                                   FormatNs(static_cast<double>(h.sync_ns())), h.sync_calls(),
                                   FormatShare(Of(h.sync_ns(), s.span_ns())), kinds),
                       c.width, "  ");
  }
}

void ProfileComm(const proto::Profile& p, TermCtx& c) {
  const proto::CommSummary& s = p.comm();
  if (s.total_ns() == 0 && s.copy_total_ns() == 0 && p.copies_size() == 0) return;
  c.Heading("Communication and copies");
  if (s.total_ns() > 0) {
    c.out += FitOrWrap(fmt::format("comm       {} on {}: {} exposed ({}), {} hidden under compute",
                                   FormatNs(static_cast<double>(s.total_ns())),
                                   s.devices() > 1 ? fmt::format("{} GPUs (summed)", s.devices())
                                                   : std::string("1 GPU"),
                                   FormatNs(static_cast<double>(s.exposed_ns())),
                                   FormatShare(Of(s.exposed_ns(), s.total_ns())),
                                   FormatNs(static_cast<double>(s.hidden_ns()))),
                       c.width, "  ");
  }
  if (s.copy_total_ns() > 0) {
    c.out += FitOrWrap(fmt::format("copies     {} of memcpy and memset: {} exposed, {} under kernels",
                                   FormatNs(static_cast<double>(s.copy_total_ns())),
                                   FormatNs(static_cast<double>(s.copy_exposed_ns())),
                                   FormatNs(static_cast<double>(s.copy_hidden_ns()))),
                       c.width, "  ");
  }
  if (s.collectives_size() > 0) {
    TextTable t({{"collective"}, {"group"}, {"calls", TextTable::kRight},
                 {"graph", TextTable::kRight}, {"size/call", TextTable::kRight},
                 {"time", TextTable::kRight}, {"busbw", TextTable::kRight},
                 {"of link", TextTable::kRight}});
    for (const auto& r : s.collectives()) {
      std::string group = r.process_group().empty() ? "-" : Ellipsize(r.process_group(), 18);
      if (r.group_size() > 0) group += fmt::format(" n={}", r.group_size());
      t.AddRow({{r.name() + (r.library() == "NCCL" ? "" : " (" + r.library() + ")")},
                {group},
                {std::to_string(r.calls())},
                {std::to_string(r.graph_calls())},
                {r.calls_with_bytes() > 0 ? FormatBytes(r.bytes_per_call()) : "unknown"},
                {FormatNs(static_cast<double>(r.time_ns()))},
                {r.has_busbw_gbps() ? Gbps(r.busbw_gbps())
                 : r.has_algbw_gbps() ? "algbw " + Gbps(r.algbw_gbps())
                                      : "-"},
                {r.has_link_fraction() ? FormatShare(r.link_fraction()) : "-"}});
    }
    c.out += t.Render(c.o.color);
    const auto& top = s.collectives(0);
    std::string tail = "calls summed over GPUs (graph = launched by a CUDA graph); busbw = S/t x "
                       "NCCL's factor (nccl-tests PERFORMANCE.md)";
    if (top.link_peak_gbps() > 0) {
      tail += fmt::format("; link {} {} per direction ({})", top.link(), Gbps(top.link_peak_gbps()),
                          top.link_source());
    } else if (!top.link().empty()) {
      tail += "; link " + top.link();
    }
    if (top.calls_with_bytes() == 0) tail += "; size " + top.bytes_source();
    c.out += Wrap(tail, c.width, "  ");
  }
  if (p.copies_size() > 0) {
    TextTable t({{"copy"}, {"memory"}, {"calls", TextTable::kRight}, {"bytes", TextTable::kRight},
                 {"time", TextTable::kRight}, {"rate", TextTable::kRight},
                 {"of link", TextTable::kRight}});
    for (const auto& r : p.copies()) {
      t.AddRow({{r.kind()}, {r.memory().empty() ? "-" : r.memory()}, {std::to_string(r.calls())},
                {FormatBytes(static_cast<double>(r.bytes()))},
                {FormatNs(static_cast<double>(r.time_ns()))},
                {r.has_gbps() ? Gbps(r.gbps()) : "-"},
                {r.has_link_fraction() ? FormatShare(r.link_fraction()) : "-"}});
    }
    c.out += t.Render(c.o.color);
    c.out += Wrap("rate = bytes / time; against the host link (HtoD, DtoH), the GPU link (PtoP) "
                  "or DRAM (DtoD at half its bandwidth, memset) of the spec table",
                  c.width, "  ");
  }
  if (p.has_tp_diagnosis()) c.out += Wrap(p.tp_diagnosis().note(), c.width, "  ");
  c.out += Wrap("times " + (s.provenance().empty() ? ProfileProvenance(p) : s.provenance()),
                c.width, "  ");
}

}  // namespace qprof::reports

namespace qprof::reports {

// Diff: collectives and copies matched across the sides, time per unit and rate.
void DiffComm(const proto::Diff& d, TermCtx& c) {
  if (d.comm_size() == 0) return;
  const std::string unit = d.unit().empty() ? "call" : d.unit();
  c.Heading(fmt::format("Communication and copies (time per {}, B vs A)", unit));
  c.out += FitOrWrap(fmt::format("exposed    comm {} -> {}, copies {} -> {} (union per GPU, "
                                 "summed over GPUs; whole captures)",
                                 FormatNs(static_cast<double>(d.a().comm_exposed_ns())),
                                 FormatNs(static_cast<double>(d.b().comm_exposed_ns())),
                                 FormatNs(static_cast<double>(d.a().copy_exposed_ns())),
                                 FormatNs(static_cast<double>(d.b().copy_exposed_ns()))),
                     c.width, "  ");
  TextTable t({{"collective / copy"}, {"A calls", TextTable::kRight},
               {"B calls", TextTable::kRight}, {"A per " + unit, TextTable::kRight},
               {"B per " + unit, TextTable::kRight}, {"B/A", TextTable::kRight},
               {"A rate", TextTable::kRight}, {"B rate", TextTable::kRight}});
  for (const auto& r : d.comm()) {
    t.AddRow({{Ellipsize(r.key(), 40)}, {std::to_string(r.a_calls())}, {std::to_string(r.b_calls())},
              {r.a_calls() ? FormatNs(r.a_per_unit_ns()) : "-"},
              {r.b_calls() ? FormatNs(r.b_per_unit_ns()) : "-"},
              {r.has_per_unit_ratio() ? FormatRatio(r.per_unit_ratio()) : "-"},
              {r.has_a_gbps() ? FormatSig3(r.a_gbps()) + " GB/s" : "-"},
              {r.has_b_gbps() ? FormatSig3(r.b_gbps()) + " GB/s" : "-"}});
  }
  c.out += t.Render(c.o.color);
  c.out += Wrap("rate: busbw (or algbw when a side lacks the group size) for collectives, "
                "bytes / time for copies",
                c.width, "  ");
}

}  // namespace qprof::reports
