// What to tell a user whose file qprof cannot read: for the reports of NVIDIA's tools
// (binary formats qprof does not parse), the exact command that exports what qprof reads.
#ifndef QPROF_ANALYSIS_IMPORTERS_INPUT_HINTS_H_
#define QPROF_ANALYSIS_IMPORTERS_INPUT_HINTS_H_

#include <string>

namespace qprof::importers {

// One line for a file of unknown kind: "<path>: an Nsight Systems report (.nsys-rep), ...
// export it first: nsys export --type sqlite --output <stem>.sqlite <path>", the same for
// Nsight Compute reports (ncu --import ... --csv --page raw), else the list of kinds qprof
// reads.
std::string UnreadableInputMessage(const std::string& path);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_INPUT_HINTS_H_
