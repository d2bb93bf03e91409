#include "api/run.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/decode_backends.h"
#include "api/format_path_split.h"
#include "api/run_reports.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "kernels/registry/dispatch.h"
#include "proto/trace_io.h"

namespace qprof::api {
namespace {

std::vector<std::string> FormatsToRun(const std::string& format) {
  if (format == "both") return {"mxfp4", "nvfp4"};
  return {format};
}

void Progress(const RunRequest& r, const std::string& line) {
  if (r.on_progress) r.on_progress(line);
}

void Output(const RunRequest& r, const std::string& text) {
  if (r.on_output) r.on_output(text);
}

// Every batch size of one format, on weights built (and uploaded) once.
absl::StatusOr<std::vector<runtime::RunResult>> RunFormat(const RunRequest& request,
                                                          const std::string& format, int index,
                                                          int count) {
  runtime::RunOptions o = request.options;
  o.format = format;
  const auto start = std::chrono::steady_clock::now();
  o.on_step = [&request, &format, index, count](int step, int steps) {
    if (request.on_step) request.on_step(format, index, count, step, steps);
  };
  // Setup stages with the time since this format started, so a run cut short by a
  // timeout still says where its time went.
  o.on_progress = [&request, &format, start](const std::string& line) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Progress(request, fmt::format("[{}] +{:.1f} s {}", format, t, line));
  };
  Progress(request, fmt::format("[{}] building weights and caches for model {} ...", format,
                                o.model));
  const std::vector<std::unique_ptr<runtime::DecodeBackend>> owned = MakeDecodeBackends();
  std::vector<runtime::DecodeBackend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  ASSIGN_OR_RETURN(std::vector<runtime::RunResult> runs,
                   runtime::RunOnBackends(backends, o, request.batches));
  for (runtime::RunResult& r : runs) {
    r.trace.mutable_header()->mutable_run()->set_command_line(request.command_line);
    r.trace.mutable_header()->mutable_run()->set_qprof_version(request.qprof_version);
  }
  return runs;
}

absl::StatusOr<std::string> WriteFormatTrace(const std::string& out_dir, const std::string& format,
                                             const runtime::RunResult& r) {
  RETURN_IF_ERROR(MakeDirs(out_dir));
  std::string path = absl::StrCat(out_dir, "/", format, ".qtrace");
  RETURN_IF_ERROR(WriteTrace(r.trace, path));
  return path;
}

// The format/path split of one batch size (api/format_path_split.h): its text, and
// <out_dir>/split.json.
absl::Status WriteSplit(const RunRequest& request, int batch, bool on_host,
                        const std::string& mx_path, const std::string& nv_path,
                        const std::string& out_dir) {
  runtime::RunOptions o = request.options;
  o.batch = batch;
  o.backend = on_host ? "cpu" : "cuda";  // where the main runs ran
  const std::vector<std::unique_ptr<runtime::DecodeBackend>> owned = MakeDecodeBackends();
  std::vector<runtime::DecodeBackend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  ASSIGN_OR_RETURN(FormatPathSplit split,
                   MeasureFormatPathSplit(backends, o, mx_path, nv_path, request.split_repeats,
                                          [&request](const std::string& line) {
                                            Progress(request, line);
                                          }));
  RETURN_IF_ERROR(MakeDirs(out_dir));
  const std::string path = absl::StrCat(out_dir, "/split.json");
  RETURN_IF_ERROR(WriteFileAtomic(path, FormatSplitJson(split)));
  Output(request, absl::StrCat(FormatSplitText(split), "  split: ", path, "\n"));
  return absl::OkStatus();
}

// --backend model: the modelled traces are the run; their reports as for measured ones.
absl::Status RunModelled(const RunRequest& request) {
  if (request.batches.size() != 1) {
    return absl::InvalidArgumentError(
        "--batch: a list of batch sizes needs --backend cpu, cuda or auto");
  }
  runtime::RunOptions base = request.options;
  base.batch = request.batches[0];
  ASSIGN_OR_RETURN(ModelRunFiles modelled,
                   RunModelBackend(base, request.format, request.options.moe_backend,
                                   request.model, request.out_dir, request.command_line));
  Output(request, modelled.report);
  // Reports for the modelled traces, exactly as for measured ones (they say "modelled").
  std::vector<FormatRunOutput> runs;
  for (const std::string& path : modelled.trace_paths) {
    ASSIGN_OR_RETURN(proto::Trace t, ReadTrace(path));
    std::string stem = path.substr(path.find_last_of('/') + 1);
    stem = stem.substr(0, stem.rfind(".qtrace"));
    runs.push_back({stem, std::move(t), path});
  }
  if (runs.size() > 2) runs.resize(2);  // the diff compares the first two variants
  ASSIGN_OR_RETURN(std::string text,
                   WriteRunReports(runs, {}, request.out_dir, "", request.on_progress));
  Output(request, text);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseBatches(const std::string& list) {
  std::vector<int> out;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    int b = 0;
    if (!absl::SimpleAtoi(item, &b) || b < 1 || b > 4096) {
      return absl::InvalidArgumentError(absl::StrCat(
          "each size must be an integer in [1, 4096] ('", std::string(item), "' in ", list, ")"));
    }
    if (std::find(out.begin(), out.end(), b) != out.end()) {
      return absl::InvalidArgumentError(absl::StrCat(b, " appears twice in ", list));
    }
    out.push_back(b);
  }
  return out;
}

std::string MoeBackendChoices() { return kernels::MoeBackendChoices(); }
std::string MlaKernelChoices() { return kernels::MlaKernelChoices(); }

std::string CheckMoeBackends(const std::string& value) {
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    auto k = kernels::ResolveMoeVariant("mxfp4", std::string(item), "");
    if (!k.ok()) return std::string(k.status().message());
  }
  return std::string();
}

