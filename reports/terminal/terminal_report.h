// Terminal summaries that `qprof analyze`, `qprof diff` and `qprof run` print.
//
// Layout contract: every line fits `width` columns (default 100; kernel names are
// shortened in the middle), tables are aligned, and colour (ANSI SGR) is used only when
// TerminalOptions.color is set; callers set it from ShouldUseColor(), which says yes only
// for a TTY and honours NO_COLOR. Colour is never the only carrier of meaning: classes
// are printed as words too.
#ifndef QPROF_REPORTS_TERMINAL_TERMINAL_REPORT_H_
#define QPROF_REPORTS_TERMINAL_TERMINAL_REPORT_H_

#include <cstdio>
#include <string>

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::reports {

struct TerminalOptions {
  bool color = false;
  int width = 100;      // columns; clamped to [80, 200]
  int top_kernels = 10;
  int top_roles = 12;
  // Kernel names and roles in full, never shortened (lines may then pass `width`): for
  // pipes, files and joins with other tools' tables.
  bool wide = false;
};

// True when `out` is a terminal and the NO_COLOR environment variable is unset/empty.
bool ShouldUseColor(std::FILE* out);

// Headline, class split, top kernels, roles, ceilings, warnings.
void PrintProfileSummary(const proto::Profile& profile, std::FILE* out,
                         const TerminalOptions& options = {});
std::string ProfileSummaryText(const proto::Profile& profile,
                               const TerminalOptions& options = {});

// Headline sentences, both sides' tokens/s and class split, per-role rows with both times
// and deltas, kernels only in A / only in B.
void PrintDiffSummary(const proto::Diff& diff, std::FILE* out,
                      const TerminalOptions& options = {});
std::string DiffSummaryText(const proto::Diff& diff, const TerminalOptions& options = {});

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_TERMINAL_TERMINAL_REPORT_H_
