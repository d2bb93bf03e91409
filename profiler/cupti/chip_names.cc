#include "profiler/cupti/chip_names.h"

#include <iterator>

namespace qprof::profiler::cupti {
namespace {

constexpr ChipRow kRows[] = {
    {7, 0, "GV100", "V100"},
    {7, 5, "TU102", "T4, RTX 20 series"},
    {8, 0, "GA100", "A100, A30"},
    {8, 6, "GA102", "A10, A40, RTX 30 series"},
    {8, 9, "AD102", "L4, L40S, RTX 40 series"},
    {9, 0, "GH100", "H100, H200, GH200"},
    {10, 0, "GB100", "B200, GB200"},
    {12, 0, "GB202", "RTX PRO 6000 Blackwell, RTX 50 series"},
};

}  // namespace

const ChipRow* ChipRows(int* count) {
  *count = static_cast<int>(std::size(kRows));
  return kRows;
}

const ChipRow* ChipForComputeCapability(int major, int minor) {
  for (const ChipRow& r : kRows) {
    if (r.cc_major == major && r.cc_minor == minor) return &r;
  }
  return nullptr;
}

}  // namespace qprof::profiler::cupti
