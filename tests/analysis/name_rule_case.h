// One expectation of the name rules, as the name-rule tests write them: a kernel name, and
// the class, role and format the rules must give it (after the name's normal form).
#ifndef QPROF_TESTS_ANALYSIS_NAME_RULE_CASE_H_
#define QPROF_TESTS_ANALYSIS_NAME_RULE_CASE_H_

#include "analysis/classify/name_rules.h"
#include "analysis/names/kernel_name.h"
#include "gtest/gtest.h"

namespace qprof::classify {

struct Case {
  const char* name;
  const char* pipe_class;  // "" = no class from the name
  const char* role;
  const char* format;
};

inline void Check(const Case& c) {
  NameRuleMatch m = MatchNameRules(names::NormaliseKernelName(c.name));
  EXPECT_EQ(m.pipe_class, c.pipe_class) << c.name << " (class rule " << m.class_rule << ")";
  EXPECT_EQ(m.role, c.role) << c.name << " (role rule " << m.role_rule << ")";
  EXPECT_EQ(m.format, c.format) << c.name;
}

}  // namespace qprof::classify

#endif  // QPROF_TESTS_ANALYSIS_NAME_RULE_CASE_H_
