// The inline style sheet and script shared by every HTML report.
#ifndef QPROF_REPORTS_HTML_HTML_ASSETS_H_
#define QPROF_REPORTS_HTML_HTML_ASSETS_H_

namespace qprof::reports::html {

extern const char kStyleSheet[];
// Sorting for <table class="sortable"> (click or Enter on a header; numbers sort by their
// data-sort value) and filtering for tables named by data-filter-table on an input or a
// select. Nothing else: the page is complete without it.
extern const char kScript[];

}  // namespace qprof::reports::html

#endif  // QPROF_REPORTS_HTML_HTML_ASSETS_H_
