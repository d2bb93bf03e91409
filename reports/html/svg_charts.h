// Inline SVG charts for the HTML reports. Every chart scales with the page (viewBox,
// width 100%), carries role="img" with an aria-label, a <title> tooltip on every mark, and
// data-* attributes with the raw numbers for tests.
#ifndef QPROF_REPORTS_HTML_SVG_CHARTS_H_
#define QPROF_REPORTS_HTML_SVG_CHARTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/profile.pb.h"

namespace qprof::reports::html {

struct Segment {
  std::string cls;      // pipe class
  double share = 0;     // 0..1
  uint64_t time_ns = 0;
};

// One horizontal bar split by class, labels inside wide segments. `id` becomes the svg id.
// `view_width` is the viewBox width: pick about the rendered width in CSS pixels so that
// the 12px labels render at about 12px (1000 for full width, ~560 for half).
std::string SplitBarSvg(const std::vector<Segment>& segments, const std::string& id,
                        const std::string& aria_label, double view_width = 1000);
// The class legend with each class's share as text (so colour is not the only carrier).
std::string ClassLegend(const std::vector<Segment>& segments);

// Kernels of one representative decode step on their (device, stream) lanes; overlapping
// work on one stream is split onto extra lanes so nothing hides behind something else.
// `min_span_ns` > 0 stretches the axis to at least that span, so two timelines can share
// one scale.
std::string TimelineSvg(const std::vector<proto::TimelineEvent>& events, const std::string& id,
                        int64_t min_span_ns = 0);

struct CeilingBar {
  std::string label;         // "measured", "Amdahl: moe.experts vanished", "roofline nvfp4"
  double tokens_per_s = 0;
  std::string kind;          // "measured", "amdahl", "run-format", "other-format"
  std::string formula;
  std::string inputs;
  std::string provenance;
};

// Horizontal bars of tok/s ceilings in order (the waterfall). Log scale when the largest is
// more than 20x the smallest, said in the chart.
std::string WaterfallSvg(const std::vector<CeilingBar>& bars, const std::string& id);

struct PairRow {
  std::string key;
  uint64_t a_ns = 0, b_ns = 0;
  double a_share = 0, b_share = 0;
  std::string a_cls, b_cls;
};

// Per-role pairs of bars (A above B) on one time scale, coloured by each side's class.
std::string PairedBarsSvg(const std::vector<PairRow>& rows, const std::string& a_label,
                          const std::string& b_label, const std::string& id);

}  // namespace qprof::reports::html

#endif  // QPROF_REPORTS_HTML_SVG_CHARTS_H_
