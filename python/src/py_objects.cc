#include "python/src/py_objects.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "api/inputs.h"
#include "python/src/status_exceptions.h"
#include "reports/html/html_report.h"
#include "reports/json/json_report.h"
#include "reports/terminal/terminal_report.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace qprof::python {
namespace {

std::string Json(const google::protobuf::Message& m, bool pretty) {
  return ValueOrThrow(reports::MessageToJson(m, {.pretty = pretty}));
}

nb::bytes Serialize(const google::protobuf::Message& m) {
  std::string s = m.SerializeAsString();
  return nb::bytes(s.data(), s.size());
}

template <typename M>
M Parse(nb::bytes b, const char* what) {
  M m;
  if (!m.ParseFromArray(b.c_str(), static_cast<int>(b.size()))) {
    ThrowIfError(absl::InvalidArgumentError(std::string("not a serialized ") + what));
  }
  return m;
}

// The command's terminal options: colour, --top, --wide (names in full, as the command
// prints them into a pipe or file).
reports::TerminalOptions Terminal(bool color, int top, bool wide = false) {
  reports::TerminalOptions o;
  o.color = color;
  o.top_kernels = top;
  o.wide = wide;
  return o;
}

// A trace's records as columns (name -> list), for a DataFrame or plain dicts. Built with
// the GIL held; every column has one entry per record.
template <typename T, typename F>
nb::list Column(const google::protobuf::RepeatedPtrField<T>& rows, F get) {
  nb::list out;
  for (const T& r : rows) out.append(get(r));
  return out;
}

nb::dict ActivityColumns(const proto::Trace& t) {
  const auto& a = t.activities();
  using A = proto::Activity;
  nb::dict c;
  c["kind"] = Column(a, [](const A& r) {
    std::string k = proto::ActivityKind_Name(r.kind());
    return nb::str(k.rfind("ACTIVITY_KIND_", 0) == 0 ? k.substr(14).c_str() : k.c_str());
  });
  c["name"] = Column(a, [](const A& r) { return nb::str(r.name().c_str(), r.name().size()); });
  c["device_id"] = Column(a, [](const A& r) { return nb::int_(r.device_id()); });
  c["stream_id"] = Column(a, [](const A& r) { return nb::int_(r.stream_id()); });
  c["start_ns"] = Column(a, [](const A& r) { return nb::int_(r.start_ns()); });
  c["end_ns"] = Column(a, [](const A& r) { return nb::int_(r.end_ns()); });
  c["duration_ns"] = Column(a, [](const A& r) { return nb::int_(r.end_ns() - r.start_ns()); });
  c["correlation_id"] = Column(a, [](const A& r) { return nb::int_(r.correlation_id()); });
  c["nvtx_path"] = Column(a, [](const A& r) { return nb::str(r.nvtx_path().c_str()); });
  c["grid"] = Column(a, [](const A& r) {
    return nb::make_tuple(r.grid().x(), r.grid().y(), r.grid().z());
  });
  c["block"] = Column(a, [](const A& r) {
    return nb::make_tuple(r.block().x(), r.block().y(), r.block().z());
  });
  c["registers_per_thread"] =
      Column(a, [](const A& r) { return nb::int_(r.registers_per_thread()); });
  c["shared_bytes"] = Column(a, [](const A& r) {
    return nb::int_(r.static_shared_bytes() + r.dynamic_shared_bytes());
  });
  c["bytes"] = Column(a, [](const A& r) { return nb::int_(r.bytes()); });
  c["copy_kind"] = Column(a, [](const A& r) { return nb::str(r.copy_kind().c_str()); });
  c["graph_id"] = Column(a, [](const A& r) { return nb::int_(r.graph_id()); });
  c["pid"] = Column(a, [](const A& r) { return nb::int_(r.pid()); });
  c["tid"] = Column(a, [](const A& r) { return nb::int_(r.tid()); });
  c["kernel_id"] = Column(a, [](const A& r) { return nb::str(r.kernel_id().c_str()); });
  c["role"] = Column(a, [](const A& r) { return nb::str(r.attribution().role().c_str()); });
  c["class"] =
      Column(a, [](const A& r) { return nb::str(r.attribution().pipe_class().c_str()); });
  c["format"] = Column(a, [](const A& r) { return nb::str(r.attribution().format().c_str()); });
  c["evidence"] =
      Column(a, [](const A& r) { return nb::str(r.attribution().evidence().c_str()); });
  c["tensor_pipe_pct"] = Column(a, [](const A& r) -> nb::object {
    if (!r.metrics().has_tensor_pipe_pct()) return nb::none();
    return nb::float_(r.metrics().tensor_pipe_pct());
  });
  return c;
}

nb::dict RangeColumns(const proto::Trace& t) {
  using R = proto::NvtxRange;
  const auto& r = t.ranges();
  nb::dict c;
  c["path"] = Column(r, [](const R& x) { return nb::str(x.path().c_str()); });
  c["name"] = Column(r, [](const R& x) { return nb::str(x.name().c_str()); });
  c["start_ns"] = Column(r, [](const R& x) { return nb::int_(x.start_ns()); });
  c["end_ns"] = Column(r, [](const R& x) { return nb::int_(x.end_ns()); });
  c["pid"] = Column(r, [](const R& x) { return nb::int_(x.pid()); });
  c["tid"] = Column(r, [](const R& x) { return nb::int_(x.tid()); });
  c["depth"] = Column(r, [](const R& x) { return nb::int_(x.depth()); });
  return c;
}

void RegisterProfile(nb::module_& m) {
  nb::class_<PyProfile>(m, "Profile")
      .def("to_json", [](const PyProfile& p, bool pretty) { return Json(p.profile, pretty); },
           "pretty"_a = false, nb::call_guard<nb::gil_scoped_release>())
      .def("write_json",
           [](const PyProfile& p, const std::string& path) {
             ThrowIfError(reports::WriteProfileJson(p.profile, path));
           },
           "path"_a, nb::call_guard<nb::gil_scoped_release>())
      .def("to_html", [](const PyProfile& p) { return reports::RenderProfileHtml(p.profile); },
           nb::call_guard<nb::gil_scoped_release>())
      .def("write_html",
           [](const PyProfile& p, const std::string& path) {
             ThrowIfError(reports::WriteProfileHtml(p.profile, path));
           },
           "path"_a, nb::call_guard<nb::gil_scoped_release>())
      .def("summary",
           [](const PyProfile& p, bool color, int top, bool wide) {
             return reports::ProfileSummaryText(p.profile, Terminal(color, top, wide));
           },
           "color"_a = false, "top"_a = 15, "wide"_a = false)
      .def_prop_rw(
          "label", [](const PyProfile& p) { return p.profile.label(); },
          [](PyProfile& p, const std::string& l) { p.profile.set_label(l); })
      .def("to_bytes", [](const PyProfile& p) { return Serialize(p.profile); })
      .def_static("from_bytes",
                  [](nb::bytes b) { return PyProfile{Parse<proto::Profile>(b, "Profile")}; });
}

void RegisterDiff(nb::module_& m) {
  nb::class_<PyDiff>(m, "Diff")
      .def("to_json", [](const PyDiff& d, bool pretty) { return Json(d.diff, pretty); },
           "pretty"_a = false, nb::call_guard<nb::gil_scoped_release>())
      .def("write_json",
           [](const PyDiff& d, const std::string& path) {
             ThrowIfError(reports::WriteDiffJson(d.diff, path));
           },
           "path"_a, nb::call_guard<nb::gil_scoped_release>())
      .def("to_html",
           [](const PyDiff& d) {
             reports::DiffHtmlInputs in{&d.a, &d.b};
             return reports::RenderDiffHtml(d.diff, in);
           },
           nb::call_guard<nb::gil_scoped_release>())
      // The diff alone, without each side's ceilings and step timelines: the notebook view.
      .def("to_html_compact",
           [](const PyDiff& d) {
             reports::HtmlOptions o;
             o.notebook = true;
             return reports::RenderDiffHtml(d.diff, {}, o);
           },
           nb::call_guard<nb::gil_scoped_release>())
      .def("write_html",
           [](const PyDiff& d, const std::string& path) {
             reports::DiffHtmlInputs in{&d.a, &d.b};
             ThrowIfError(reports::WriteDiffHtml(d.diff, path, in));
           },
           "path"_a, nb::call_guard<nb::gil_scoped_release>())
      .def("summary",
           [](const PyDiff& d, bool color, int top, bool wide) {
             return reports::DiffSummaryText(d.diff, Terminal(color, top, wide));
           },
           "color"_a = false, "top"_a = 15, "wide"_a = false)
      .def("to_bytes",
           [](const PyDiff& d) {
             return nb::make_tuple(Serialize(d.diff), Serialize(d.a), Serialize(d.b));
           })
      .def_static("from_bytes", [](nb::bytes diff, nb::bytes a, nb::bytes b) {
        return PyDiff{Parse<proto::Diff>(diff, "Diff"), Parse<proto::Profile>(a, "Profile"),
                      Parse<proto::Profile>(b, "Profile")};
      });
}

void RegisterTrace(nb::module_& m) {
  nb::class_<PyTrace>(m, "Trace")
      .def("header_json",
           [](const PyTrace& t) { return Json(t.trace.header(), /*pretty=*/false); })
      .def_prop_ro("truncated", [](const PyTrace& t) { return t.trace.truncated(); })
      .def_prop_ro("truncation_detail",
                   [](const PyTrace& t) { return t.trace.truncation_detail(); })
      .def("__len__", [](const PyTrace& t) { return t.trace.activities_size(); })
      .def("activity_columns", [](const PyTrace& t) { return ActivityColumns(t.trace); })
      .def("range_columns", [](const PyTrace& t) { return RangeColumns(t.trace); });
}

}  // namespace

PyTrace ReadTraceFile(const std::string& path) {
  return PyTrace{ValueOrThrow(api::LoadTraceInput(path))};
}

void RegisterObjects(nb::module_& m) {
  RegisterProfile(m);
  RegisterDiff(m);
  RegisterTrace(m);
}

}  // namespace qprof::python
