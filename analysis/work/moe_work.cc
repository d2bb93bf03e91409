#include "analysis/work/moe_work.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace qprof::work {

double ExpectedExpertsTouched(double experts, double top_k, double tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  // P(an expert is not among one token's k) = 1 - k/E; independent tokens.
  return experts * (1.0 - std::pow(1.0 - std::min(top_k, experts) / experts, tokens));
}

bool IsMoeOp(std::string_view op, bool* shared) {
  if (shared != nullptr) {
    *shared = absl::StrContains(absl::AsciiStrToLower(std::string(op)), "shared");
  }
  const OpRule* r = FindOpRule(op);
  return r != nullptr && r->convention == Convention::kMoeLayer;
}

absl::StatusOr<OpWork> MoeCallWork(const ModelShape& m, std::string_view op, double tokens,
                                   double activation_bytes, bool with_shared) {
  if (!m.IsMoe()) {
    return absl::InvalidArgumentError(absl::StrCat(
        m.path, ": not an MoE model (needs routed experts, experts per token, an intermediate "
                "size and hidden_size)"));
  }
  const double h = static_cast<double>(m.hidden);
  const double i = static_cast<double>(m.moe_inter) / static_cast<double>(m.tp);
  const double is = static_cast<double>(m.shared_inter) / static_cast<double>(m.tp);
  const double e = static_cast<double>(m.experts), k = static_cast<double>(m.top_k);
  const double s = with_shared ? static_cast<double>(m.shared_experts) : 0;
  const double touched = ExpectedExpertsTouched(e, k, tokens);
  OpWork w;
  w.kind = std::string(kind::kMoe);
  const double params = touched * 3 * h * i + s * 3 * h * is;
  w.weight_bytes = params * m.bits_per_weight / 8;
  w.weight_bits = m.bits_per_weight;
  w.weight_format = m.format;
  w.bytes = w.weight_bytes + 2 * tokens * h * activation_bytes;
  w.flops = 2 * tokens * k * 3 * h * i + 2 * tokens * s * 3 * h * is;
  w.description = absl::StrFormat(
      "%s T=%.0f tokens x top-%d of %d experts (%s%.1f expected distinct, uniform routing "
      "assumed) at %s %.4g bits per weight, hidden %d, intermediate %d%s",
      std::string(op), tokens, m.top_k, m.experts, s > 0 ? absl::StrFormat("+%d shared, ", m.shared_experts) : "",
      touched, m.format, m.bits_per_weight, m.hidden, m.moe_inter,
      m.tp > 1 ? absl::StrFormat("/%d (tensor parallel)", m.tp) : "");
  return w;
}

}  // namespace qprof::work
