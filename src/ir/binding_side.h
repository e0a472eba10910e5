#pragma once
// Which side of the plan a binding is on (plan-format section 3). An input binding defines a
// rank graph input or initializer from spec values (an assumption); an output binding is an
// obligation on a rank graph output. A rank value can be both: a constant (an initializer) the
// rank passes out, such as a frozen table or a step count. Bound to a spec output it is an
// obligation like any output, so a wrong constant is refuted, not taken for an assumption
// about a spec input. A rank graph input passed out as an output stays an input binding when
// its spec value is a spec input.
#include "ir/plan.h"
#include "ir/graph.h"

namespace onnx_tv::ir {

// What the two names of a binding are in their programs.
struct BindingNames {
  bool rank_input = false;        // a rank graph input (with or without an initializer)
  bool rank_initializer = false;  // a rank initializer that is not a graph input
  bool rank_output = false;       // a rank graph output
  bool spec_in = false;           // a spec graph input or initializer
  bool spec_out = false;          // a spec graph output
};

bool is_input_side(const BindingNames& n);

// The same, looked up in the programs (by scanning their inputs and outputs).
bool is_input_binding(const Binding& b, const Graph& rank, const Graph& spec);

}  // namespace onnx_tv::ir
