#include "analysis/importers/qtrace/qtrace_importer.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

#ifdef QPROF_HAVE_TRACE_IO
#include "proto/trace_io.h"
#endif

namespace qprof::importers {

absl::StatusOr<proto::Trace> ImportQtrace(const std::string& path, const ImportOptions& options) {
#ifdef QPROF_HAVE_TRACE_IO
  ASSIGN_OR_RETURN(proto::Trace trace, ReadTrace(path));
  proto::TraceHeader* h = trace.mutable_header();
  // A .qtrace saved by `qprof import` remembers what it was converted from.
  if (!h->source_kind().empty() && h->source_kind() != "qtrace") {
    h->add_notes(absl::StrCat("converted from ", h->source_kind(), " ", h->source_path()));
  }
  h->set_source_path(path);
  h->set_source_kind("qtrace");
  if (trace.truncated()) {
    h->mutable_collector()->add_warnings(
        absl::StrCat(path, ": truncated trace read up to its last whole frame (",
                     trace.truncation_detail(), ")"));
  }
  return trace;
#else
  return absl::UnimplementedError(
      absl::StrCat(path, ": this build has no .qtrace reader (proto/trace_io.cc missing)"));
#endif
}

}  // namespace qprof::importers
