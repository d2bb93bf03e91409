// The inline-PTX interpreter of the warp emulation: parses the text of a QPROF_PTX
// statement (the same string nvcc assembles), binds %n to the statement's operand list in
// GCC order (outputs, then inputs) and executes it, per thread (cp.async, ld.global.nc) or
// for a whole warp through the PTX warp model (mma.sync, ldmatrix). Only the instructions
// the kernels use are known; anything else is an error, never silently skipped.
#include <cctype>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/kernels/warp_emu/ptx_warp_model.h"
#include "tests/kernels/warp_emu/warp_emu_internal.h"

namespace qprof::warp {
namespace {

enum class Op {
  kUnknown,
  kMmaBf16,    // mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
  kMmaNvf4,    // mma.sync.aligned.m16n8k64 ... kind::mxf4nvf4 ... scale_vec::4X ... ue4m3
  kMmaMxf4,    // mma.sync.aligned.m16n8k64 ... kind::mxf4 ... scale_vec::2X ... ue8m0
  kLdsmX4,     // ldmatrix.sync.aligned.m8n8.x4.shared.b16
  kLdsmX4T,    // ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
  kCpAsyncCg,  // cp.async.cg.shared.global
  kCpAsyncCa,  // cp.async.ca.shared.global
  kCommit,     // cp.async.commit_group
  kWaitGroup,  // cp.async.wait_group N
  kWaitAll,    // cp.async.wait_all
  kLdgNcV4,    // ld.global.nc.v4.u32
};

struct Known {
  const char* opcode;
  Op op;
  bool collective;
  const char* signature;  // operand kinds: 4/2 = register list of that size, r = register,
                          // a = [address], i = immediate, x = register or immediate, ? = optional
};
constexpr Known kKnown[] = {
    {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", Op::kMmaBf16, true, "4424"},
    {"mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
     Op::kMmaNvf4, true, "4424r2r2"},
    {"mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
     Op::kMmaMxf4, true, "4424r2r2"},
    {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", Op::kLdsmX4, true, "4a"},
    {"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", Op::kLdsmX4T, true, "4a"},
    {"cp.async.cg.shared.global", Op::kCpAsyncCg, false, "aai?x"},
    {"cp.async.ca.shared.global", Op::kCpAsyncCa, false, "aai?x"},
    {"cp.async.commit_group", Op::kCommit, false, ""},
    {"cp.async.wait_group", Op::kWaitGroup, false, "x"},
    {"cp.async.wait_all", Op::kWaitAll, false, ""},
    {"ld.global.nc.v4.u32", Op::kLdgNcV4, false, "4a"},
};

struct Operand {
  char kind;              // 'l' list, 'r' register, 'a' address, 'i' immediate
  std::vector<int> regs;  // operand numbers (%n)
  long long imm = 0;
};
struct Instr {
  Op op = Op::kUnknown;
  bool collective = false;
  std::vector<Operand> ops;
  std::string error;  // why the text cannot be executed
};

std::string Trim(std::string s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool ParseReg(const std::string& tok, int* n) {
  if (tok.size() < 2 || tok[0] != '%') return false;
  for (size_t i = 1; i < tok.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(tok[i]))) return false;
  }
  *n = std::stoi(tok.substr(1));
  return true;
}

bool ParseOperand(const std::string& tok, Operand* o) {
  if (tok.size() >= 2 && tok.front() == '{' && tok.back() == '}') {
    o->kind = 'l';
    std::string inner = tok.substr(1, tok.size() - 2);
    size_t start = 0;
    for (size_t i = 0; i <= inner.size(); ++i) {
      if (i < inner.size() && inner[i] != ',') continue;
      int n;
      if (!ParseReg(Trim(inner.substr(start, i - start)), &n)) return false;
      o->regs.push_back(n);
      start = i + 1;
    }
    return true;
  }
  if (tok.size() >= 2 && tok.front() == '[' && tok.back() == ']') {
    int n;
    if (!ParseReg(Trim(tok.substr(1, tok.size() - 2)), &n)) return false;  // no [%n+imm] yet
    o->kind = 'a';
    o->regs.push_back(n);
    return true;
  }
  int n;
  if (ParseReg(tok, &n)) {
    o->kind = 'r';
    o->regs.push_back(n);
    return true;
  }
  if (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0]))) {
    o->kind = 'i';
    o->imm = std::stoll(tok);
    return true;
  }
  return false;
}

