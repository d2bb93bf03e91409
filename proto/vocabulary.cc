#include "proto/vocabulary.h"

#include <algorithm>

namespace qprof {

int evidence::Rank(std::string_view e) {
  if (e == kMeasured) return 7;
  if (e == kSass) return 6;
  if (e == kRegistry) return 5;
  if (e == kWorkRate) return 4;
  if (e == kLaunchContext) return 3;
  if (e == kNameRule) return 2;
  if (e == kModelled) return 1;
  return 0;
}

bool IsKnownRole(std::string_view s) {
  return std::find(role::kAll.begin(), role::kAll.end(), s) != role::kAll.end();
}

bool IsKnownPipeClass(std::string_view s) {
  return std::find(pipe::kAll.begin(), pipe::kAll.end(), s) != pipe::kAll.end();
}

std::string_view ProvenanceLabel(proto::Provenance p) {
  switch (p) {
    case proto::PROVENANCE_MEASURED_GPU: return provenance::kMeasuredGpu;
    case proto::PROVENANCE_MEASURED_HOST: return provenance::kMeasuredHost;
    case proto::PROVENANCE_IMPORTED: return provenance::kImported;
    case proto::PROVENANCE_MODELLED: return provenance::kModelled;
    default: return provenance::kUnspecified;
  }
}

std::string ProvenanceWithSource(proto::Provenance p, std::string_view source_path) {
  std::string out(ProvenanceLabel(p));
  if (p == proto::PROVENANCE_IMPORTED && !source_path.empty()) {
    out.append(provenance::kFrom).append(source_path);
  }
  return out;
}

double format::BitsPerWeight(std::string_view f) {
  if (f == kMxfp4) return 4.0 + 8.0 / 32.0;
  if (f == kNvfp4) return 4.0 + 8.0 / 16.0;
  if (f == kFp8) return 8.0 + 32.0 / (128.0 * 128.0);
  if (f == kBf16 || f == kFp16) return 16.0;
  if (f == kFp32) return 32.0;
  if (f == kInt8) return 8.0;
  return 0.0;
}

}  // namespace qprof
