// `qprof sass` as a library call: the static instruction mix of every kernel of cubins,
// fatbins, executables, shared libraries or folders of cubins (tensor-core MMA versus SIMT
// FP32/FP16/INT), read with cuobjdump (analysis/sass).
#ifndef QPROF_API_SASS_H_
#define QPROF_API_SASS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/sass/sass_parser.h"

namespace qprof::api {

struct SassFile {
  std::string path;
  std::vector<sass::SassKernelStats> kernels;
};

// Folders stand for the cubins under them (Triton's cache layout). `sass_text`: the files
// are SASS listings already (cuobjdump --dump-sass output).
absl::StatusOr<std::vector<SassFile>> ReadSass(const std::vector<std::string>& paths,
                                               bool sass_text);

// The per-kernel counts as JSON (`qprof sass --json`).
std::string SassJson(const std::vector<SassFile>& files);

}  // namespace qprof::api

#endif  // QPROF_API_SASS_H_