bool MatchesSignature(const std::vector<Operand>& ops, const char* sig) {
  size_t i = 0;
  for (const char* c = sig; *c != 0; ++c) {
    const bool optional = *c == '?';
    if (optional) ++c;
    if (i == ops.size()) return optional;
    const Operand& o = ops[i];
    bool ok = false;
    switch (*c) {
      case '4': case '2': ok = o.kind == 'l' && o.regs.size() == static_cast<size_t>(*c - '0'); break;
      case 'r': ok = o.kind == 'r'; break;
      case 'a': ok = o.kind == 'a'; break;
      case 'i': ok = o.kind == 'i'; break;
      case 'x': ok = o.kind == 'r' || o.kind == 'i'; break;
    }
    if (!ok) return false;
    ++i;
  }
  return i == ops.size();
}

Instr Parse(const char* text) {
  Instr in;
  std::string t = Trim(text);
  if (!t.empty() && t.back() == ';') t = Trim(t.substr(0, t.size() - 1));
  size_t sp = 0;
  while (sp < t.size() && !std::isspace(static_cast<unsigned char>(t[sp]))) ++sp;
  const std::string opcode = t.substr(0, sp);
  const std::string rest = Trim(t.substr(sp));
  const Known* known = nullptr;
  for (const Known& k : kKnown) {
    if (opcode == k.opcode) known = &k;
  }
  if (known == nullptr) {
    in.error = absl::StrCat("PTX instruction '", opcode, "' is not modelled by the warp emulation");
    return in;
  }
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= rest.size(); ++i) {
    if (i < rest.size()) {
      if (rest[i] == '{' || rest[i] == '[') ++depth;
      if (rest[i] == '}' || rest[i] == ']') --depth;
      if (rest[i] != ',' || depth > 0) continue;
    }
    const std::string tok = Trim(rest.substr(start, i - start));
    start = i + 1;
    if (tok.empty() && i == rest.size() && in.ops.empty()) break;
    Operand o;
    if (!ParseOperand(tok, &o)) {
      in.error = absl::StrCat("cannot parse operand '", tok, "' of '", t, "'");
      return in;
    }
    in.ops.push_back(o);
  }
  if (!MatchesSignature(in.ops, known->signature)) {
    in.error = absl::StrCat("operands of '", t, "' do not have the instruction's shape");
    return in;
  }
  in.op = known->op;
  in.collective = known->collective;
  return in;
}

const Instr& Parsed(const char* text) {
  thread_local std::unordered_map<const char*, Instr> cache;  // texts are string literals
  auto it = cache.find(text);
  if (it == cache.end()) it = cache.emplace(text, Parse(text)).first;
  return it->second;
}

// One thread's operand list and checked access to %n.
struct Args {
  const PtxArg* outs;
  size_t nouts;
  const PtxArg* ins;
  size_t nins;
  std::string* err;

