#include "analysis/devices/identify.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace qprof::devices {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// "304 CUs, 192 GiB and gfx942": what identified it, in the vendor's words.
std::string Evidence(const DeviceProperties& p, bool nvidia) {
  std::vector<std::string> parts;
  if (p.sm_count > 0) parts.push_back(absl::StrCat(p.sm_count, nvidia ? " SMs" : " CUs"));
  if (p.memory_bytes > 0) {
    parts.push_back(absl::StrFormat("%.0f GiB", static_cast<double>(p.memory_bytes) / kGiB));
  }
  if (!p.arch.empty()) parts.push_back(p.arch);
  if (parts.size() <= 1) return absl::StrJoin(parts, "");
  const std::string last = parts.back();
  parts.pop_back();
  return absl::StrCat(absl::StrJoin(parts, ", "), " and ", last);
}

std::string Names(const std::vector<const DeviceSpec*>& specs) {
  std::vector<std::string> names;
  for (const DeviceSpec* s : specs) names.push_back(s->name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

bool PropertiesFit(const DeviceSpec& spec, const DeviceProperties& p) {
  if (!p.vendor.empty() && p.vendor != spec.vendor) return false;
  if (p.sm_count > 0 && p.sm_count != static_cast<uint32_t>(spec.sm_count.value)) return false;
  if (p.memory_bytes > 0 && spec.memory_gb.value > 0) {
    // Table memory is in the vendor's GB, which for HBM parts is GiB-sized stacks (192 GB =
    // 8 x 24 GiB); the tolerance covers both readings and what the driver keeps.
    const double gib = static_cast<double>(p.memory_bytes) / kGiB;
    if (std::abs(gib - spec.memory_gb.value) > kMemoryTolerance * spec.memory_gb.value) return false;
  }
  if (!p.arch.empty() && !spec.arch.empty() && p.arch != spec.arch) return false;
  return true;
}

Identification IdentifyDevice(const DeviceProperties& p) {
  Identification id;
  const std::vector<const DeviceSpec*> by_name = DevicesMatchingName(p.name);
  for (const DeviceSpec* s : by_name) {
    if (!PropertiesFit(*s, p)) continue;
    id.spec = s;
    id.how = "name";
    return id;
  }
  if (!by_name.empty()) {
    // The name says which GPU; properties the table does not know for it (a 32 GB V100,
    // a board with memory carved out) do not overrule it, but the report says so.
    id.spec = by_name.front();
    id.how = "name";
    id.note = absl::StrCat("\"", p.name, "\" is ", id.spec->name, " by its name, but the trace "
                           "reports ", Evidence(p, id.spec->IsNvidia()), " (the table: ",
                           static_cast<int>(id.spec->sm_count.value),
                           id.spec->IsNvidia() ? " SMs, " : " CUs, ", id.spec->memory_gb.value,
                           " GB): its figures are used as they are");
    return id;
  }
  // No name of the table: the properties alone, all of which must be known.
  if (p.sm_count == 0 || p.memory_bytes == 0) {
    if (!p.name.empty() || p.sm_count > 0) {
      id.note = absl::StrCat("\"", p.name, "\" is not in the spec table, and the trace gives too "
                             "few properties (SM count and memory) to identify it");
    }
    return id;
  }
  std::vector<const DeviceSpec*> fit;
  for (const DeviceSpec& s : AllDevices()) {
    if (PropertiesFit(s, p)) fit.push_back(&s);
  }
  const std::string shown = p.name.empty() ? "a GPU with no name" : absl::StrCat("\"", p.name, "\"");
  if (fit.size() == 1) {
    id.spec = fit.front();
    id.how = "properties";
    id.evidence = Evidence(p, id.spec->IsNvidia());
    id.note = absl::StrCat(id.spec->name, ", identified by ", id.evidence, " (", shown,
                           " in the trace; the spec table's row with those properties)");
  } else if (fit.empty()) {
    id.note = absl::StrCat(shown, " with ", Evidence(p, p.vendor != "AMD"),
                           " fits no device of the spec table");
  } else {
    id.note = absl::StrCat(shown, " with ", Evidence(p, fit.front()->IsNvidia()), " fits ", Names(fit),
                           " alike: not identified (--device NAME to choose)");
  }
  return id;
}

}  // namespace qprof::devices
