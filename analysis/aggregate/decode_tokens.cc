#include "analysis/aggregate/decode_tokens.h"

#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/work/op_call.h"

namespace qprof::aggregate {
namespace {

std::string Count(double n) { return absl::StrFormat("%.6g", n); }

std::string Plural(double n, std::string_view one, std::string_view many) {
  return absl::StrCat(Count(n), " ", std::string(n == 1 ? one : many));
}

// The named steps of the kind the traces trust most that launched GPU work.
struct Named {
  double steps = 0, tokens = 0, prefill = 0;
  uint64_t time_ns = 0, kernel_ns = 0;
  bool all_known = true;
  std::string example;                      // the first step's name
  std::vector<double> per_step_tokens;
};

Named NamedSteps(const ProfileState& state) {
  uint8_t kind = DecodeStepName::kNone;
  for (const TraceState& t : state.traces) {
    for (const DecodeStepAcc& d : t.decode_steps.steps()) {
      if (d.kernels > 0 && d.kind > kind) kind = d.kind;
    }
  }
  Named n;
  if (kind == DecodeStepName::kNone) return n;
  for (const TraceState& t : state.traces) {
    for (const DecodeStepAcc& d : t.decode_steps.steps()) {
      if (d.kind != kind || d.kernels == 0) continue;
      const DecodeStepName p = ParseDecodeStepName(d.name);
      ++n.steps;
      n.time_ns += static_cast<uint64_t>(d.last_ns - d.first_ns);
      n.kernel_ns += d.kernel_ns;
      if (n.example.empty()) n.example = d.name;
      n.all_known &= p.tokens_known;
      n.tokens += p.tokens;
      n.prefill += p.prefill_seqs;
      n.per_step_tokens.push_back(p.tokens);
    }
  }
  return n;
}

// Graph replays per capture annotation (file, annotation): their batch, pieces and replays.
struct CaptureGroup {
  uint32_t batch = 0, pieces = 0;
  uint64_t replays = 0;
  std::string source;
};

std::vector<CaptureGroup> CaptureGroups(const ProfileState& state, uint64_t* replays_total) {
  std::map<std::tuple<std::string, std::string, uint32_t>, CaptureGroup> groups;
  *replays_total = 0;
  for (const TraceState& t : state.traces) {
    const proto::GraphCaptureJoin& j = t.header.launch_context_stats().graph_capture();
    *replays_total += j.replays();
    for (const proto::GraphCaptureUse& u : j.uses()) {
      const std::string file = u.capture().substr(0, u.capture().find(" #"));
      CaptureGroup& g = groups[{file, u.batch_source(), u.batch()}];
      g.batch = u.batch();
      g.pieces = std::max<uint32_t>(u.pieces(), 1);
      g.replays += u.replays();
      g.source = u.batch_source();
    }
  }
  std::vector<CaptureGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

}  // namespace

double GemmRows(const proto::LaunchContextStats& t, uint32_t stack) {
  if (stack == 0 || stack >= static_cast<uint32_t>(t.stacks_size())) return 0;
  const proto::LaunchFrame* op = nullptr;
  for (uint32_t f : t.stacks(static_cast<int>(stack)).frames()) {
    if (f < static_cast<uint32_t>(t.frames_size()) && t.frames(static_cast<int>(f)).kind() == "cpu_op") {
      op = &t.frames(static_cast<int>(f));
    }
  }
  if (op == nullptr || op->name() == "aten::bmm" || op->name() == "aten::baddbmm") return 0;
  auto call = work::ParseKinetoOpCall(op->name(), op->input_dims(), op->input_types(),
                                      op->concrete_inputs());
  if (!call.ok()) return 0;
  for (const work::OpArg& a : call->args) {
    if (!a.IsTensor() || a.dims.size() < 2) continue;
    double rows = 1;
    for (size_t i = 0; i + 1 < a.dims.size(); ++i) rows *= static_cast<double>(a.dims[i]);
    return rows;
  }
  return 0;
}

DecodeTokens DeriveDecodeTokens(const ProfileState& state) {
  DecodeTokens out;
  const Named named = NamedSteps(state);
  uint64_t replays = 0;
  const std::vector<CaptureGroup> groups = CaptureGroups(state, &replays);
  std::string replays_text;
  if (named.steps > 0 && named.all_known) {
    out.known = named.tokens > 0;
    out.steps = named.steps;
    out.tokens = named.tokens;
    out.tokens_per_step = named.tokens / named.steps;
    out.step_time_ns = named.time_ns;
    out.step_kernel_ns = named.kernel_ns;
    const bool iteration = ParseDecodeStepName(named.example).kind == DecodeStepName::kIteration;
    out.source = absl::StrCat(
        Plural(out.tokens_per_step, "token", "tokens"), " per step (",
        named.steps == 1 ? "" : "mean over " + Plural(named.steps, "step", "steps") + " of ",
        iteration ? "the iteration annotation, its decoding sequences: " : "the step range: ",
        named.example.substr(0, 96), named.example.size() > 96 ? "..." : "", ")");
    if (named.prefill > 0) {
      absl::StrAppend(&out.source, "; ", Count(named.prefill),
                      " sequences in prefill not counted (whether their chunk ends the prompt "
                      "is not in the name)");
    }
    if (replays > 0) out.replays_per_step = static_cast<double>(replays) / named.steps;
  } else {
    double steps = 0, tokens = 0;
    std::vector<std::string> sources;
    // A capture that names no batch: the rows of the first GEMM the replays ran.
    const TraceState* first_gemm = nullptr;
    for (const TraceState& t : state.traces) {
      if (t.first_replay_gemm_rows > 0 &&
          (first_gemm == nullptr || t.first_replay_gemm_ns < first_gemm->first_replay_gemm_ns)) {
        first_gemm = &t;
      }
    }
    for (const CaptureGroup& g : groups) {
      if (g.replays == 0) continue;
      const double batch = g.batch > 0 ? g.batch : first_gemm != nullptr ? first_gemm->first_replay_gemm_rows : 0;
      if (batch <= 0) continue;
      const double s = static_cast<double>(g.replays) / g.pieces;
      steps += s;
      tokens += s * batch;
      sources.push_back(absl::StrCat(
          g.batch > 0 ? absl::StrCat(g.source, ": the graph capture's batch ", g.batch)
                      : absl::StrCat("the M dimension of the first GEMM the graph replays ran, ",
                                     first_gemm->first_replay_gemm, " (the capture names no batch)"),
          g.pieces > 1 ? absl::StrCat(", ", g.pieces, " pieces") : ""));
    }
    if (steps > 0) {
      out.known = true;
      if (named.steps > 0) {  // named steps without tokens (prefill): their count wins
        tokens *= named.steps / steps;
        steps = named.steps;
        out.step_time_ns = named.time_ns;
        out.step_kernel_ns = named.kernel_ns;
      }
      out.steps = steps;
      out.tokens = tokens;
      out.tokens_per_step = tokens / steps;
      out.replays_per_step = static_cast<double>(replays) / steps;
      out.source = absl::StrCat(Plural(out.tokens_per_step, "token", "tokens"), " per step (",
                                absl::StrJoin(sources, "; "), ")");
    }
  }
  if (out.known && out.replays_per_step > 0) {
    absl::StrAppend(&out.source, ", ", Plural(out.replays_per_step, "graph replay", "graph replays"),
                    " per step");
  }
  return out;
}

}  // namespace qprof::aggregate
