// The progress bar `qprof run` draws on a terminal while it decodes.
#ifndef QPROF_CLI_RUN_PROGRESS_H_
#define QPROF_CLI_RUN_PROGRESS_H_

#include <string>

namespace qprof::cli {

// One line of the progress display for decode step `step` of `steps` of format number
// `index` (0-based) of `count`: "[1/2 mxfp4] [#######.......]  step 3/8". Fits `width`.
std::string RunProgressLine(const std::string& format, int index, int count, int step,
                            int steps, int width = 60);

}  // namespace qprof::cli

#endif  // QPROF_CLI_RUN_PROGRESS_H_
