#include "analysis/device_choice.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/devices/identify.h"

namespace qprof {
namespace {

devices::DeviceProperties PropertiesOf(const proto::DeviceInfo& d) {
  devices::DeviceProperties p;
  p.name = d.name();
  p.vendor = d.vendor();
  p.arch = d.arch();
  p.sm_count = d.sm_count();
  p.memory_bytes = d.memory_bytes();
  return p;
}

}  // namespace

absl::StatusOr<DeviceChoice> ChooseDevice(const aggregate::ProfileState& state,
                                          const AnalyzeOptions& options) {
  DeviceChoice c;
  if (!options.device.empty()) {
    c.spec = devices::FindDevice(options.device);
    if (!c.spec) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--device ", options.device, ": not in the spec table (see `qprof devices`)"));
    }
    return c;
  }
  // The first GPU of the traces the table knows, by its name and properties (an unnamed GPU
  // by its properties alone); the notes of those it could not place say why.
  std::vector<std::string> notes;
  for (const aggregate::TraceState& t : state.traces) {
    for (const auto& d : t.header.devices()) {
      if (d.kind() == "host_cpu") continue;
      const devices::Identification id = devices::IdentifyDevice(PropertiesOf(d));
      if (!id.note.empty() &&
          std::find(notes.begin(), notes.end(), id.note) == notes.end()) {
        notes.push_back(id.note);
      }
      if (id.spec != nullptr) {
        c.spec = id.spec;
        c.note = id.note;
        return c;
      }
    }
  }
  c.note = absl::StrJoin(notes, "; ");
  if (state.traces[0].header.provenance() == proto::PROVENANCE_MEASURED_HOST) {
    c.spec = devices::FindDevice(devices::kDefaultProjectionDevice);
    c.host_default = true;
  }
  return c;
}

}  // namespace qprof
