#pragma once
// Private to src/reduce: the dimension rule of each ops::DimRule family (rule_families.cpp),
// called by infer_node (rules.cpp) on a node its schema has validated, so a rule may rely on
// input count, ranks, axes in range and sizes that fit.
#include <string>
#include <vector>

#include "ops/schema.h"
#include "reduce/infer.h"

namespace onnx_tv::reduce {

struct RuleArgs {
  Inference& inf;
  ProgramDims& prog;
  size_t idx;
  const ir::Node& node;
  const ops::OpSchema& schema;
  std::string here;                  // where(prog, idx)
  std::vector<const DimValue*> in;   // nullptr: omitted
  std::vector<ops::OutputInfo> want; // full-size outputs by validation

  const DimValue& need(size_t k) const;
  // The exact integers of shape input k; NotApplicable when they are not known.
  std::vector<int64_t> ints(size_t k, const char* what) const;
};

// The family's rule: output dims, tying and fixing dims of the inputs as it goes.
std::vector<DimValue> apply_rule(RuleArgs& r);

}  // namespace onnx_tv::reduce