  const PtxArg* At(int n) const {
    if (n < 0) return nullptr;
    if (static_cast<size_t>(n) < nouts) return &outs[n];
    if (static_cast<size_t>(n) - nouts < nins) return &ins[n - nouts];
    return nullptr;
  }
  // The value of %n, which must have constraint `type` ('i' accepts 'h' or 'n').
  uint64_t Read(int n, char type) const {
    const PtxArg* a = At(n);
    if (a == nullptr) return Fail(absl::StrCat("%", n, " has no operand"));
    const bool type_ok = type == 'i' ? (a->type == 'h' || a->type == 'n') : a->type == type;
    if (!type_ok) return Fail(absl::StrCat("%", n, " is bound with \"", std::string(1, a->type), "\" where the instruction reads '", std::string(1, type), "'"));
    if (a->dir == PtxArg::Dir::kOut) return Fail(absl::StrCat("%", n, " is a write-only (\"=\") operand the instruction reads"));
    if (a->dir == PtxArg::Dir::kIn) return a->value;
    uint32_t bits;
    std::memcpy(&bits, a->ptr, 4);
    return bits;
  }
  void Write(int n, char type, uint32_t bits) const {
    const PtxArg* a = At(n);
    if (a == nullptr) return (void)Fail(absl::StrCat("%", n, " has no operand"));
    if (a->type != type) return (void)Fail(absl::StrCat("%", n, " is bound with \"", std::string(1, a->type), "\" where the instruction writes '", std::string(1, type), "'"));
    if (a->dir == PtxArg::Dir::kIn) return (void)Fail(absl::StrCat("%", n, " is an input the instruction writes"));
    std::memcpy(a->ptr, &bits, 4);
  }
  uint64_t Fail(const std::string& why) const {
    if (err->empty()) *err = why;
    return 0;
  }
};

Args ArgsOf(const ThreadCtx& t, std::string* err) {
  return {t.op.outs, t.op.nouts, t.op.ins, t.op.nins, err};
}

float AsFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

void LandGroup(WarpEmu::State& s, ThreadCtx& t) {
  const SharedMemoryModel::Accessor who = s.blk->Access(t);
  for (const CpAsyncCopy& c : t.groups.front()) s.blk->smem.CpAsyncLand(who, c.off, c.data, c.bytes);
  t.groups.pop_front();
}

void CpAsync(WarpEmu::State& s, ThreadCtx& t, const Instr& in, const Args& a, std::string* err) {
  const uint32_t dst = static_cast<uint32_t>(a.Read(in.ops[0].regs[0], 'r'));
  const uint64_t src = a.Read(in.ops[1].regs[0], 'l');
  const long long cp = in.ops[2].imm;
  long long src_size = cp;
  if (in.ops.size() > 3) {
    src_size = in.ops[3].kind == 'i' ? in.ops[3].imm : static_cast<int32_t>(a.Read(in.ops[3].regs[0], 'r'));
  }
  if (!err->empty()) return;
  const bool cp_ok = in.op == Op::kCpAsyncCg ? cp == 16 : (cp == 4 || cp == 8 || cp == 16);
  if (!cp_ok) return (void)(*err = absl::StrCat("cp.async copy size ", cp, " is not allowed here"));
  if (src_size < 0 || src_size > cp) return (void)(*err = absl::StrCat("cp.async src-size ", src_size, " outside 0..", cp));
  *err = s.blk->smem.LocateOffset(dst, cp, cp);
  if (!err->empty()) return;
  if (src % cp != 0) return (void)(*err = absl::StrCat("cp.async source ", absl::Hex(src), " is not ", cp, "-byte aligned"));
  CpAsyncCopy c{dst, static_cast<uint32_t>(cp), {}};
  if (src_size > 0) {
    const void* p = reinterpret_cast<const void*>(src);
    *err = s.CheckGlobal(p, src_size, 1);
    if (!err->empty()) return;
    const std::string race = s.RecordGlobal(p, src_size, /*write=*/false);
    if (!race.empty()) s.Error(race);
    std::memcpy(c.data, p, src_size);
  }
  *err = s.blk->smem.CpAsyncIssue(s.blk->Access(t), dst, cp);
  t.uncommitted.push_back(c);
  s.counters.cp_async_bytes += cp;
}

}  // namespace

bool PtxIsCollective(WarpEmu::State& s, const char* text) { return Parsed(text).collective; }

