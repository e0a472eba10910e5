#pragma once
// Which selections are slots of one row (solver/selections.cpp): the slots of one key hold
// distinct elements, the axiom routing_sat.h gives CaDiCaL.
#include <string>

#include "solver/context.h"

namespace onnx_tv::solver {

// The row's canonical forms, the direction, the tie rule and the order (empty: sorted).
inline std::string selection_row_key(const Selection& s) {
  std::string k = s.largest ? "L" : "S";
  k += s.ties_last ? "l" : "f";
  k += s.order;
  for (const Value& v : s.row) k += "," + std::to_string(v.poly);
  return k;
}

}  // namespace onnx_tv::solver
