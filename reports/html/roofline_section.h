// The roofline section of the Profile page (not a public API): arithmetic intensity
// (FLOP per byte of DRAM traffic) against achieved TFLOP/s on log axes, one roof per
// compute pipe the kernels use (min(peak, intensity x bandwidth), labelled with the peak and
// the device), one point per kernel row with FLOPs and bytes, sized by its time and coloured
// by its pipe class; then a table of every row with work (achieved rates, the roof, the
// fraction of it and where the work came from), bytes-only rows included.
#ifndef QPROF_REPORTS_HTML_ROOFLINE_SECTION_H_
#define QPROF_REPORTS_HTML_ROOFLINE_SECTION_H_

#include <string>

#include "proto/profile.pb.h"

namespace qprof::reports::html {

// Empty when no kernel row has work.
std::string RooflineSection(const proto::Profile& p);

// The chart alone (id "roofline"): points carry data-kernel, data-intensity, data-tflops
// and data-time-ns; roofs data-pipe and data-tflops. Empty when no row has both FLOPs and
// bytes, or the profile has no device roofs.
std::string RooflineSvg(const proto::Profile& p);

}  // namespace qprof::reports::html

#endif  // QPROF_REPORTS_HTML_ROOFLINE_SECTION_H_
