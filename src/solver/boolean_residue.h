#pragma once
// What the canonical form leaves to SAT (docs/design.md, "The boolean residue"). The form keeps
// the algebra of one integer input exact ([n = v][n = w] = 0), but not the relations between
// the slots of one selection (no element in two slots of one row's top k), nor what a routing
// implies inside a function of routed values (an expert applied to the buffer slot a token was
// routed to is the expert applied to that token). Two forms that agree only through those
// differ; boolean_residue.cpp splits such terms by routing and then asks CaDiCaL whether the
// coefficients left over indicators vanish on every routing the axioms allow (routing_sat.h).
// UNSAT proves the pair equal. A routing it finds proves nothing either way (the rest need not
// be independent as functions): the pair stays undecided, and the routing is named.
#include <cstdint>
#include <string>
#include <unordered_set>

#include "solver/context.h"

namespace onnx_tv::solver {

class BooleanResidue {
 public:
  // max_terms bounds the expansion of definitions in the difference; max_calls the solve()
  // calls one coefficient may take (each call rules out one routing of its inputs).
  explicit BooleanResidue(Context& ctx, size_t max_terms = 1 << 16,
                          int64_t max_calls = limits::kRoutingCalls);
  // Whether a == b on every routing the axioms allow. False decides nothing: `why` then says
  // what stood in the way (no indicator in the difference, a coefficient without one, the
  // routing under which a coefficient is nonzero, or the budget).
  bool equal(Value a, Value b, std::string* why = nullptr);
  // This object's work; the Context adds it to its own totals (Context::residue_stats).
  const ResidueStats& stats() const { return stats_; }

 private:
  Context& ctx_;
  size_t max_terms_;
  int64_t max_calls_;
  ResidueStats stats_;
  std::unordered_set<PolyId> vanishing_;  // coefficients proven, by canonical form
};

}  // namespace onnx_tv::solver
