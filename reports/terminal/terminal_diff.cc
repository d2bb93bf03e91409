// Terminal summary of a Diff (see terminal_report.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "fmt/format.h"
#include "reports/common/format.h"
#include "reports/terminal/table.h"
#include "reports/terminal/terminal_report.h"
#include "reports/terminal/terminal_util.h"

namespace qprof::reports {

void DiffComm(const proto::Diff& d, TermCtx& c);  // terminal_comm.cc
namespace {

std::string Label(const proto::DiffSide& s, const char* fallback) {
  return s.label().empty() ? fallback : s.label();
}

std::string RatioText(const proto::DiffRow& r) {
  if (r.has_ratio()) return FormatRatio(r.ratio());
  if (r.status() == "only_a") return "gone";
  if (r.status() == "only_b") return "new";
  return "-";
}

std::string ClassChange(const proto::DiffRow& r) {
  if (r.a_class().empty() && r.b_class().empty()) return "-";
  if (r.a_class() == r.b_class() || r.b_class().empty()) return r.a_class();
  if (r.a_class().empty()) return r.b_class();
  return r.a_class() + " -> " + r.b_class();
}

// "imported from /a/long/path/h100/trace.json.gz" beside ".../mi300/trace.json.gz": where two
// provenances share a long start (two files of one name in two folders), each keeps the
// path from the folder where they part, shortened in its middle.
std::string ProvenanceCell(const std::string& prov, const std::string& other) {
  constexpr size_t kWidth = 40;
  if (prov.size() <= kWidth) return prov;
  const size_t path = prov.find('/');
  if (path == std::string::npos) return Ellipsize(prov, kWidth);
  size_t common = 0;
  while (common < prov.size() && common < other.size() && prov[common] == other[common]) ++common;
  // From the folder that holds the first difference (or the file name when they agree).
  size_t from = prov.rfind('/', common < prov.size() ? common : prov.size() - 1);
  if (from == std::string::npos || from < path) from = path;
  const std::string head = prov.substr(0, path);
  return head + Ellipsize(from > path ? "..." + prov.substr(from) : prov.substr(path),
                          kWidth > head.size() ? kWidth - head.size() : 8);
}

void Sides(const proto::Diff& d, TermCtx& c) {
  const std::string a = Label(d.a(), "A"), b = Label(d.b(), "B");
  TextTable t({{""}, {"A: " + a}, {"B: " + b}, {"B vs A", TextTable::kRight}});
  t.AddRow({{"device"}, {Ellipsize(d.a().device(), 34)}, {Ellipsize(d.b().device(), 34)}, {""}});
  if (!d.a().format().empty() || !d.b().format().empty()) {
    t.AddRow({{"format"}, {d.a().format()}, {d.b().format()}, {""}});
  }
  std::string tps_ratio = d.has_tokens_per_s_ratio() ? FormatRatio(d.tokens_per_s_ratio()) : "-";
  t.AddRow({{"tokens/s"},
            {d.a().tokens_per_s() > 0 ? FormatTokensPerS(d.a().tokens_per_s()) : "n/a"},
            {d.b().tokens_per_s() > 0 ? FormatTokensPerS(d.b().tokens_per_s()) : "n/a"},
            {tps_ratio}});
  std::string kt_ratio = d.a().kernel_time_ns() && d.b().kernel_time_ns()
                             ? FormatRatio(static_cast<double>(d.b().kernel_time_ns()) /
                                           d.a().kernel_time_ns())
                             : "-";
  t.AddRow({{"kernel time"}, {FormatNs(d.a().kernel_time_ns())},
            {FormatNs(d.b().kernel_time_ns())}, {kt_ratio}});
  t.AddRow({{"kernel calls"}, {std::to_string(d.a().kernel_count())},
            {std::to_string(d.b().kernel_count())},
            {d.a().kernel_count() ? FormatRatio(static_cast<double>(d.b().kernel_count()) /
                                                d.a().kernel_count())
                                  : "-"}});
  if (d.a().span_ns() > 0 || d.b().span_ns() > 0) {
    auto idle = [](const proto::DiffSide& s) {
      return s.span_ns() ? FormatNs(s.span_ns()) + ", idle " +
                               FormatShare(static_cast<double>(s.idle_ns()) / s.span_ns())
                         : std::string("-");
    };
    t.AddRow({{"GPU span"}, {idle(d.a())}, {idle(d.b())}, {""}});
  }
  t.AddRow({{"tensor share"}, {FormatShare(d.a().tensor_share())},
            {FormatShare(d.b().tensor_share())},
            {FormatSharePoints(d.b().tensor_share() - d.a().tensor_share())}});
  t.AddRow({{"simt share"}, {FormatShare(d.a().simt_share())},
            {FormatShare(d.b().simt_share())},
            {FormatSharePoints(d.b().simt_share() - d.a().simt_share())}});
  t.AddRow({{"provenance"}, {ProvenanceCell(d.a().provenance(), d.b().provenance())},
            {ProvenanceCell(d.b().provenance(), d.a().provenance())}, {""}});
  c.out += t.Render(c.o.color);
  const int cells = c.width - 12;
  std::map<std::string, double> sa(d.a().class_share().begin(), d.a().class_share().end());
  std::map<std::string, double> sb(d.b().class_share().begin(), d.b().class_share().end());
  c.Line();
  c.Line(fmt::format("  A {}", ClassBar(sa, cells, c.o.color)));
  c.Line(fmt::format("  B {}", ClassBar(sb, cells, c.o.color)));
  c.Line("    A: " + BarLegend(sa));
  c.Line("    B: " + BarLegend(sb));
}

void Classes(const proto::Diff& d, TermCtx& c) {
  c.Heading("Pipe classes");
  TextTable t({{"class"}, {"A time", TextTable::kRight}, {"A share", TextTable::kRight},
               {"B time", TextTable::kRight}, {"B share", TextTable::kRight},
               {"delta", TextTable::kRight}, {"share", TextTable::kRight}});
  for (const auto& r : d.classes()) {
    if (r.a_time_ns() == 0 && r.b_time_ns() == 0) continue;
    t.AddRow({ClassCell(r.key()), {FormatNs(r.a_time_ns())}, {FormatShare(r.a_share())},
              {FormatNs(r.b_time_ns())}, {FormatShare(r.b_share())},
              {FormatDeltaNs(static_cast<double>(r.delta_ns()))},
              {FormatSharePoints(r.delta_share())}});
  }
  c.out += t.Render(c.o.color);
}

std::string PerUnitRatio(const proto::DiffRow& r) {
  if (r.has_per_unit_ratio()) return FormatRatio(r.per_unit_ratio());
  return RatioText(r);
}

// Roles with calls and time per unit of work on both sides (the diff's unit: token, step or
// call), so a trace that merely captured fewer calls does not read as faster.
void Roles(const proto::Diff& d, TermCtx& c) {
  const std::string unit = d.unit().empty() ? "call" : d.unit();
  c.Heading(fmt::format("Roles (matched by role; time per {}, B vs A)", unit));
  std::vector<const proto::DiffRow*> rows;
  for (const auto& r : d.roles()) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](auto* x, auto* y) {
    return std::max(x->a_time_ns(), x->b_time_ns()) > std::max(y->a_time_ns(), y->b_time_ns());
  });
  const std::string per = "/" + unit;
  TextTable t({{"role"}, {"class A -> B"}, {"A calls", TextTable::kRight},
               {"A time", TextTable::kRight}, {"A " + per, TextTable::kRight},
               {"B calls", TextTable::kRight}, {"B time", TextTable::kRight},
               {"B " + per, TextTable::kRight}, {"B/A " + per, TextTable::kRight}});
  const int n = std::min<int>(c.o.top_roles, static_cast<int>(rows.size()));
  for (int i = 0; i < n; ++i) {
    const auto& r = *rows[i];
    const char* color = r.a_class() != r.b_class() ? ClassColor(r.b_class()) : nullptr;
    t.AddRow({{r.key()}, {ClassChange(r), color}, {std::to_string(r.a_calls())},
              {FormatNs(r.a_time_ns())},
              {r.a_per_unit_ns() > 0 ? FormatNs(r.a_per_unit_ns()) : "-"},
              {std::to_string(r.b_calls())}, {FormatNs(r.b_time_ns())},
              {r.b_per_unit_ns() > 0 ? FormatNs(r.b_per_unit_ns()) : "-"}, {PerUnitRatio(r)}});
  }
  c.out += t.Render(c.o.color);
  if (!d.unit_source().empty()) c.out += Wrap("units: " + d.unit_source(), c.width, "  ");
}

