// `qprof merge` as a library call: partial profiles (`qprof analyze --partial`, from other
// machines or ranks) combined in the order given, then analysed as `qprof analyze` would
// analyse all their traces at once: the same Profile. Partials are file paths or, for the
// Python module and Ray, the bytes of .qprofile files.
#ifndef QPROF_API_MERGE_H_
#define QPROF_API_MERGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/analyze.h"
#include "proto/profile.pb.h"

namespace qprof::api {

struct MergeRequest {
  std::vector<std::string> paths;        // .qprofile files, merged first, in order
  std::vector<std::string> bytes;        // .qprofile contents, merged after the paths
  std::vector<std::string> byte_names;   // what each of `bytes` is called in errors
  // Analysis options (sass_paths, device, model, label, top, tokens, steps, on_note);
  // its inputs are ignored.
  AnalyzeRequest analysis;
};

// The merged partials analysed. InvalidArgument when there are none, naming a partial
// that is not one (or of another version).
absl::StatusOr<proto::Profile> Merge(const MergeRequest& request);

// The merged partials as one partial (bytes of a .qprofile), for a reduction in stages,
// and a one-line description.
absl::StatusOr<PartialResult> MergeToPartial(const MergeRequest& request);

}  // namespace qprof::api

#endif  // QPROF_API_MERGE_H_
