// Partial profiles (`qprof merge` inputs) from arbitrary bytes: a damaged or hostile
// .qprofile must be refused with one error or analysed, never crash or run away.
#include <cstddef>
#include <cstdint>

#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qprof::proto::PartialProfile p;
  if (!p.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto state = qprof::aggregate::FromPartial(p, "fuzz.qprofile");
  if (!state.ok()) return 0;
  auto again = qprof::aggregate::FromPartial(p, "fuzz.qprofile");
  if (!again.ok()) __builtin_trap();
  state->Merge(std::move(*again));
  auto profile = qprof::AnalyzeState(*state, {});
  (void)profile;
  return 0;
}
