// Step 7 of the analysis (analyze.cc), the profile's warnings: what each input's collector
// or importer reported, what the analysis itself could not do (device, metrics, launch
// contexts, graph captures), kernels on the other side of the comm split than at ingest,
// work that needs the model's shape, and kernels no evidence attributes.
#ifndef QPROF_ANALYSIS_PROFILE_WARNINGS_H_
#define QPROF_ANALYSIS_PROFILE_WARNINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/aggregate/tables.h"
#include "analysis/analyze.h"
#include "analysis/device_choice.h"
#include "proto/profile.pb.h"

namespace qprof {

// Appends one warning (code, message) to the profile.
void Warn(proto::Profile* p, const std::string& code, const std::string& message);

// The last path component ("rank0.json" of "/runs/rank0.json"): how warnings name inputs.
std::string BaseName(const std::string& path);

// The warnings of step 7, in the order the profile lists them.
void AddWarnings(const aggregate::ProfileState& state,
                 const std::vector<aggregate::GroupVerdict>& verdicts, const DeviceChoice& device,
                 const AnalyzeOptions& options, uint64_t with_metrics, proto::Profile* profile);

// A span past 2^53 ns (104 days): the JSON report writes it exact, and says that a reader
// parsing doubles rounds it (after the headline, which it does not concern).
void WarnSpanBeyondJson(proto::Profile* profile);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_PROFILE_WARNINGS_H_
