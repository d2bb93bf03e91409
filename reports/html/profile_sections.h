// Sections of the Profile page that the Diff page reuses (not a public API).
#ifndef QPROF_REPORTS_HTML_PROFILE_SECTIONS_H_
#define QPROF_REPORTS_HTML_PROFILE_SECTIONS_H_

#include <string>
#include <vector>

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"
#include "reports/html/svg_charts.h"

namespace qprof::reports::html {

// A banner that says plainly where the times came from when that is not a GPU
// measurement (host CPU, imported file, modelled); empty for GPU measurements.
std::string ProvenanceBanner(const proto::Profile& p);

// Roles table and the sortable, filterable kernels table.
std::string BottleneckSection(const proto::Profile& p, const std::string& id_prefix = "");

// The waterfall bars: measured -> Amdahl if the top role vanished (-> at its roofline) ->
// roofline of this format -> roofline of the other formats, on the profiled device.
std::vector<CeilingBar> CeilingBars(const proto::Profile& p);

// Waterfall, the table of formulas and inputs behind it, Amdahl rows, format ceilings on
// every device of the spec table.
std::string CeilingsSection(const proto::Profile& p, const std::string& id_prefix = "");

// Warnings, collector statistics, unknown kernels, sources and notes.
std::string WarningsSection(const proto::Profile& p);

// What the ceilings charts could seem to contradict (ceiling_notes.cc): the legend's
// solid/dashed code; why rooflines rank MXFP4 above NVFP4 (fewer bits per weight) while runs
// rank by kernel path; empty when there is nothing to explain.
std::string BarLegendText(bool all_modelled);
std::string RooflineRankingNote(const std::vector<CeilingBar>& bars);
std::string ModelRankingNote(const std::string& a_format, double a_tps,
                             const std::string& b_format, double b_tps);

// Span, busy and idle of the GPUs, the gaps between kernels, host runtime calls, the
// launch-bound verdict and Amdahl against the span (idle_section.cc); empty without kernels.
std::string IdleSection(const proto::Profile& p);

// One row per GPU timeline (span, busy, idle, comm and copies, exposed parts); "" when no
// device has kernels or copies (comm_section.cc).
std::string PerGpuTable(const proto::Profile& p);

// Communication, copies and waits per GPU: timeline bands, collectives, copies, idle causes,
// host synchronisation and the tensor-parallel diagnosis (comm_section.cc).
std::string CommSection(const proto::Profile& p);

// The diff's collectives and copies per unit of work (comm_diff_section.cc); "" without any.
std::string CommDiffSection(const proto::Diff& d);

// NVTX ranges by name (like nsys stats' nvtx_sum); empty without ranges.
std::string NvtxSummarySection(const proto::Profile& p);

// One row per rank (input trace) with the straggler marked; empty for a single trace.
std::string RankSection(const proto::Profile& p);

}  // namespace qprof::reports::html

#endif  // QPROF_REPORTS_HTML_PROFILE_SECTIONS_H_
