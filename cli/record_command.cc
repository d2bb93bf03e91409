// `qprof record [--metrics[=full]] [--out DIR] [--duration S] [--delay S]
//   [--capture-range=cudaProfilerApi|nvtx[:NAME[@DOMAIN]]] [--nvtx-capture=NAME[@DOMAIN]]
//   [--capture-range-end=stop-shutdown|stop|none|repeat[:N]|repeat-shutdown:N] [--] CMD ARGS...`
//
// Like `nsys profile`: options before the command are qprof's, everything from the first
// word that is not one of them (or after `--`) is the command and its arguments. The work
// is api::Record (api/record.h); this file parses, prints what each trace holds and the
// summary, and exits with the command's status.
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "api/record.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"
#include "reports/terminal/terminal_report.h"

namespace qprof::cli {
namespace {

// One line per trace file: what it holds and what it lost; cut and forked ones say so.
void PrintTraceLine(const std::string& file, const proto::Trace& t) {
  const proto::CollectorStats& s = t.header().collector();
  int kernels = 0;
  for (const proto::Activity& a : t.activities()) kernels += a.kind() == proto::ACTIVITY_KIND_KERNEL;
  fmt::print("trace {}: {} kernels, {} records dropped, {} invalid\n", file, kernels,
             s.records_dropped(), s.records_invalid());
  if (t.truncated()) {
    fmt::print("  cut: the process ended without finishing its trace (killed?); read up to its "
               "last whole chunk ({})\n", t.truncation_detail());
  }
  if (t.header().process().forked_from_pid() != 0) {
    fmt::print("  forked without exec from pid {}\n", t.header().process().forked_from_pid());
  }
  if (!s.ended_by().empty() && s.ended_by() != "exit") fmt::print("  ended by {}\n", s.ended_by());
  const auto& extra = t.header().run().extra();
  if (auto range = extra.find("capture_range"); range != extra.end()) {
    auto count = extra.find("capture_ranges");
    auto end = extra.find("capture_range_end");
    fmt::print("  capture range {}: {} range(s) recorded (range end: {})\n", range->second,
               count != extra.end() ? count->second : "0",
               end != extra.end() ? end->second : "?");
  }
  if (!s.subscriber_conflict().empty()) {
    fmt::print("  another CUPTI client held the GPU: {}\n", s.subscriber_conflict());
  }
  for (const std::string& w : s.warnings()) fmt::print("  warning: {}\n", w);
  if (s.metrics_requested() && !s.metrics_available()) {
    fmt::print("  metrics unavailable: {}\n", s.metrics_unavailable_reason());
  } else if (s.metrics_kernels_unmatched() > 0) {
    fmt::print("  metrics: {} kernels matched, {} without metrics\n", s.metrics_kernels_matched(),
               s.metrics_kernels_unmatched());
  }
}

absl::Status RunRecord(api::RecordRequest request) {
  request.on_note = PrintNote;
  ASSIGN_OR_RETURN(api::RecordResult r, api::Record(request));
  for (const auto& [path, trace] : r.traces) PrintTraceLine(path, trace);
  if (r.profile) {
    reports::TerminalOptions options;
    options.color = reports::ShouldUseColor(stdout);
    reports::PrintProfileSummary(*r.profile, stdout, options);
  } else if (r.no_profile_reason.rfind("no analysis", 0) == 0) {
    fmt::print(stderr, "qprof: {}\n", r.no_profile_reason);
  } else {
    fmt::print("{}\n", r.no_profile_reason);
  }
  if (r.exit_code != 0) {
    return absl::AbortedError(absl::StrCat(request.command[0], " exited with status ",
                                           r.exit_code, " (its traces were still written)"));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterRecordCommand(CLI::App& app, CommandRunner& runner) {
  auto o = std::make_shared<api::RecordRequest>();
  CLI::App* sub = app.add_subcommand(
      "record", "Profile any CUDA program: run it with the CUPTI injection library, write "
                "one trace per CUDA process and print a summary");
  CLI::Option* metrics =
      sub->add_option("--metrics", o->metric_set,
                      "Run the command a second time with hardware counters and join them onto "
                      "the first run's kernels (kernel replay: every kernel runs once per "
                      "counter pass, printed before the pass starts). `--metrics`: tensor-pipe "
                      "and FMA-pipe utilisation and DRAM throughput per kernel (about three "
                      "passes); `--metrics=full` (or `--metrics full`) adds SM throughput "
                      "(about ten passes)")
          ->expected(0, 1)
          ->check(CLI::IsMember({"default", "full"}));
  sub->add_option("--out", o->out_dir,
                  "Folder for the traces (qprof-<pid>-<run token>.qtrace, one per CUDA process)")
      ->capture_default_str();
  sub->add_option("--duration", o->duration_s,
                  "Keep only GPU activity of the first S seconds after CUDA starts (after "
                  "--delay; the command still runs to completion; 0 = all)")
      ->capture_default_str();
  sub->add_option("--delay,-y", o->capture.delay_s,
                  "Record nothing in the first S seconds after CUDA starts (as nsys --delay)")
      ->capture_default_str();
  sub->add_option("--capture-range,-c", o->capture.capture_range,
                  "Record only the work launched inside capture ranges, as nsys does: "
                  "cudaProfilerApi (between cudaProfilerStart and cudaProfilerStop: vLLM's and "
                  "SGLang's /start_profile and /stop_profile in CUDA-profiler mode), nvtx (an NVTX "
                  "range named by --nvtx-capture), or nvtx:RANGE[@DOMAIN]; none records everything");
  sub->add_option("--nvtx-capture,-p", o->capture.nvtx_capture,
                  "With --capture-range=nvtx: the NVTX range's message, RANGE or RANGE@DOMAIN "
                  "(RANGE@* for any domain; the default domain otherwise)");
  sub->add_option("--capture-range-end", o->capture.capture_range_end,
                  "What the end of a capture range does, as nsys: stop-shutdown (default: the "
                  "trace is finished and the program ended with SIGTERM), stop (the program "
                  "keeps running), none (range ends are ignored), repeat[:N] (every range, or "
                  "the first N), repeat-shutdown:N (the first N, then the program is ended)");
  // main() puts a `--` before the first word that is not one of the options above
  // (InsertCommandSeparator), so the command's own options never reach CLI11.
  sub->add_option("command", o->command,
                  "The command to profile and its arguments, after qprof's options (a `--` "
                  "before it is optional, as with nsys profile)")
      ->required()
      ->expected(-1);
  sub->callback([&runner, o, metrics] {
    o->metrics = metrics->count() > 0;
    runner.action = [o] { return RunRecord(*o); };
  });
}

}  // namespace qprof::cli