std::string CheckMlaKernel(const std::string& value) {
  const kernels::KernelInfo* moe = *kernels::ResolveMoeVariant("mxfp4", "auto", "");
  auto k = kernels::ResolveMlaVariant(value, *moe);
  return k.ok() ? std::string() : std::string(k.status().message());
}

absl::Status Run(const RunRequest& request) {
  if (request.batches.empty()) return absl::InvalidArgumentError("--batch: no batch size");
  if (request.options.backend == "model") return RunModelled(request);
  if (request.options.moe_backend.find(',') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--moe-backend ", request.options.moe_backend,
        ": a list of MoE backends needs --backend model"));
  }
  const std::vector<std::string> formats = FormatsToRun(request.format);
  // results[format][batch]: each format builds its weights once for every batch size.
  std::vector<std::vector<runtime::RunResult>> results;
  for (size_t i = 0; i < formats.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<runtime::RunResult> r,
                     RunFormat(request, formats[i], static_cast<int>(i),
                               static_cast<int>(formats.size())));
    results.push_back(std::move(r));
  }
  // One folder per batch size when there are several (each reads like a one-batch run).
  for (size_t b = 0; b < request.batches.size(); ++b) {
    const int batch = request.batches[b];
    const std::string out_dir = request.batches.size() == 1
                                    ? request.out_dir
                                    : absl::StrCat(request.out_dir, "/b", batch);
    std::vector<double> tps;
    bool on_host = false;
    std::vector<FormatRunOutput> runs;
    for (size_t i = 0; i < formats.size(); ++i) {
      runtime::RunResult& r = results[i][b];
      on_host |= r.trace.header().provenance() == proto::PROVENANCE_MEASURED_HOST;
      ASSIGN_OR_RETURN(std::string path, WriteFormatTrace(out_dir, formats[i], r));
      if (request.on_format_done) request.on_format_done({formats[i], &r, path, batch});
      const auto& run = r.trace.header().run();
      tps.push_back(run.wall_time_ns() ? run.tokens_generated() / (run.wall_time_ns() * 1e-9) : 0);
      runs.push_back({formats[i], std::move(r.trace), path});
    }
    if (tps.size() == 2 && tps[0] > 0) {
      Output(request,
             fmt::format("nvfp4 / mxfp4 decode throughput on {} (batch {}): {:.2f}x ({}, this "
                         "run once: format and the MoE path each selects together{})\n",
                         runs[0].trace.header().run().model(), batch, tps[1] / tps[0],
                         on_host ? "host CPU" : "GPU",
                         request.split_repeats > 0 ? "; split below"
                                                   : "; --split-repeats N separates them"));
      if (request.split_repeats > 0) {
        RETURN_IF_ERROR(WriteSplit(request, batch, on_host, results[0][b].moe_backend_used,
                                   results[1][b].moe_backend_used, out_dir));
      }
    }
    ModelRunFiles projection;
    runtime::RunOptions base = request.options;
    base.batch = batch;
    if (on_host) {
      // Measured on the host CPU: add what the same workload would do on --target (default
      // the story's RTX PRO 6000), written and labelled as modelled.
      ASSIGN_OR_RETURN(projection, AddModelProjection(base, request.format, request.model,
                                                      out_dir, request.command_line));
      Output(request, projection.report);
    }
    // Per format <format>.json/.html/.perfetto.json, and diff.json/.html for two formats.
    // Host-CPU rooflines use --target, the projection's device, so both name one GPU.
    ASSIGN_OR_RETURN(std::string text,
                     WriteRunReports(runs, projection.trace_paths, out_dir,
                                     on_host ? request.model.target : std::string(),
                                     request.on_progress));
    Output(request, text);
  }
  return absl::OkStatus();
}

}  // namespace qprof::api
