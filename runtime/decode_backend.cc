#include "runtime/decode_backend.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/model_arch.h"
#include "runtime/plan.h"

namespace qprof::runtime {
namespace {

absl::Status ValidateForEveryBatch(const RunOptions& options, const std::vector<int>& batches) {
  if (batches.empty()) return absl::InvalidArgumentError("no batch size to run");
  ASSIGN_OR_RETURN(const ModelArch arch, LoadModelArch(options.model));
  for (int b : batches) {
    RunOptions o = options;
    o.batch = b;
    RETURN_IF_ERROR(ValidateRunOptions(o, arch));
  }
  return absl::OkStatus();
}

std::string Names(const std::vector<DecodeBackend*>& backends) {
  std::string out;
  for (const DecodeBackend* b : backends) absl::StrAppend(&out, out.empty() ? "" : ", ", b->name());
  return out;
}

}  // namespace

absl::StatusOr<std::vector<RunResult>> RunOnBackends(const std::vector<DecodeBackend*>& backends,
                                                     const RunOptions& options,
                                                     const std::vector<int>& batches) {
  RETURN_IF_ERROR(ValidateForEveryBatch(options, batches));
  if (options.backend != "auto") {
    for (DecodeBackend* b : backends) {
      if (b->name() == options.backend) return b->RunBatches(options, batches);
    }
    return absl::UnimplementedError(absl::StrCat("backend '", options.backend,
                                                 "' is not available in this build (backends: ",
                                                 Names(backends), ")"));
  }
  std::string skipped;  // why a present backend could not run
  for (DecodeBackend* b : backends) {
    std::string why;
    const DecodeBackend::Availability a = b->Probe(&why);
    if (a == DecodeBackend::Availability::kUnusable && skipped.empty()) skipped = why;
    if (a != DecodeBackend::Availability::kReady) continue;
    RunOptions o = options;
    o.backend = b->name();
    ASSIGN_OR_RETURN(std::vector<RunResult> results, b->RunBatches(o, batches));
    if (!skipped.empty()) {
      // A GPU is there but cannot run this build's kernels: say so instead of hiding it.
      for (RunResult& r : results) {
        r.backend_note = absl::StrCat("ran on ", b->where(), ": ", skipped);
        r.trace.mutable_header()->add_notes(r.backend_note);
      }
    }
    return results;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no backend can run here (backends: ", Names(backends), skipped.empty() ? "" : "; ",
      skipped, ")"));
}

}  // namespace qprof::runtime
