#include "analysis/classify/rate_evidence.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/vocabulary.h"

namespace qprof::classify {

double NonTensorRoofTflops(const devices::DeviceSpec& d, bool sub_word, std::string* how) {
  const double fp32 = d.fp32_simt_tflops.value;
  if (!sub_word) {
    if (how != nullptr) *how = absl::StrFormat("its FP32 non-tensor peak, %.4g TFLOP/s", fp32);
    return fp32;
  }
  if (how != nullptr) {
    *how = absl::StrFormat("%.4g x its FP32 non-tensor peak of %.4g TFLOP/s for 16-bit and "
                           "narrower work",
                           kSubWordSimtFactor, fp32);
  }
  return kSubWordSimtFactor * fp32;
}

bool ApplyRateEvidence(const RowWork& w, const devices::DeviceSpec& d, proto::Attribution* a) {
  const std::string& e = a->evidence();
  if (e == evidence::kMeasured || e == evidence::kSass || e == evidence::kRegistry ||
      e == evidence::kModelled) {
    return false;
  }
  if (w.flops <= 0 || w.time_ns <= 0 || w.launches == 0 || a->pipe_class() == pipe::kTensor) {
    return false;
  }
  std::string how;
  const double roof = NonTensorRoofTflops(d, w.sub_word, &how);
  const double rate = w.flops / w.time_ns / 1e3;  // FLOP per ns / 1e3 = TFLOP/s
  if (roof <= 0 || rate <= roof) return false;
  const std::string before = a->evidence_detail();
  a->set_pipe_class(std::string(pipe::kTensor));
  a->set_evidence(std::string(evidence::kWorkRate));
  a->set_evidence_detail(absl::StrFormat(
      "rate above the CUDA-core roof: %.4g TFLOP/s achieved over %d launch%s (%s) is above "
      "the %.4g TFLOP/s %s reaches without tensor cores (%s)%s",
      rate, w.launches, w.launches == 1 ? "" : "es", w.source, roof, d.name, how,
      before.empty() ? "" : absl::StrCat("; before: ", before)));
  return true;
}

}  // namespace qprof::classify
