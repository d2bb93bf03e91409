#include "reports/common/format.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "proto/vocabulary.h"

namespace qprof::reports {
namespace {

// Three significant digits for a value >= 0 in [1, 1000).
std::string Sig3Plain(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

}  // namespace

std::string FormatSig3(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  const char* sign = v < 0 ? "-" : "";
  double a = std::fabs(v);
  if (a == 0) return "0";
  static const char* kSuffix[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (a >= 999.5 && i < 5) {
    a /= 1000;
    ++i;
  }
  if (i == 0 && a < 1) {
    if (a >= 0.1) return fmt::format("{}{:.3f}", sign, a);
    if (a >= 0.01) return fmt::format("{}{:.4f}", sign, a);
    return fmt::format("{}{:.2e}", sign, a);
  }
  return fmt::format("{}{}{}", sign, Sig3Plain(a), kSuffix[i]);
}

std::string FormatNs(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  const char* sign = ns < 0 ? "-" : "";
  double a = std::fabs(ns);
  if (a < 999.5) return fmt::format("{}{:.0f} ns", sign, a);
  if (a < 999.5e3) return fmt::format("{}{} us", sign, Sig3Plain(a / 1e3));
  if (a < 999.5e6) return fmt::format("{}{} ms", sign, Sig3Plain(a / 1e6));
  return fmt::format("{}{} s", sign, a >= 1000e9 ? fmt::format("{:.0f}", a / 1e9)
                                                  : Sig3Plain(a / 1e9));
}

std::string FormatDeltaNs(double ns) {
  if (ns == 0) return "0";
  return ns > 0 ? fmt::format("+{}", FormatNs(ns)) : FormatNs(ns);
}

std::string FormatShare(double share) {
  if (!std::isfinite(share)) return "n/a";
  if (share > 0 && share < 0.0005) return "<0.1%";
  return fmt::format("{:.1f}%", share * 100);
}

std::string FormatSharePoints(double delta) {
  if (std::fabs(delta * 100) < 0.05) return "0.0 pp";  // never "-0.0 pp"
  return fmt::format("{:+.1f} pp", delta * 100);
}

std::string FormatTokensPerS(double tps) { return FormatSig3(tps) + " tok/s"; }

std::string FormatRatio(double r) {
  if (!std::isfinite(r)) return "n/a";
  return fmt::format("{:.2f}x", r);
}

std::string FormatBytes(double bytes) { return FormatSig3(bytes) + "B"; }
std::string FormatFlops(double flops) { return FormatSig3(flops) + "FLOP"; }

std::string Ellipsize(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  if (width <= 3) return s.substr(0, width);
  auto is_cont = [&](size_t i) { return (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; };
  size_t head = (width - 3) * 2 / 3;
  size_t tail = width - 3 - head;
  while (head > 0 && is_cont(head)) --head;
  size_t tail_start = s.size() - tail;
  while (tail_start < s.size() && is_cont(tail_start)) ++tail_start;
  return s.substr(0, head) + "..." + s.substr(tail_start);
}

std::string ProfileProvenance(const proto::Profile& p) {
  for (const auto& d : p.devices()) {
    if (d.kind() == "host_cpu") return "measured on host CPU (not a GPU)";
  }
  switch (p.provenance()) {
    case proto::PROVENANCE_MEASURED_GPU:
      return "measured on GPU";
    case proto::PROVENANCE_MEASURED_HOST:
      return "measured on host CPU (not a GPU)";
    case proto::PROVENANCE_IMPORTED: {
      std::string files;
      for (const auto& s : p.sources()) {
        if (!files.empty()) files += ", ";
        files += s.path();
      }
      return files.empty() ? "imported" : "imported from " + files;
    }
    case proto::PROVENANCE_MODELLED:
      return "modelled (not measured)";
    default:
      break;
  }
  if (!p.totals().provenance().empty()) return p.totals().provenance();
  return "unspecified";
}

std::string ThroughputWord(const proto::Profile& p) {
  return p.provenance() == proto::PROVENANCE_MODELLED ? "modelled" : "measured";
}

std::string DeviceLine(const proto::Profile& p) {
  // Each kind of device once, with how many there are: eight ranks on H100s read
  // "NVIDIA H100 (sm_90) x8", not the same name eight times.
  std::vector<std::pair<std::string, int>> kinds;
  for (const auto& d : p.devices()) {
    std::string s = d.name().empty() ? "device " + std::to_string(d.id()) : d.name();
    if (!d.arch().empty()) s += " (" + d.arch() + ")";
    auto it = std::find_if(kinds.begin(), kinds.end(), [&s](const auto& k) { return k.first == s; });
    if (it == kinds.end()) {
      kinds.emplace_back(std::move(s), 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [s, n] : kinds) {
    if (!out.empty()) out += " + ";
    out += n > 1 ? fmt::format("{} x{}", s, n) : s;
  }
  return out.empty() ? "unknown device" : out;
}

bool IsAmdProfile(const proto::Profile& p) {
  bool amd = false;
  for (const auto& d : p.devices()) {
    if (d.vendor() != "AMD") return false;
    amd = true;
  }
  return amd;
}

double ClassShare(const proto::Profile& p, const std::string& cls) {
  for (const auto& c : p.classes()) {
    if (c.class_() == cls) return c.share();
  }
  return 0;
}

const proto::DiffRow* KeyRole(const proto::Diff& d) {
  for (const auto& r : d.roles()) {
    if (!d.moved_role().empty() && r.key() == d.moved_role()) return &r;
  }
  const proto::DiffRow* best = nullptr;
  for (const auto& r : d.roles()) {
    if (!best || std::llabs(r.delta_ns()) > std::llabs(best->delta_ns())) best = &r;
  }
  return best;
}

std::vector<std::string> DiffHeadlines(const proto::Diff& d) {
  std::vector<std::string> out;
  const std::string a = d.a().label().empty() ? "A" : d.a().label();
  const std::string b = d.b().label().empty() ? "B" : d.b().label();
  // First the change per unit of work (token, step or call): total times of two traces
  // that captured different amounts of work would mislead.
  if (!d.per_unit_headline().empty()) {
    out.push_back(d.per_unit_headline());
    for (const auto& w : d.warnings()) {
      if (w.code() == "work_differs") {
        const double ua = d.a().units(), ub = d.b().units();
        const std::string what = d.unit() == "call" ? "kernel calls" : d.unit() + "s";
        out.push_back(fmt::format(
            "{} captured {:.1f}% {} {} than {} ({:.6g} vs {:.6g}): total kernel time {} vs {} "
            "compares different amounts of work",
            b, 100 * std::fabs(ub / ua - 1), ub < ua ? "fewer" : "more", what, a,
            ub, ua,
            FormatNs(static_cast<double>(d.b().kernel_time_ns())),
            FormatNs(static_cast<double>(d.a().kernel_time_ns()))));
      }
    }
  } else if (const proto::DiffRow* k = KeyRole(d); k != nullptr) {
    std::string s = k->key() + ": ";
    if (!k->a_class().empty() && !k->b_class().empty() && k->a_class() != k->b_class()) {
      s += k->a_class() + " -> " + k->b_class() + ", ";
    } else if (!k->a_class().empty()) {
      s += k->a_class() + " on both, ";
    }
    s += FormatShare(k->a_share()) + " -> " + FormatShare(k->b_share()) + " of kernel time";
    if (k->a_time_ns() > 0 && k->b_time_ns() > 0) {
      double r = static_cast<double>(k->a_time_ns()) / k->b_time_ns();
      s += r >= 1 ? fmt::format(" ({} less time with {})", FormatRatio(r), b)
                  : fmt::format(" ({} more time with {})", FormatRatio(1 / r), b);
    }
    out.push_back(s);
  }
  // Time no evidence attributed sits in class "other": the tensor and SIMT shares below
  // leave it out, so a reader must know how large it is on each side.
  constexpr double kUnattributedNote = 0.01;
  if (d.a().unattributed_share() >= kUnattributedNote ||
      d.b().unattributed_share() >= kUnattributedNote) {
    out.push_back(fmt::format(
        "unattributed kernel time (no evidence, class other): {} {}, {} {}; the tensor and "
        "SIMT shares leave it out",
        a, FormatShare(d.a().unattributed_share()), b, FormatShare(d.b().unattributed_share())));
  }
  if (d.a().tokens_per_s() > 0 && d.b().tokens_per_s() > 0) {
    out.push_back(fmt::format("tokens/s: {} {} -> {} {} ({})", a,
                              FormatSig3(d.a().tokens_per_s()), b,
                              FormatSig3(d.b().tokens_per_s()),
                              FormatRatio(d.b().tokens_per_s() / d.a().tokens_per_s())));
  }
  out.push_back(fmt::format("tensor-core share: {} -> {} ({})", FormatShare(d.a().tensor_share()),
                            FormatShare(d.b().tensor_share()),
                            FormatSharePoints(d.b().tensor_share() - d.a().tensor_share())));
  // The analyzer's own sentence only when there is no key role to tell the story with.
  // (Diff JSON written before totals_headline existed has that sentence in `headline`.)
  const std::string& totals = d.totals_headline().empty() ? d.headline() : d.totals_headline();
  if (!totals.empty() && KeyRole(d) == nullptr) {
    bool dup = false;
    for (const auto& s : out) dup |= s == totals;
    if (!dup) out.push_back(totals);
  }
  return out;
}

}  // namespace qprof::reports
