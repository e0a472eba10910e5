// Sets of variables a value carries (positions, counts: reduce/infer.h) are kept as the
// representative leaves of the dimensions they name, so a value that passed through a
// collective of n members names one dimension once, not n times.
#include <gtest/gtest.h>

#include "reduce/infer.h"

namespace onnx_tv::reduce {
namespace {

TEST(AddVars, VariablesOfOneDimensionAreOneEntry) {
  DimStore dims;
  Axis to;
  std::vector<Axis> members;
  for (int r = 0; r < 64; ++r) members.push_back(dims.fresh(8, "rank's Range"));
  for (int r = 1; r < 64; ++r) dims.unify(members[0], members[size_t(r)], "a collective's members");
  for (const Axis& m : members) add_vars(dims, to, m);
  EXPECT_EQ(to.size(), 1u);
  // Fixing the set fixes every member's variable.
  dims.fix(to, "read against a literal");
  for (const Axis& m : members) EXPECT_TRUE(dims.is_fixed(m[0]));
}

TEST(AddVars, DistinctDimensionsStayApartAndSplitsGiveTheirParts) {
  DimStore dims;
  const Axis a = dims.fresh(6, "a"), b = dims.fresh(4, "b");
  Axis to;
  add_vars(dims, to, a);
  add_vars(dims, to, b);
  add_vars(dims, to, a);
  EXPECT_EQ(to.size(), 2u);
  // a split later into (2, 3): the set names both parts once merged again
  const auto parts = dims.split_inner(a, 3);
  ASSERT_TRUE(parts);
  add_vars(dims, to, {});
  add_vars(dims, to, parts->second);
  EXPECT_EQ(to.size(), 3u);
  dims.fix(to, "read");
  EXPECT_TRUE(dims.is_fixed(dims.leaves(parts->first)[0]));
  EXPECT_TRUE(dims.is_fixed(dims.leaves(b)[0]));
}

}  // namespace
}  // namespace onnx_tv::reduce
