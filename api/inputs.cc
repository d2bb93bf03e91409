#include "api/inputs.h"

#include <sys/stat.h>

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "kernels/registry/registry.h"
#include "proto/trace_io.h"
#include "reports/json/json_report.h"
#include "analysis/aggregate/partial.h"
#include "analysis/importers/import.h"
#include "analysis/ingest.h"

namespace qprof::api {

absl::StatusOr<proto::Trace> LoadTraceInput(
    const std::string& path, std::shared_ptr<const importers::GraphCaptureSet> graph_captures) {
  importers::ImportOptions options;
  options.graph_captures = std::move(graph_captures);
  return importers::ImportFile(path, options);
}

absl::StatusOr<std::shared_ptr<const importers::GraphCaptureSet>> LoadGraphCaptures(
    const std::vector<std::string>& paths) {
  if (paths.empty()) return std::shared_ptr<const importers::GraphCaptureSet>();
  importers::ImportOptions options;
  options.progress = false;
  return importers::ReadGraphCaptures(paths, options);
}

absl::Status CheckDistinctInputs(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::pair<dev_t, ino_t>, const std::string*>> seen;
  for (const std::string& p : paths) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) continue;  // the importer says what is wrong with it
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    for (const auto& [other, name] : seen) {
      if (other != id) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          p, ": given twice", *name == p ? "" : absl::StrCat(" (also as ", *name, ")"),
          ": each input is analysed as one rank, so a repeat would count its kernels twice; "
          "give it once"));
    }
    seen.emplace_back(id, &p);
  }
  return absl::OkStatus();
}

bool LooksLikeProfileJson(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::string head(4096, '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string::npos || head[i] != '{') return false;
  return head.find("\"schema_version\"") != std::string::npos &&
         head.find("\"traceEvents\"") == std::string::npos &&
         head.find("\"sources\"") != std::string::npos;
}

namespace {

bool LooksLikePartialFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string head(8, '\0');
  f.read(head.data(), 8);
  head.resize(static_cast<size_t>(f.gcount()));
  return aggregate::LooksLikePartial(head);
}

}  // namespace

absl::StatusOr<aggregate::ProfileState> AccumulateInputs(const std::vector<std::string>& paths,
                                                         const AccumulateOptions& options) {
  // Runs of trace files are ingested together (in parallel); partials are merged in order.
  aggregate::ProfileState state;
  std::vector<std::string> run;
  auto flush = [&state, &run, &options]() -> absl::Status {
    if (run.empty()) return absl::OkStatus();
    IngestOptions ingest;
    ingest.import.progress = options.progress;
    ingest.threads = options.threads;
    ingest.import.graph_captures = options.graph_captures;
    ingest.import.layer_model = options.layer_model;
    if (options.threads == 1) ingest.import.threads = 1;  // a large Kineto file too
    ingest.import.max_threads = options.threads;          // and never more than asked
    ASSIGN_OR_RETURN(aggregate::ProfileState s, IngestFiles(run, ingest));
    state.Merge(std::move(s));
    run.clear();
    return absl::OkStatus();
  };
  for (const std::string& p : paths) {
    if (!LooksLikePartialFile(p)) {
      run.push_back(p);
      continue;
    }
    RETURN_IF_ERROR(flush());
    ASSIGN_OR_RETURN(aggregate::ProfileState s, aggregate::ReadPartialFile(p));
    state.Merge(std::move(s));
  }
  RETURN_IF_ERROR(flush());
  return state;
}

absl::StatusOr<proto::Profile> ReadProfileReport(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return reports::ProfileFromJson(text, path);
}

absl::StatusOr<proto::Profile> LoadProfileInput(const std::string& path,
                                                const AnalyzeOptions& options) {
  if (LooksLikeProfileJson(path)) return ReadProfileReport(path);
  ASSIGN_OR_RETURN(aggregate::ProfileState state, AccumulateInputs({path}));
  return AnalyzeState(state, options);
}

std::vector<classify::KnownKernel> RegistryKnownKernels() {
  std::vector<classify::KnownKernel> out;
  for (const kernels::KernelInfo& k : kernels::KernelRegistry::Global().All()) {
    classify::KnownKernel e;
    e.cuda_name_prefix = k.cuda_kernel_name;
    e.kernel_id = k.id;
    e.role = k.role;
    e.pipe_class = k.gpu_pipe_class;
    e.format = k.format;
    e.compute_pipe = k.compute_pipe;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace qprof::api
