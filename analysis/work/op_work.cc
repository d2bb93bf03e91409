#include "analysis/work/op_work.h"

#include <array>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "analysis/work/work_util.h"

namespace qprof::work {
namespace {

// Exact names in a hash map; pattern rows in table order. Built once.
struct RuleIndex {
  absl::flat_hash_map<std::string_view, const OpRule*> exact;
  std::vector<const OpRule*> patterns;
};

const RuleIndex& Index() {
  static const RuleIndex* index = [] {
    auto* idx = new RuleIndex;
    for (std::span<const OpRule> rows : {AtenOpRules(), ServingOpRules()}) {
      for (const OpRule& r : rows) {
        if (r.match == Match::kExact) {
          idx->exact.try_emplace(r.pattern, &r);  // the first row of a name wins
        } else {
          idx->patterns.push_back(&r);
        }
      }
    }
    return idx;
  }();
  return *index;
}

bool Matches(const OpRule& r, std::string_view op, std::string_view lower) {
  const std::string_view name = (r.flags & kNoCase) ? lower : op;
  return r.match == Match::kPrefix ? name.substr(0, r.pattern.size()) == r.pattern
                                   : name.find(r.pattern) != std::string_view::npos;
}

// Indexed by Convention.
constexpr std::array<internal::ConventionFn, kConventions> kFns = {
    nullptr,                            // kNoWork
    internal::GemmWork,                 // kGemm
    internal::BatchedGemmWork,          // kBatchedGemm
    internal::MatmulWork,               // kMatmul
    internal::GroupedGemmWork,          // kGroupedGemm
    internal::AttentionWork,            // kAttention
    internal::StepAttentionWork,        // kStepAttention
    internal::ConvWork,                 // kConv
    internal::ConvBackwardWork,         // kConvBackward
    internal::NormWork,                 // kNorm
    internal::NormBackwardWork,         // kNormBackward
    internal::ElementwiseWork,          // kElementwise
    internal::CopyWork,                 // kCopy
    internal::FillWork,                 // kFill
    internal::CatWork,                  // kCat
    internal::ReduceWork,               // kReduce
    internal::MovedWork,                // kMoved
    internal::RopeWork,                 // kRope
    internal::KvStoreWork,              // kKvStore
    internal::TritonWork,               // kTriton
    nullptr,                            // kMoeLayer: needs the model (launch_work.h)
};

}  // namespace

const OpRule* FindOpRule(std::string_view op) {
  const RuleIndex& idx = Index();
  if (auto it = idx.exact.find(op); it != idx.exact.end()) return it->second;
  std::string lower(op);
  for (char& c : lower) c = absl::ascii_tolower(static_cast<unsigned char>(c));
  for (const OpRule* r : idx.patterns) {
    if (Matches(*r, op, lower)) return r;
  }
  return nullptr;
}

std::string_view OpKind(std::string_view op) {
  const OpRule* r = FindOpRule(op);
  return r == nullptr ? std::string_view() : r->kind;
}

OpWorkResult DeriveOpWork(const OpCall& call, const OpContext& ctx) {
  const OpRule* r = FindOpRule(call.op);
  if (r == nullptr) return OpWorkResult{};
  const internal::ConventionFn fn = kFns[static_cast<size_t>(r->convention)];
  if (fn == nullptr) return OpWorkResult{};
  OpWorkResult w = fn(call, *r, ctx);
  if (w.outcome == Outcome::kWork) {
    w.work.kind = std::string(r->kind);
    if (!w.work.bytes_known) w.work.bytes = 0;
  }
  return w;
}

}  // namespace qprof::work
