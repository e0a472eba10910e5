#pragma once
// Witnesses: input values on which two canonical forms give different numbers. Random points
// may refute (a witness is a witness), never prove.
#include <optional>
#include <string>
#include <vector>

#include "check/result.h"
#include "solver/context.h"

namespace onnx_tv::prove {

// The names of the symbols `v` depends on, sorted.
std::vector<std::string> symbols_of(const solver::Context& ctx, solver::Value v);

struct Witness {
  std::vector<WitnessEntry> values;  // the symbols either side depends on
  std::string a_number, b_number;    // both sides evaluated there
};

// Searches small integer points (seeded) for one where a and b differ clearly. nullopt when
// none of the tries separates them. With `shrink`, as many inputs as possible are then set to
// 0 while the two still differ, so the witness is readable.
std::optional<Witness> find_witness(const solver::Context& ctx, solver::Value a, solver::Value b,
                                    uint64_t seed, int tries = 64, bool shrink = true);

}  // namespace onnx_tv::prove