// Both sides' achieved rates per role, for the roles with work on either side.
void AchievedRoles(const proto::Diff& d, TermCtx& c) {
  std::vector<const proto::DiffRow*> rows;
  for (const auto& r : d.roles()) {
    if (r.has_a_achieved_tflops() || r.has_b_achieved_tflops() || r.has_a_achieved_gbps() ||
        r.has_b_achieved_gbps()) {
      rows.push_back(&r);
    }
  }
  if (rows.empty()) return;
  c.Heading("Achieved rates per role (launches with work; A vs B)");
  auto tf = [](bool has, double v) { return has ? FormatSig3(v) : std::string("-"); };
  auto gb = [](bool has, double v) { return has ? FormatSig3(v) : std::string("-"); };
  auto fr = [](bool has, double v) { return has ? FormatShare(v) : std::string("-"); };
  TextTable t({{"role"}, {"A TFLOP/s", TextTable::kRight}, {"B TFLOP/s", TextTable::kRight},
               {"A GB/s", TextTable::kRight}, {"B GB/s", TextTable::kRight},
               {"A of roof", TextTable::kRight}, {"B of roof", TextTable::kRight}});
  for (const auto* r : rows) {
    t.AddRow({{r->key()}, {tf(r->has_a_achieved_tflops(), r->a_achieved_tflops())},
              {tf(r->has_b_achieved_tflops(), r->b_achieved_tflops())},
              {gb(r->has_a_achieved_gbps(), r->a_achieved_gbps())},
              {gb(r->has_b_achieved_gbps(), r->b_achieved_gbps())},
              {fr(r->has_a_peak_fraction(), r->a_peak_fraction())},
              {fr(r->has_b_peak_fraction(), r->b_peak_fraction())}});
  }
  c.out += t.Render(c.o.color);
}

