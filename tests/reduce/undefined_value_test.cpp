// A value undefined over the reals at every point (a NaN constant, 0 * inf) is the user's error
// naming the node, also when reduction meets it first: with every rank kept, inference computes
// the full-size program's own values, so it is no reason to give up on reducing.
#include "reduce_test_util.h"

#include <cmath>
#include <functional>
#include <limits>

#include "solver/context.h"

namespace onnx_tv::reduce::test {
namespace {

ir::Graph spec_program() {
  GraphBuilder b("spec.onnx");
  b.input("x", {8});
  b.op("Mul", {"x", "x"}, "y");
  b.output("y", {8});
  return b.graph();
}

ir::Plan plan_adding(const std::function<std::string(GraphBuilder&)>& bad) {
  GraphBuilder b("rank0.onnx");
  b.input("x", {8});
  b.op("Mul", {"x", "x"}, "sq");
  b.op("Add", {"sq", bad(b)}, "y");
  b.output("y", {8});
  PlanBuilder p;
  const int64_t r = p.rank(p.program(b.graph()));
  p.bind(r, "x", "x");
  p.bind(r, "y", "y");
  return p.plan();
}

void expect_math_error(const ir::Plan& plan, const std::string& words) {
  try {
    Outcome o = reduce_of(spec_program(), plan);
    ADD_FAILURE() << "no error; " << (o.reduced ? "reduced" : "not reduced: " + o.why);
  } catch (const MathError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank0.onnx"), std::string::npos) << e.what();
  }
}

TEST(UndefinedValue, ZeroTimesInfinityNamesTheNode) {
  expect_math_error(plan_adding([](GraphBuilder& b) {
                      return b.op("Mul", {b.constant("zero", float_tensor({}, {0})),
                                          b.constant("inf", float_tensor({}, {std::numeric_limits<double>::infinity()}))},
                                  "u");
                    }),
                    "Mul node");
}

TEST(UndefinedValue, NanInitializerNamesIt) {
  expect_math_error(plan_adding([](GraphBuilder& b) {
                      return b.initializer("nan", float_tensor({}, {std::nan("")}));
                    }),
                    "initializer 'nan'");
}

}  // namespace
}  // namespace onnx_tv::reduce::test
