// Helpers shared by the work rules (op_work.cc, gemm_work.cc, attention_work.cc,
// memory_work.cc); not part of the module's interface.
#ifndef QPROF_ANALYSIS_WORK_WORK_UTIL_H_
#define QPROF_ANALYSIS_WORK_WORK_UTIL_H_

#include <string>
#include <string_view>

#include "analysis/work/op_work.h"

namespace qprof::work::internal {

OpWorkResult Invalid(const OpCall& call, std::string_view why);
OpWorkResult Done(OpWork w);

// Bytes of one argument at its dtype; sets *known = false when it is a tensor of unknown dtype.
double ArgBytes(const OpArg& a, bool* known);
// The dtype's short name, "?" when unknown.
std::string_view DtypeText(const OpArg& a);
// Bytes per element of `a`'s dtype, 0 when unknown.
double ElementBytes(const OpArg& a);
// "aten::mm [8944,1024]x[1024,2816] bf16": the op, its tensor shapes joined by `joiner`, the
// first tensor's dtype.
std::string Describe(const OpCall& call, std::string_view shapes, const OpArg& typed);
// The Concrete Inputs value at `index` is "True".
bool FlagAt(const OpCall& call, size_t index);
// The argument at `index` is a tensor (non-empty dims).
bool TensorAt(const OpCall& call, size_t index);

}  // namespace qprof::work::internal

#endif  // QPROF_ANALYSIS_WORK_WORK_UTIL_H_