bool Replaced(const proto::DiffRow& r) {
  return r.status() == "both" && !r.a_name().empty() && !r.b_name().empty() &&
         r.a_name() != r.b_name();
}

void KernelChanges(const proto::Diff& d, TermCtx& c) {
  std::vector<const proto::DiffRow*> gone, added, replaced;
  for (const auto& r : d.kernels()) {
    if (r.status() == "only_a") gone.push_back(&r);
    if (r.status() == "only_b") added.push_back(&r);
    if (Replaced(r)) replaced.push_back(&r);
  }
  if (gone.empty() && added.empty() && replaced.empty()) return;
  c.Heading("Kernels replaced, appeared or disappeared");
  auto by_time = [](auto* x, auto* y) {
    return std::max(x->a_time_ns(), x->b_time_ns()) > std::max(y->a_time_ns(), y->b_time_ns());
  };
  std::stable_sort(replaced.begin(), replaced.end(), by_time);
  std::stable_sort(gone.begin(), gone.end(), by_time);
  std::stable_sort(added.begin(), added.end(), by_time);
  const size_t name_w =
      c.o.wide ? std::string::npos : static_cast<size_t>(std::max(30, c.width - 58));
  TextTable t({{""}, {"kernel"}, {"role"}, {"class"}, {"time", TextTable::kRight},
               {"share", TextTable::kRight}});
  const size_t limit = static_cast<size_t>(c.o.top_kernels);
  for (size_t i = 0; i < replaced.size() && i < limit; ++i) {
    const auto& r = *replaced[i];
    t.AddRow({{"~ A"}, {ShortKernelName(r.a_name(), name_w)}, {r.role()},
              ClassCell(r.a_class()), {FormatNs(r.a_time_ns())}, {FormatShare(r.a_share())}});
    t.AddRow({{"  -> B"}, {ShortKernelName(r.b_name(), name_w)}, {""},
              ClassCell(r.b_class()), {FormatNs(r.b_time_ns())}, {FormatShare(r.b_share())}});
  }
  for (size_t i = 0; i < gone.size() && i < limit; ++i) {
    const auto& r = *gone[i];
    t.AddRow({{"- only A"}, {ShortKernelName(r.a_name().empty() ? r.key() : r.a_name(), name_w)},
              {r.role()}, ClassCell(r.a_class()), {FormatNs(r.a_time_ns())},
              {FormatShare(r.a_share())}});
  }
  for (size_t i = 0; i < added.size() && i < limit; ++i) {
    const auto& r = *added[i];
    t.AddRow({{"+ only B"}, {ShortKernelName(r.b_name().empty() ? r.key() : r.b_name(), name_w)},
              {r.role()}, ClassCell(r.b_class()), {FormatNs(r.b_time_ns())},
              {FormatShare(r.b_share())}});
  }
  c.out += t.Render(c.o.color);
  if (gone.size() > limit || added.size() > limit || replaced.size() > limit) {
    c.Line(fmt::format("  ({} replaced, {} only in A, {} only in B; the JSON and HTML list all)",
                       replaced.size(), gone.size(), added.size()));
  }
}

