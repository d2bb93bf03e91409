// Partial profiles: a ProfileState (accumulator.h) as a versioned proto, in a file.
//
// `qprof analyze --partial OUT.qprofile` writes the state of its inputs instead of a
// finished Profile; `qprof merge A.qprofile B.qprofile ...` reads any number of them, merges
// them in the order given and finishes the analysis (classification and ceilings need every
// launch of a kernel, so they run after the merge, once). Merging partials of disjoint sets
// of traces gives the same Profile as analysing all the traces at once: every figure is
// carried exactly (counts, sums, min/max, per-trace interval unions, per-kernel duration
// lists up to the quantile sketch's exact limit), and where a component is a sketch or a
// sample its own merge is independent of how the inputs were split.
//
// File: the 8 bytes "QPROFPP1", then a serialized proto::PartialProfile whose version must be
// kPartialProfileVersion. Files are written to a temporary and renamed.
#ifndef QPROF_ANALYSIS_AGGREGATE_PARTIAL_H_
#define QPROF_ANALYSIS_AGGREGATE_PARTIAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/aggregate/accumulator.h"
#include "proto/partial.pb.h"

namespace qprof::aggregate {

// 2: kernels are keyed by (name, launch context, own) and carry launch configurations.
// 4: devices carry the compute / comm / copy unions and gap causes; kernels their comm flag;
// steps their comm time; collectives and copies by row (a version-3 file would read as
// having no communication at all, so it is refused).
inline constexpr uint32_t kPartialProfileVersion = 4;
inline constexpr char kPartialMagic[] = "QPROFPP1";

proto::PartialProfile ToPartial(const ProfileState& state);
// InvalidArgument naming `what` when the message is of another version or inconsistent.
absl::StatusOr<ProfileState> FromPartial(const proto::PartialProfile& partial,
                                         const std::string& what);

// The file's bytes (magic and message), e.g. to hand a partial between processes.
absl::StatusOr<std::string> PartialBytes(const ProfileState& state);
// InvalidArgument naming `what` when the bytes are not a partial profile of this version.
absl::StatusOr<ProfileState> ParsePartialBytes(const std::string& bytes, const std::string& what);

absl::Status WritePartialFile(const ProfileState& state, const std::string& path);
absl::StatusOr<ProfileState> ReadPartialFile(const std::string& path);
// True when the bytes start with the partial profile magic.
bool LooksLikePartial(const std::string& head);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_PARTIAL_H_
