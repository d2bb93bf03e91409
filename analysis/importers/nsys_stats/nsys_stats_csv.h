// `nsys stats --format csv` reports: the kernel summaries as a profile without a timeline.
//
// The most shared Nsight Systems artefact is not the .nsys-rep but the CSV of its kernel
// summary, one row per kernel (nsys's report scripts, CudaGpuKernSum and friends):
//   cuda_gpu_kern_sum     Time (%), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns),
//                         Max (ns), StdDev (ns), Name (older nsys: Time(%), Average,
//                         Minimum, Maximum)
//   cuda_gpu_kern_gb_sum  the same per grid and block: ..., GridXYZ, BlockXYZ, Name
//   cuda_kern_exec_sum    PID, TID, DevId, Count, QCount, T*/A*/Q*/K* Avg, Med, Min, Max,
//                         StdDev (total, API, queue, kernel time), API Name, Kernel Name
// Times are in the unit the column names ("(ns)", "(us)", "(ms)", "(s)": nsys --timeunit).
// Such a file holds each kernel's total time, launch count, minimum and maximum, and nothing
// about when the launches ran: the trace lays each kernel's launches end to end (one at its
// minimum, one at its maximum, the rest sharing what is left of its total, so total, count,
// minimum and maximum are the file's), on device DevId (0 when the report has no device
// column), and says in TraceHeader.no_timeline that idle time, overlap and steps are unknown.
// Classes, roles (by name), shares and Amdahl bounds come out as for any trace.
//
// Other `nsys stats` reports (API calls, memory operations, NVTX ranges, the GPU trace) are
// recognised by their columns and refused with the report to export instead.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_STATS_NSYS_STATS_CSV_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_STATS_NSYS_STATS_CSV_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "analysis/importers/common/trace_sink.h"

namespace qprof::importers {

// True when `head` (the file's first bytes) holds the header row of an `nsys stats` CSV
// report of any kind.
bool LooksLikeNsysStatsCsv(std::string_view head);

// Streams the kernel summary in `text` (read from `path`) into `sink`. InvalidArgument for
// another stats report (naming it and the report to export instead) or a summary without
// kernel rows; DataLoss for a quoted field cut by the end of the file.
absl::Status StreamNsysStatsCsvText(std::string_view text, const std::string& path,
                                    TraceSink* sink);

absl::Status StreamNsysStatsCsv(const std::string& path, TraceSink* sink);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_STATS_NSYS_STATS_CSV_H_
