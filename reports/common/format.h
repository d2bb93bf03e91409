// Number and text formatting shared by the terminal and HTML writers, so both print the
// same figure the same way ("43.5 ms", "39.0%", "1.64x"), plus the diff headline.
#ifndef QPROF_REPORTS_COMMON_FORMAT_H_
#define QPROF_REPORTS_COMMON_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::reports {

// Duration with three significant digits and a unit: "950 ns", "812 us", "43.5 ms", "1.23 s".
std::string FormatNs(double ns);
// Share 0..1 as a percentage: "39.0%" (one decimal; "<0.1%" for tiny nonzero shares).
std::string FormatShare(double share);
// Signed share difference in percentage points: "+31.2 pp", "-0.4 pp".
std::string FormatSharePoints(double delta);
// Signed duration: "+1.20 ms", "-812 us".
std::string FormatDeltaNs(double ns);
// Tokens per second, three significant digits: "368 tok/s", "12.4 tok/s", "1.05k tok/s".
std::string FormatTokensPerS(double tps);
// Ratio: "1.64x".
std::string FormatRatio(double r);
// A number with three significant digits, no unit ("0.0123", "368", "3.36e+04" avoided:
// large values get k/M/G/T suffixes).
std::string FormatSig3(double v);
// Bytes: "2.10 GB"; FLOPs: "600 GFLOP".
std::string FormatBytes(double bytes);
std::string FormatFlops(double flops);

// Shortens `s` to at most `width` characters (bytes; never splits a UTF-8 sequence) by
// cutting the middle and inserting "...", keeping the template head and the tail.
std::string Ellipsize(const std::string& s, size_t width);

// Where the time figures of a profile came from, in words: "measured on GPU",
// "measured on host CPU (not a GPU)", "imported from trace.sqlite", "modelled".
std::string ProfileProvenance(const proto::Profile& p);
// The word for the run's own throughput: "modelled" for a modelled profile (so nothing
// from a model reads "measured"), else "measured".
std::string ThroughputWord(const proto::Profile& p);

// The device line of a profile: "NVIDIA H200 (sm_90)", joined with " + " for several.
std::string DeviceLine(const proto::Profile& p);
// True when the profiled devices are AMD GPUs ("tensor" then means matrix cores).
bool IsAmdProfile(const proto::Profile& p);

// Share of a pipe class in a profile (0 when absent).
double ClassShare(const proto::Profile& p, const std::string& cls);

// The role that moved most between the two sides of a diff: the diff's moved_role (largest
// change per unit of work), else the largest |delta_ns|; nullptr when the diff has no roles.
const proto::DiffRow* KeyRole(const proto::Diff& d);

// Sentences that tell the story of a diff, most important first, e.g.
//   diff.per_unit_headline ("comm: time per call 385 us -> 544 us (+41%) ...") and, when the
//   sides captured different amounts of work, a sentence saying so (else, for diffs made
//   before normalisation, "moe.experts: simt -> tensor, 39.0% -> 7.9% of kernel time ...")
//   "tokens/s: 368 -> 532 (1.45x)"
//   "tensor share: 9.0% -> 27.1% (+18.1 pp)"
// and diff.headline from the analyzer when the diff has no role rows.
std::vector<std::string> DiffHeadlines(const proto::Diff& d);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_COMMON_FORMAT_H_
