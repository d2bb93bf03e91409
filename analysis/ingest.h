// Ingest: trace files -> one aggregation state, streamed, several files at once.
//
// Each file is read by its importer straight into a ProfileState of its own
// (aggregate/accumulator.h) through the TraceSink interface, so no file is ever held as a
// proto::Trace: memory per file is its state (distinct kernels, devices, streams, steps
// and a bounded timeline sample), whatever the file's length. Files are read on up to
// `threads` threads (one per core by default) and their states are merged in the order the
// paths were given, as soon as their predecessors are done, so the result does not depend
// on which file finished first: analysing N files equals merging N partial profiles of
// them (aggregate/partial.h), field for field.
#ifndef QPROF_ANALYSIS_INGEST_H_
#define QPROF_ANALYSIS_INGEST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/aggregate/accumulator.h"
#include "analysis/importers/import.h"

namespace qprof {

struct IngestOptions {
  importers::ImportOptions import;
  int threads = 0;  // files read at once: 0 = one per core
};

// The first error in path order (a file that cannot be read stops the whole ingest).
absl::StatusOr<aggregate::ProfileState> IngestFiles(const std::vector<std::string>& paths,
                                                    const IngestOptions& options = {});

// One file into a state of its own.
absl::StatusOr<aggregate::ProfileState> IngestFile(const std::string& path,
                                                   const importers::ImportOptions& options);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_INGEST_H_
