#include "analysis/aggregate/group_work.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace qprof::aggregate {
namespace {

void AddFormat(const std::string& f, std::vector<std::string>* formats) {
  if (!f.empty() && std::find(formats->begin(), formats->end(), f) == formats->end()) {
    formats->push_back(f);
  }
}

}  // namespace

GroupWork WorkOfGroup(const KernelGroup& g, const work::ModelShape* model) {
  GroupWork w;
  std::vector<std::string> sources;
  if (g.work_launches > 0) {
    // Registry work models: their sums (the launches' work varies with their shapes).
    GroupWork::Entry e;
    e.flops = g.work_flops / static_cast<double>(g.work_launches);
    e.bytes = g.work_bytes / static_cast<double>(g.work_launches);
    e.pipe = g.rep.work().compute_pipe();
    e.launches = g.work_launches;
    e.time_ns = g.work_time_ns;
    w.entries.push_back(e);
    w.flops += g.work_flops;
    w.bytes += g.work_bytes;
    w.time_ns += g.work_time_ns;
    w.launches += g.work_launches;
    w.registry_pipe = e.pipe;
    w.from_registry = true;
    sources.push_back(std::string(work::work_source::kRegistry));
  }
  const work::LaunchWork* best = nullptr;
  double best_time = -1;
  size_t shapes = 0;
  for (const ShapeWorkAcc& acc : g.shape_work) {
    if (acc.timed == 0) continue;
    work::LaunchWork lw = acc.work;
    if (lw.needs_model) {
      if (model == nullptr) {
        w.needs_model += acc.timed;
        w.model_note = absl::StrCat("the work of ", lw.moe_op,
                                    " calls needs the model's shape: pass --model-shape CONFIG "
                                    "(a Hugging Face config.json)");
        continue;
      }
      if (absl::Status s = work::ApplyModelShape(*model, &lw); !s.ok()) {
        w.needs_model += acc.timed;
        w.model_note = std::string(s.message());
        continue;
      }
    }
    const double n = static_cast<double>(acc.timed);
    GroupWork::Entry e;
    e.flops = lw.work.flops;
    e.bytes = lw.work.bytes;
    e.weight_bytes = lw.work.weight_bytes;
    e.weight_params = lw.work.weight_bits > 0 ? lw.work.weight_bytes * 8 / lw.work.weight_bits : 0;
    e.precision = lw.work.precision;
    e.launches = acc.timed;
    e.time_ns = acc.time_ns;
    w.entries.push_back(e);
    w.flops += e.flops * n;
    w.bytes += e.bytes * n;
    w.weight_bytes += e.weight_bytes * n;
    w.weight_params += e.weight_params * n;
    w.time_ns += acc.time_ns;
    w.launches += acc.timed;
    w.bytes_known &= lw.work.bytes_known;
    AddFormat(lw.work.weight_format, &w.formats);
    (acc.work.needs_model          ? w.from_model
     : !acc.work.modelled.empty() ? w.from_layers
     : acc.work.from_capture      ? w.from_capture
                                  : w.from_shapes) = true;
    if (acc.work.from_capture) w.from_capture_launches += acc.timed;
    ++shapes;
    if (acc.time_ns > best_time) {
      best_time = acc.time_ns;
      best = &acc.work;
      w.precision = lw.work.precision;
      // The description of the resolved work (MoE: with the model's figures).
      const std::string src(acc.work.needs_model
                                ? absl::StrCat(work::work_source::kModel,
                                               acc.work.from_capture ? " (the call at graph capture)" : "")
                            : !acc.work.modelled.empty() ? work::work_source::kModelledLayers
                            : acc.work.from_capture      ? work::work_source::kCaptureShapes
                                                         : work::work_source::kShapes);
      w.source = absl::StrCat(src, ": ", lw.Describe(),
                              acc.work.modelled.empty() ? "" : " as " + acc.work.modelled);
    }
  }
  if (best != nullptr) {
    if (shapes > 1) absl::StrAppend(&w.source, " (and ", shapes - 1, " other shapes)");
    if (!sources.empty()) w.source = absl::StrCat(sources.front(), "; ", w.source);
  } else if (!sources.empty()) {
    w.source = sources.front();
  }
  if (!w.bytes_known) w.bytes = 0;
  w.invalid = g.shape_invalid;
  w.invalid_example = g.shape_invalid_example;
  return w;
}

void FillRowWork(const GroupWork& w, uint64_t calls, proto::KernelRow* row) {
  std::vector<std::string> notes;
  if (w.launches > 0 && w.time_ns > 0) {
    row->set_flops(w.flops);
    row->set_bytes(w.bytes);
    row->set_work_launches(w.launches);
    row->set_work_time_ns(static_cast<uint64_t>(w.time_ns));
    // Over the launches with work: bytes / ns = GB/s; flops / ns / 1e3 = TFLOP/s.
    if (w.bytes > 0) row->set_achieved_gbps(w.bytes / w.time_ns);
    if (w.flops > 0) row->set_achieved_tflops(w.flops / w.time_ns / 1e3);
    row->set_work_source(w.source);
    if (w.launches < calls) {
      notes.push_back(absl::StrCat(w.launches, " of ", calls,
                                   " launches carry work; rates are over those only"));
    }
    if (!w.bytes_known) {
      notes.push_back("bytes unknown: the trace records no dtype for some inputs (a tensor list, "
                      "or nsys sizes with a kernel name that names no type)");
    }
  }
  if (w.needs_model > 0) notes.push_back(absl::StrCat(w.needs_model, " launches: ", w.model_note));
  if (w.invalid > 0) {
    notes.push_back(absl::StrCat(w.invalid, " launches' shapes did not add up (",
                                 w.invalid_example, "): no work"));
  }
  row->set_work_note(absl::StrJoin(notes, "; "));
}

}  // namespace qprof::aggregate