// Ranks matched by number: the straggler on each side, then the ranks whose compute changed
// most.
void Ranks(const proto::Diff& d, TermCtx& c) {
  if (d.ranks_size() == 0) return;
  constexpr size_t kShown = 8;
  c.Heading(fmt::format("Ranks ({} matched by number)", d.ranks_size()));
  c.out += Wrap(d.rank_headline(), c.width, "  ");
  std::vector<const proto::RankDiffRow*> rows;
  for (const auto& r : d.ranks()) rows.push_back(&r);
  auto change = [](const proto::RankDiffRow* r) {
    return std::llabs(static_cast<long long>(r->b_compute_ns()) -
                      static_cast<long long>(r->a_compute_ns()));
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&change](const auto* x, const auto* y) { return change(x) > change(y); });
  TextTable t({{"rank", TextTable::kRight}, {"A compute", TextTable::kRight},
               {"vs median", TextTable::kRight}, {"B compute", TextTable::kRight},
               {"vs median", TextTable::kRight}, {"B/A", TextTable::kRight}});
  for (size_t i = 0; i < rows.size() && i < kShown; ++i) {
    const auto& r = *rows[i];
    t.AddRow({{std::to_string(r.rank())},
              {r.status() == "only_b" ? "-" : FormatNs(static_cast<double>(r.a_compute_ns()))},
              {r.status() == "only_b" ? "-" : FormatRatio(r.a_compute_vs_median())},
              {r.status() == "only_a" ? "-" : FormatNs(static_cast<double>(r.b_compute_ns()))},
              {r.status() == "only_a" ? "-" : FormatRatio(r.b_compute_vs_median())},
              {r.has_compute_ratio() ? FormatRatio(r.compute_ratio()) : "-"}});
  }
  c.out += t.Render(c.o.color);
  if (rows.size() > kShown) {
    c.Line(fmt::format("  ({} more ranks in the JSON)", rows.size() - kShown));
  }
}

// The regression gate (`--max-regression`): every check, the limit and the noise band.
void Verdict(const proto::DiffVerdict& v, TermCtx& c) {
  c.Heading(fmt::format("Regression gate (time per {}): {}", v.unit(),
                        v.failed() ? "FAILED, worst " + v.worst() : "passed"));
  TextTable t({{"checked"}, {"A", TextTable::kRight}, {"B", TextTable::kRight},
               {"change", TextTable::kRight}, {"limit", TextTable::kRight}, {""}});
  for (const proto::RegressionCheck& k : v.checks()) {
    t.AddRow({{k.key()}, {FormatNs(k.a_per_unit_ns())}, {FormatNs(k.b_per_unit_ns())},
              {fmt::format("{:+.1f}%", k.change_pct())}, {fmt::format("{:.4g}%", k.limit_pct())},
              {k.exceeded() ? "EXCEEDED" : k.within_noise() ? "within noise" : ""}});
  }
  c.out += t.Render(c.o.color);
  c.out += Wrap(v.summary(), c.width, "  ");
  c.out += Wrap(v.noise_note(), c.width, "  ");
}

}  // namespace

std::string DiffSummaryText(const proto::Diff& d, const TerminalOptions& options) {
  TermCtx c{options, ClampWidth(options.width), {}};
  std::string title = fmt::format("qprof diff: A = {}  vs  B = {}", Label(d.a(), "A"),
                                  Label(d.b(), "B"));
  c.Line(c.o.color ? std::string(kBold) + title + kReset : title);
  for (const auto& h : DiffHeadlines(d)) {
    std::string w = Wrap(h, c.width, "  > ");
    c.out += c.o.color ? std::string(kBold) + w.substr(0, w.size() - 1) + kReset + "\n" : w;
  }
  c.Line();
  Sides(d, c);
  Classes(d, c);
  Roles(d, c);
  AchievedRoles(d, c);
  KernelChanges(d, c);
  Ranks(d, c);
  DiffComm(d, c);
  if (d.has_verdict()) Verdict(d.verdict(), c);
  if (d.warnings_size() + d.a().warnings_size() + d.b().warnings_size() > 0) {
    c.Heading("Warnings");
    for (const auto& w : d.warnings()) c.out += Wrap(w.code() + ": " + w.message(), c.width, "  ! ");
    // Each side's own warnings (unattributed kernels, missing metrics, ...), by its label.
    for (const proto::DiffSide* s : {&d.a(), &d.b()}) {
      const std::string l = Label(*s, s == &d.a() ? "A" : "B");
      for (const auto& w : s->warnings()) {
        c.out += Wrap(fmt::format("[{}] {}: {}", l, w.code(), w.message()), c.width, "  ! ");
      }
    }
  }
  return c.out;
}

void PrintDiffSummary(const proto::Diff& diff, std::FILE* out, const TerminalOptions& options) {
  std::string s = DiffSummaryText(diff, options);
  std::fwrite(s.data(), 1, s.size(), out);
  std::fflush(out);
}

}  // namespace qprof::reports
