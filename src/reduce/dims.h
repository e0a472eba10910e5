#pragma once
// Symbolic dimensions: every axis of every tensor of the spec and of the linked plan is a
// product of variables (major first), and operators, bindings and collectives make axes equal.
// Unification keeps the common refinement of both sides, so a hidden size that one program
// reshapes into (heads, head_dim) and another cuts into tensor-parallel pieces ends up as
// (pieces, heads per piece, head_dim) everywhere. Variables are tied by position only, never
// because their sizes happen to be equal (in Llama-3 405B heads and head_dim are both 128).
//
// A variable is either reducible (the reduced instance may shrink it) or fixed (it keeps its
// full size): partition counts, slice boundaries that are not factor boundaries, and anything
// the rules cannot follow are fixed, with the reason kept for the report.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace onnx_tv::reduce {

using Var = int32_t;
using Axis = std::vector<Var>;  // a product of variables, major first; empty means extent 1
using DimShape = std::vector<Axis>;

class DimStore {
 public:
  // A new variable of extent `full` (an empty axis when full is 1); `origin` names where it
  // first appeared, for the report.
  Axis fresh(int64_t full, const std::string& origin, bool fixed = false);
  // A reducible variable that counts pieces, one per rank along a mesh axis, reduced to
  // `target` (not 2): its digits are piece indices, and the reduced instance keeps the ranks
  // whose digit is below its reduced extent (reduced_position accepts those digits in
  // bindings' regions).
  Axis fresh_count(int64_t full, const std::string& origin, int64_t target);
  // The shape of fresh variables for a static shape.
  DimShape fresh_shape(const std::vector<int64_t>& shape, const std::string& origin,
                       bool fixed = false);

  // The unsplit representative variables making up an axis, major first.
  Axis leaves(const Axis& a);
  int64_t full(const Axis& a);
  std::vector<int64_t> full_shape(const DimShape& s);

  // Makes a and b one axis. Where their extents do not line up factor by factor, every
  // variable involved is fixed (kept at full size) with `why`. Both must have the same extent.
  void unify(const Axis& a, const Axis& b, const std::string& why);
  void fix(const Axis& a, const std::string& why);

  // a as (outer, inner) with inner of extent n, splitting a variable when the boundary falls
  // inside it; nullopt when n does not divide along a's factors.
  std::optional<std::pair<Axis, Axis>> split_inner(const Axis& a, int64_t n);

  bool is_fixed(Var v);
  int64_t full_of(Var v);
  const std::string& origin_of(Var v);
  const std::string& why_fixed(Var v);

  // Reduced extents: fixed variables keep their size, counts shrink to their target, the
  // others to min(size, 2) so every piece of a cut dimension keeps two elements (the
  // at-least-2 rule).
  int64_t reduced_extent(Var v);
  int64_t reduced(const Axis& a);
  std::vector<int64_t> reduced_shape(const DimShape& s);
  // The position `full_pos` along axis a (a boundary of a's factor structure) at reduced
  // sizes; nullopt when it is not a boundary (its digits on reducible variables are nonzero).
  // With `piece_index` (a binding's region on a kept rank), digits on count variables are
  // rank coordinates (a region's end one past them) and may be nonzero up to the reduced count.
  std::optional<int64_t> reduced_position(const Axis& a, int64_t full_pos,
                                          bool piece_index = false);

  // Every representative leaf variable, for the report.
  std::vector<Var> all_leaves();

 private:
  struct VarData {
    int64_t full = 1;
    bool fixed = false;
    bool count = false;  // see fresh_count
    int64_t target = 2;  // the reduced extent of a count
    Var parent = -1;         // union-find
    std::vector<Var> split;  // set: this variable is the product of these
    std::string origin, why;
  };
  Var find(Var v);
  Var make(int64_t full, const std::string& origin, bool fixed, const std::string& why);
  void set_split(Var v, std::vector<Var> parts);
  void join(Var a, Var b);
  void fix_var(Var v, const std::string& why);
  std::vector<VarData> vars_;
};

}  // namespace onnx_tv::reduce