void PtxExecThread(WarpEmu::State& s, ThreadCtx& t, const char* text, const PtxArg* outs, size_t nouts,
                   const PtxArg* ins, size_t nins) {
  const Instr& in = Parsed(text);
  std::string err = in.error;
  const Args a{outs, nouts, ins, nins, &err};
  if (err.empty()) {
    switch (in.op) {
      case Op::kCpAsyncCg:
      case Op::kCpAsyncCa:
        CpAsync(s, t, in, a, &err);
        break;
      case Op::kCommit:
        t.groups.push_back(std::move(t.uncommitted));
        t.uncommitted.clear();
        break;
      case Op::kWaitGroup: {
        const long long n = in.ops[0].kind == 'i' ? in.ops[0].imm : static_cast<long long>(a.Read(in.ops[0].regs[0], 'i'));
        while (err.empty() && static_cast<long long>(t.groups.size()) > n) LandGroup(s, t);
        break;
      }
      case Op::kWaitAll:
        t.groups.push_back(std::move(t.uncommitted));
        t.uncommitted.clear();
        while (!t.groups.empty()) LandGroup(s, t);
        break;
      case Op::kLdgNcV4: {
        const void* p = reinterpret_cast<const void*>(a.Read(in.ops[1].regs[0], 'l'));
        if (!err.empty()) break;
        err = s.CheckGlobal(p, 16, 16);
        uint32_t w[4] = {0, 0, 0, 0};
        if (err.empty()) {
          std::memcpy(w, p, 16);
          const std::string race = s.RecordGlobal(p, 16, /*write=*/false);
          if (!race.empty()) s.Error(race);
        }
        for (int i = 0; i < 4; ++i) a.Write(in.ops[0].regs[i], 'r', w[i]);
        break;
      }
      default:
        err = absl::StrCat("'", text, "' is a warp-collective instruction run as a per-thread one");
    }
  }
  if (!err.empty()) s.Error(absl::StrCat(err, " [", text, "]"));
}

