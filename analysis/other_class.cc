#include "analysis/other_class.h"

#include "proto/vocabulary.h"

namespace qprof {

// The headline names class "other" when it holds more than this share of kernel time: above
// it the tensor/SIMT split a user reads first leaves out enough time to change a decision.
// 5% is also the share every public trace qprof is tried on is brought under by its rules.
constexpr double kOtherHeadlineShare = 0.05;
constexpr int kOtherHeadlineNames = 5;

void HeadlineOtherClass(proto::Profile* profile) {
  const uint64_t total = profile->totals().kernel_time_ns();
  uint64_t other = 0;
  uint32_t rows = 0;
  for (const proto::KernelRow& k : profile->kernels()) {
    if (k.class_() != pipe::kOther) continue;
    other += k.time_ns();
    ++rows;
  }
  const double share = total ? static_cast<double>(other) / static_cast<double>(total) : 0;
  if (share <= kOtherHeadlineShare) return;
  proto::OtherClassShare* o = profile->mutable_other_class();
  o->set_share(share);
  o->set_time_ns(other);
  o->set_kernel_rows(rows);
  // Kernel rows are sorted by time: the first rows of class other are the largest.
  for (const proto::KernelRow& k : profile->kernels()) {
    if (k.class_() != pipe::kOther) continue;
    if (o->top_size() >= kOtherHeadlineNames) break;
    proto::OtherKernel* t = o->add_top();
    t->set_name(k.name());
    t->set_share(k.share());
    t->set_evidence(k.evidence());
  }
}

}  // namespace qprof
