// Fixture Profiles and a Diff for report tests: the DESIGN.md story in miniature.
//
// MXFP4 routes moe.experts to a SIMT slot-GEMV; NVFP4 routes it to a tensor-core W4A16
// GEMM. The figures are TEST FIXTURES (provenance says so), shaped like the story: two
// SIMT kernels take ~77% of decode with MXFP4. Kernel names carry < > & on purpose so
// that writers must escape them. The fixture diff is assembled here by hand (rows matched
// by role) so that report tests do not depend on the analysis module.
#ifndef QPROF_TESTS_REPORTS_FIXTURES_H_
#define QPROF_TESTS_REPORTS_FIXTURES_H_

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::testing {

// format: "mxfp4" or "nvfp4". with_metrics: kernels carry tensor_pipe_pct (as if CUPTI
// counters were available); without it, the profile warns that metrics were unavailable.
proto::Profile MakeFixtureProfile(const std::string& format, bool with_metrics);

// a = MXFP4, b = NVFP4.
proto::Diff MakeFixtureDiff(const proto::Profile& a, const proto::Profile& b);

// A small trace: two streams, overlapping kernels on stream 7, one memcpy, NVTX ranges.
proto::Trace MakeFixtureTrace();

}  // namespace qprof::testing

#endif  // QPROF_TESTS_REPORTS_FIXTURES_H_
