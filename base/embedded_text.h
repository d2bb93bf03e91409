// A file embedded in the binary at build time (qprof_embed_texts in
// cmake/QprofHelpers.cmake): tables kept as data in the source tree, one file per row,
// with no install path to find at run time.
#ifndef QPROF_BASE_EMBEDDED_TEXT_H_
#define QPROF_BASE_EMBEDDED_TEXT_H_

#include <string_view>
#include <vector>

namespace qprof {

struct EmbeddedText {
  std::string_view name;  // file name without its folder: "h200.json"
  std::string_view text;  // the file's bytes
};

}  // namespace qprof

#endif  // QPROF_BASE_EMBEDDED_TEXT_H_
