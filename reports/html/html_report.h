// Self-contained HTML reports for a Profile and for a Diff.
//
// Contract:
// - ONE file: no network access, no external scripts, fonts or styles. Charts are inline
//   SVG generated here; a small inline script only sorts and filters tables. The page is
//   complete and readable with scripts disabled.
// - Every string from the input is HTML-escaped (kernel names contain < > &).
// - Every figure says where it came from (measured on GPU / host CPU, imported from a
//   file, static SASS, registry, name rule, modelled).
// - Colours are a colour-blind-safe palette (Okabe-Ito) and never the only carrier of
//   meaning: every coloured segment also has a text label or a tooltip and a table row.
// - Elements carry data-* attributes with the raw numbers (ns, shares, tok/s) so that tests
//   can compare the rendered page with the JSON report.
// - Write*Html() writes atomically (temp file + rename).
#ifndef QPROF_REPORTS_HTML_HTML_REPORT_H_
#define QPROF_REPORTS_HTML_HTML_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::reports {

struct HtmlOptions {
  std::string title;  // default: derived from the profile (label, model, device)
  // Links shown in the page footer to sibling files (e.g. "mxfp4.json"); relative paths.
  std::vector<std::pair<std::string, std::string>> links;  // (text, href)
  // The page shown inline in a notebook cell: without the table script (sorting and
  // filtering), so that the escaped copy a notebook holds stays smaller than the file.
  bool notebook = false;
};

std::string RenderProfileHtml(const proto::Profile& profile, const HtmlOptions& options = {});
absl::Status WriteProfileHtml(const proto::Profile& profile, const std::string& path,
                              const HtmlOptions& options = {});

// The two Profiles are optional: when given, the diff page adds their ceilings and their
// representative-step timelines; the Diff alone is enough for everything else.
struct DiffHtmlInputs {
  const proto::Profile* a = nullptr;
  const proto::Profile* b = nullptr;
  // A modelled projection of the same comparison onto a GPU (qprof run on a host without
  // one): shown beside the measured diff, labelled as modelled.
  const proto::Diff* projection = nullptr;
};

std::string RenderDiffHtml(const proto::Diff& diff, const DiffHtmlInputs& inputs = {},
                           const HtmlOptions& options = {});
absl::Status WriteDiffHtml(const proto::Diff& diff, const std::string& path,
                           const DiffHtmlInputs& inputs = {}, const HtmlOptions& options = {});

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_HTML_HTML_REPORT_H_
