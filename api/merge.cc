#include "api/merge.h"

#include <utility>

#include "analysis/aggregate/partial.h"
#include "api/inputs.h"
#include "base/status_macros.h"
#include "fmt/core.h"

namespace qprof::api {
namespace {

absl::StatusOr<aggregate::ProfileState> MergedState(const MergeRequest& request) {
  if (request.paths.empty() && request.bytes.empty()) {
    return absl::InvalidArgumentError("no partial profiles to merge");
  }
  RETURN_IF_ERROR(CheckDistinctInputs(request.paths));
  aggregate::ProfileState state;
  for (const std::string& path : request.paths) {
    ASSIGN_OR_RETURN(aggregate::ProfileState s, aggregate::ReadPartialFile(path));
    state.Merge(std::move(s));
  }
  for (size_t i = 0; i < request.bytes.size(); ++i) {
    const std::string what = i < request.byte_names.size() ? request.byte_names[i]
                                                           : fmt::format("partial {}", i);
    ASSIGN_OR_RETURN(aggregate::ProfileState s,
                     aggregate::ParsePartialBytes(request.bytes[i], what));
    state.Merge(std::move(s));
  }
  if (request.analysis.on_note) {
    request.analysis.on_note(fmt::format("merged {} partial profiles: {} traces, {} kernels",
                                         request.paths.size() + request.bytes.size(),
                                         state.traces.size(), state.groups.size()));
  }
  return state;
}

}  // namespace

absl::StatusOr<proto::Profile> Merge(const MergeRequest& request) {
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsFor(request.analysis));
  ASSIGN_OR_RETURN(aggregate::ProfileState state, MergedState(request));
  return AnalyzeState(state, options);
}

absl::StatusOr<PartialResult> MergeToPartial(const MergeRequest& request) {
  ASSIGN_OR_RETURN(aggregate::ProfileState state, MergedState(request));
  PartialResult out;
  ASSIGN_OR_RETURN(out.bytes, aggregate::PartialBytes(state));
  out.summary = fmt::format("partial profile of {} traces, {} kernels", state.traces.size(),
                            state.groups.size());
  return out;
}

}  // namespace qprof::api