void PtxExecWarp(WarpEmu::State& s, ThreadCtx* const* lanes) {
  const char* text = lanes[0]->op.text;
  const Instr& in = Parsed(text);
  std::string err = in.error;
  const int w = lanes[0]->warp;
  if (in.op == Op::kMmaBf16 || in.op == Op::kMmaNvf4 || in.op == Op::kMmaMxf4) {
    Regs<4> ra;
    Regs<2> rb;
    Acc c;
    std::array<uint32_t, kLanes> sfa{}, sfb{};
    int sel[4] = {0, 0, 0, 0};  // byte-id-a, thread-id-a, byte-id-b, thread-id-b
    for (int l = 0; l < kLanes && err.empty(); ++l) {
      const Args a = ArgsOf(*lanes[l], &err);
      for (int i = 0; i < 4; ++i) ra[l][i] = static_cast<uint32_t>(a.Read(in.ops[1].regs[i], 'r'));
      for (int i = 0; i < 2; ++i) rb[l][i] = static_cast<uint32_t>(a.Read(in.ops[2].regs[i], 'r'));
      for (int i = 0; i < 4; ++i) c[l][i] = AsFloat(static_cast<uint32_t>(a.Read(in.ops[3].regs[i], 'f')));
      if (in.op == Op::kMmaBf16) continue;
      sfa[l] = static_cast<uint32_t>(a.Read(in.ops[4].regs[0], 'r'));
      sfb[l] = static_cast<uint32_t>(a.Read(in.ops[6].regs[0], 'r'));
      const int v[4] = {static_cast<int>(a.Read(in.ops[5].regs[0], 'i')), static_cast<int>(a.Read(in.ops[5].regs[1], 'i')),
                        static_cast<int>(a.Read(in.ops[7].regs[0], 'i')), static_cast<int>(a.Read(in.ops[7].regs[1], 'i'))};
      for (int i = 0; i < 4; ++i) {
        if (l == 0) sel[i] = v[i];
        if (v[i] != sel[i] && err.empty()) err = "scale-factor selectors differ between lanes";
      }
    }
    if (err.empty() && in.op != Op::kMmaBf16) {
      const bool x4 = in.op == Op::kMmaNvf4;
      // PTX ISA, "Block Scaling for mma.sync": byte-id 0 for scale_vec::4X, 0 or 2 for
      // 2X; thread-id-a 0..1, thread-id-b 0..3.
      const bool ok = (x4 ? sel[0] == 0 && sel[2] == 0 : (sel[0] == 0 || sel[0] == 2) && (sel[2] == 0 || sel[2] == 2)) &&
                      sel[1] >= 0 && sel[1] <= 1 && sel[3] >= 0 && sel[3] <= 3;
      if (!ok) err = absl::StrCat("scale-factor selectors {", sel[0], ",", sel[1], "} {", sel[2], ",", sel[3], "} are not allowed");
    }
    if (err.empty()) {
      const Acc d = in.op == Op::kMmaBf16
                        ? MmaM16n8k16Bf16(ra, rb, c)
                        : MmaM16n8k64Fp4(in.op == Op::kMmaNvf4 ? ScaleKind::kMxf4Nvf4Ue4m3x4 : ScaleKind::kMxf4Ue8m0x2,
                                         ra, rb, c, sfa, {sel[0], sel[1]}, sfb, {sel[2], sel[3]});
      for (int l = 0; l < kLanes; ++l) {
        const Args a = ArgsOf(*lanes[l], &err);
        for (int i = 0; i < 4; ++i) a.Write(in.ops[0].regs[i], 'f', Bits(d[l][i]));
      }
    }
  } else if (in.op == Op::kLdsmX4 || in.op == Op::kLdsmX4T) {
    LdmatrixRows rows;
    for (int l = 0; l < kLanes && err.empty(); ++l) {
      const Args a = ArgsOf(*lanes[l], &err);
      const uint32_t addr = static_cast<uint32_t>(a.Read(in.ops[1].regs[0], 'r'));
      if (!err.empty()) break;
      err = s.blk->smem.LocateOffset(addr, 16, 16);  // each row address: 16 bytes, 16-aligned
      SharedMemoryModel::Accessor who = s.blk->Access(*lanes[l]);
      who.tid = SharedMemoryModel::kAnyWarpReader;
      if (err.empty()) err = s.blk->smem.Read(who, addr, 16, rows[l].data());
      if (!err.empty()) err = absl::StrCat("lane ", l, ": ", err);
    }
    if (err.empty()) {
      ++s.counters.ldmatrix;
      for (int mat = 0; mat < 4; ++mat) {  // one wavefront per matrix unless rows share banks
        int seen[8] = {0, 0, 0, 0, 0, 0, 0, 0}, worst = 0;
        for (int r = 0; r < 8; ++r) {
          const uint32_t addr = static_cast<uint32_t>(ArgsOf(*lanes[8 * mat + r], &err).Read(in.ops[1].regs[0], 'r'));
          const int n = ++seen[(addr / 16) % 8];
          worst = n > worst ? n : worst;
        }
        s.counters.ldmatrix_extra_wavefronts += worst - 1;
      }
      Regs<4> out;
      LdmatrixX4Rows(rows, in.op == Op::kLdsmX4T, &out);
      for (int l = 0; l < kLanes; ++l) {
        const Args a = ArgsOf(*lanes[l], &err);
        for (int i = 0; i < 4; ++i) a.Write(in.ops[0].regs[i], 'r', out[l][i]);
      }
    }
  } else if (err.empty()) {
    err = "not a warp-collective instruction";
  }
  if (!err.empty()) s.Error(absl::StrCat("warp ", w, ": ", err, " [", text, "]"));
}

}  // namespace qprof::warp
