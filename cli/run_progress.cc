#include "cli/run_progress.h"

#include <algorithm>

#include "fmt/core.h"

namespace qprof::cli {

std::string RunProgressLine(const std::string& format, int index, int count, int step, int steps,
                            int width) {
  const std::string head = fmt::format("[{}/{} {}] ", index + 1, count, format);
  const std::string tail = fmt::format(" step {}/{}", step, steps);
  const int cells = std::max(10, width - static_cast<int>(head.size() + tail.size()) - 2);
  const int done = steps > 0 ? static_cast<int>(static_cast<long long>(cells) * step / steps) : 0;
  return head + "[" + std::string(static_cast<size_t>(std::clamp(done, 0, cells)), '#') +
         std::string(static_cast<size_t>(cells - std::clamp(done, 0, cells)), '.') + "]" + tail;
}

}  // namespace qprof::cli
