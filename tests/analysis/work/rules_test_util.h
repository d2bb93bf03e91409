// What the op-rule tests share: an op call parsed the way Kineto records it, and the work
// its rule derives, expected to exist.
#ifndef QPROF_TESTS_ANALYSIS_WORK_RULES_TEST_UTIL_H_
#define QPROF_TESTS_ANALYSIS_WORK_RULES_TEST_UTIL_H_

#include <string>

#include "analysis/work/op_work.h"
#include "gtest/gtest.h"

namespace qprof::work {

// Kineto's "Input Dims", "Input type" and "Concrete Inputs" of one op call.
inline OpCall Call(const std::string& op, const std::string& dims, const std::string& types,
                   const std::string& concrete = "") {
  auto c = ParseKinetoOpCall(op, dims, types, concrete);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : OpCall{};
}

// The call's work (its rule must give some), with the step's sums when one is passed.
inline OpWork Work(const OpCall& c, const OpContext& context = {}) {
  OpWorkResult r = DeriveOpWork(c, context);
  EXPECT_EQ(r.outcome, Outcome::kWork) << c.op << ": " << r.error;
  return r.work;
}

inline OpWork Work(const OpCall& c, const IterationAnnotation& step) {
  return Work(c, OpContext{&step});
}

}  // namespace qprof::work

#endif  // QPROF_TESTS_ANALYSIS_WORK_RULES_TEST_UTIL_H_
