// Kernel name normalisation, so the same kernel has one name whichever tool recorded it.
//
// Nsight Systems and Kineto (cxxabi) demangle differently:
//   nsys:   void at::native::elementwise_kernel<(int)128, (int)4, void at::native::f<...>>(int, T2)
//   Kineto: void at::native::elementwise_kernel<128, 4, at::native::f<...> >(int, float)
// and spell anonymous namespaces and lambdas differently ("<unnamed>" vs
// "(anonymous namespace)", "[lambda() (instance 3)]" vs "{lambda()#3}"). The normal form:
//   - a mangled name ("_Z...") is demangled first;
//   - the leading "void " and "void " inside template arguments are dropped;
//   - the trailing parameter list (and cv-qualifiers after it) is dropped;
//   - casts of template values "(int)128" -> "128", "(bool)0" -> "false";
//     integer suffixes "2ul" -> "2";
//   - anonymous namespaces -> "(anonymous namespace)", lambdas -> "{lambda()#N}";
//   - whitespace collapsed; no space next to punctuation (< > , * & ( ) [ ] :).
// The result is for grouping and matching, not for display fidelity.
#ifndef QPROF_ANALYSIS_NAMES_KERNEL_NAME_H_
#define QPROF_ANALYSIS_NAMES_KERNEL_NAME_H_

#include <string>
#include <string_view>

namespace qprof::names {

std::string NormaliseKernelName(std::string_view name);

// "__cxa_demangle" of an Itanium-mangled name; the input unchanged when it is not one.
std::string Demangle(std::string_view name);

// Folds step/layer numbers out of an NVTX path: "decode/step 3/layer 12/moe" ->
// "decode/step */layer */moe". A number standing alone after a space, '#', '=' or '_'
// (and ending at '/', ' ' or the end) becomes '*'.
std::string FoldNvtxPath(std::string_view path);

// Folds the instance number torch's profiler gives each module out of a frame's text:
// "nn.Module: Qwen2RMSNorm_31" -> "nn.Module: Qwen2RMSNorm_N" (the 31st instance of the
// class), as step numbers are folded, so the same kernel launched from every layer's
// instance is one kernel and context, not one row per layer (a 61-layer model would show
// 61). The class name keeps its own digits ("Qwen2").
std::string FoldModuleInstances(const std::string& text);

}  // namespace qprof::names

#endif  // QPROF_ANALYSIS_NAMES_KERNEL_NAME_H_
