// Constants along reducible dimensions (RoPE tables, masks, inverse frequencies). A uniform
// constant is the same at every size. Any other is made a symbolic table: proving the reduced
// programs equal for every table proves them equal for the real one, provided each rank's table
// really is the region of the spec's table it is bound to, which is checked here by content at
// full size. So a rank that uses the wrong rows (a RoPE offset bug) is bound to other rows, or to
// nothing, and the bug stays visible.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "ir/binding_side.h"
#include "reduce/reduce_detail.h"

namespace onnx_tv::reduce {

namespace {

bool uniform(const ir::ConstTensor& c) {
  if (!c.reals.empty())
    return std::all_of(c.reals.begin(), c.reals.end(), [&](double x) {
      return x == c.reals[0] || (x != x && c.reals[0] != c.reals[0]);
    });
  return std::all_of(c.ints.begin(), c.ints.end(), [&](int64_t x) { return x == c.ints[0]; });
}

bool same_content(const ir::ConstTensor& a, const ir::ConstTensor& b) {
  return a.shape == b.shape && a.reals == b.reals && a.ints == b.ints &&
         ir::is_float(a.dtype) == ir::is_float(b.dtype);
}

// Whether `part` equals the region of `whole` at `start` (same rank, fits).
bool equals_region(const ir::ConstTensor& whole, const ir::ConstTensor& part,
                   const std::vector<int64_t>& start) {
  const auto ws = ir::strides(whole.shape);
  const int64_t n = ir::element_count(part.shape);
  std::vector<int64_t> idx(part.shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (start[d] + idx[d]) * ws[d];
    if (!part.reals.empty() ? part.reals[size_t(k)] != whole.reals[size_t(off)]
                            : part.ints[size_t(k)] != whole.ints[size_t(off)])
      return false;
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < part.shape[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}

// Start offsets of `part` inside `whole` in whole-piece steps, at most `limit` of them.
std::vector<std::vector<int64_t>> candidate_starts(const ir::Shape& whole, const ir::Shape& part,
                                                   size_t limit) {
  std::vector<std::vector<int64_t>> out = {{}};
  for (size_t d = 0; d < whole.size(); ++d) {
    if (part[d] == 0 || whole[d] % part[d] != 0) return {};
    std::vector<std::vector<int64_t>> next;
    for (const auto& s : out)
      for (int64_t o = 0; o < whole[d]; o += part[d]) {
        next.push_back(s);
        next.back().push_back(o);
        if (next.size() > limit) return {};
      }
    out = std::move(next);
  }
  return out;
}

bool shrinks(Inference& inf, Var v) {
  return !inf.dims.is_fixed(v) && inf.dims.reduced_extent(v) < inf.dims.full_of(v);
}

// Whether the constant is smaller in the instance: a table only along variables that keep
// their extent is the same constant there, and stays one.
bool has_reducible(Inference& inf, const DimShape& s) {
  for (const Axis& a : s)
    for (Var v : inf.dims.leaves(a))
      if (shrinks(inf, v)) return true;
  return false;
}

// A symbolic table gives every position its own symbol, so it forgets that two slices of the
// real table are equal. A plan may rely on that (a periodic table read at another period's
// offset, a rank reading another piece of a table whose pieces are equal, is right); the
// instance would then refute it. Where two slices along a variable are equal, that variable
// and every reducible variable inner to it in its axis keep their full size, so the instance
// holds the repetition as the real table does.
bool fix_repeated_slices(Inference& inf, const ir::ConstTensor& c, const DimShape& dims,
                         const std::string& label) {
  bool fixed = false;
  const bool reals = !c.reals.empty();
  const size_t n = reals ? c.reals.size() : c.ints.size();
  const auto strides = ir::strides(c.shape);
  for (size_t a = 0; a < dims.size() && a < c.shape.size(); ++a) {
    const Axis leaves = inf.dims.leaves(dims[a]);
    std::vector<int64_t> steps(leaves.size());
    int64_t inner = 1;
    for (size_t q = leaves.size(); q-- > 0;) {
      steps[q] = inner;
      inner *= inf.dims.full_of(leaves[q]);
    }
    for (size_t q = 0; q < leaves.size(); ++q) {
      const int64_t ext = inf.dims.full_of(leaves[q]), step = steps[q];
      bool reducible_inside = false;
      for (size_t r = q; r < leaves.size(); ++r) reducible_inside |= shrinks(inf, leaves[r]);
      if (ext < 2 || !reducible_inside) continue;
      // Slice i: the elements whose digit of this variable is i, in flat order; hashed, then
      // compared where the hashes agree.
      auto digit = [&](size_t k) { return (int64_t(k) / strides[a] % c.shape[a]) / step % ext; };
      std::vector<uint64_t> hash(size_t(ext), 1469598103934665603ull);
      for (size_t k = 0; k < n; ++k) {
        uint64_t& h = hash[size_t(digit(k))];
        const uint64_t bits = reals ? std::hash<double>{}(c.reals[k]) : uint64_t(c.ints[k]);
        h = (h ^ bits) * 1099511628211ull;
      }
      auto slice = [&](int64_t i) {
        std::vector<size_t> out;
        for (size_t k = 0; k < n; ++k)
          if (digit(k) == i) out.push_back(k);
        return out;
      };
      bool repeated = false;
      for (int64_t i = 1; i < ext && !repeated; ++i)
        for (int64_t j = 0; j < i && !repeated; ++j) {
          if (hash[size_t(i)] != hash[size_t(j)]) continue;
          const auto si = slice(i), sj = slice(j);
          repeated = true;
          for (size_t k = 0; k < si.size() && repeated; ++k)
            repeated = reals ? c.reals[si[k]] == c.reals[sj[k]] : c.ints[si[k]] == c.ints[sj[k]];
        }
      if (!repeated) continue;
      inf.dims.fix(Axis(leaves.begin() + q, leaves.end()),
                   label + " holds two equal slices along it or around it");
      fixed = true;
      break;
    }
  }
  return fixed;
}

struct Found {
  int64_t rank;
  std::string name;
  const ir::ConstTensor* tensor;
  const DimShape* dims;
};

void collect(const ir::Graph& g, int64_t rank, ProgramDims& p, const std::set<std::string>& bound,
             std::vector<Found>& out) {
  for (const auto& [name, c] : g.initializers) {
    if (bound.count(name)) continue;
    const DimValue& v = p.values.at(name);
    if (!v.concrete) out.push_back({rank, name, &c, &v.dims});
  }
  for (const auto& n : g.nodes) {
    if (n.op_type != "Constant" || n.outputs.empty()) continue;
    const ir::Attribute* a = n.attribute("value");
    if (!a || !a->tensor) continue;
    auto it = p.values.find(n.outputs[0]);
    if (it == p.values.end() || it->second.concrete) continue;
    out.push_back({rank, n.outputs[0], a->tensor.get(), &it->second.dims});
  }
}

}  // namespace

std::vector<ConstSite> classify_constants(Inference& inf, const ir::Graph& spec,
                                          const ir::Plan& plan,
                                          const std::vector<BoundRegion>& bound) {
  std::set<std::string> spec_bound;
  std::vector<std::set<std::string>> rank_bound(size_t(plan.world_size));
  for (const auto& b : bound) {
    if (!ir::is_input_binding(*b.binding, plan.program_of(b.binding->rank), spec)) continue;
    spec_bound.insert(b.binding->spec);
    rank_bound[size_t(b.binding->rank)].insert(b.binding->value);
  }
  std::vector<Found> found;
  collect(spec, -1, inf.spec, spec_bound, found);
  for (int64_t r = 0; r < plan.world_size; ++r)
    collect(plan.program_of(r), r, inf.ranks[size_t(r)], rank_bound[size_t(r)], found);

  // Matching a rank table fixes or splits dimensions, which can change what else is reducible:
  // repeat until nothing changes.
  std::vector<ConstSite> sites;
  for (int round = 0; round < 8; ++round) {
    sites.clear();
    bool changed = false;
    std::vector<const Found*> spec_tables;  // representatives, one per content
    for (const Found& f : found) {
      ConstSite s;
      s.rank = f.rank;
      s.name = f.name;
      s.tensor = f.tensor;
      if (!has_reducible(inf, *f.dims)) {
        sites.push_back(s);
        continue;
      }
      // A mask (0 and -inf) as a free table would let masked positions take any value: the
      // softmax then mixes every position and the instance loses what makes a bug show
      // numerically. Masks keep their dimensions full size; computed masks (Trilu) shrink.
      if (std::any_of(f.tensor->reals.begin(), f.tensor->reals.end(),
                      [](double x) { return std::isinf(x); })) {
        for (const Axis& a : *f.dims)
          inf.dims.fix(a, "constant '" + f.name + "' holds infinities (a mask)");
        sites.push_back(s);
        continue;
      }
      if (uniform(*f.tensor)) {
        s.action = ConstSite::Action::Refill;
        sites.push_back(s);
        continue;
      }
      // An integer table (positions, an index table) is read by its values: as a symbolic
      // table it would range over what its uses allow (a Gather's [0, n)), not over what it
      // holds (-1 for the last row is a valid index). It keeps its dimensions whole.
      if (!ir::is_float(f.tensor->dtype)) {
        for (const Axis& a : *f.dims)
          inf.dims.fix(a, "integer constant '" + f.name + "'" +
                              (f.rank >= 0 ? " of rank " + std::to_string(f.rank) : "") +
                              " varies along it (its values are read as they are)");
        sites.push_back(s);
        changed = true;
        continue;
      }
      if (fix_repeated_slices(inf, *f.tensor, *f.dims,
                              "constant '" + f.name + "'" +
                                  (f.rank >= 0 ? " of rank " + std::to_string(f.rank) : "")))
        changed = true;
      if (!has_reducible(inf, *f.dims)) {
        sites.push_back(s);
        continue;
      }
      if (f.rank >= 0) {
        sites.push_back(s);  // matched below, once every spec table is known
        continue;
      }
      s.action = ConstSite::Action::SpecTable;
      s.table = f.name;
      for (const Found* t : spec_tables)
        if (same_content(*t->tensor, *f.tensor)) {
          s.table = t->name;
          // The same content is one symbolic table: its dimensions are the same dimensions.
          for (size_t d = 0; d < f.dims->size(); ++d)
            inf.dims.unify((*t->dims)[d], (*f.dims)[d], "spec constants '" + t->name + "' and '" +
                                                            f.name + "' hold the same values");
        }
      if (s.table == f.name) spec_tables.push_back(&f);
      sites.push_back(s);
    }
    for (size_t k = 0; k < found.size(); ++k) {
      const Found& f = found[k];
      ConstSite& s = sites[k];
      if (f.rank < 0 || s.action != ConstSite::Action::Keep || !has_reducible(inf, *f.dims))
        continue;
      const std::string label = "constant '" + f.name + "' of rank " + std::to_string(f.rank);
      // Prefer the spec table of the same name, then any other in file order.
      std::vector<const Found*> order(spec_tables.begin(), spec_tables.end());
      std::stable_partition(order.begin(), order.end(),
                            [&](const Found* t) { return t->name == f.name; });
      // Every region it equals, up to two: a table that equals several (a periodic table held
      // by two sequence shards) could stand for any of them, and binding it to one that is not
      // where its rank's data lies would make the instance differ where the plan is right.
      std::vector<std::pair<const Found*, std::vector<int64_t>>> matches;
      for (const Found* t : order) {
        if (t->tensor->shape.size() != f.tensor->shape.size() ||
            ir::is_float(t->tensor->dtype) != ir::is_float(f.tensor->dtype))
          continue;
        for (const auto& start : candidate_starts(t->tensor->shape, f.tensor->shape, 4096)) {
          if (matches.size() >= 2) break;
          if (equals_region(*t->tensor, *f.tensor, start)) matches.emplace_back(t, start);
        }
      }
      if (matches.size() == 1) {
        const auto& [t, start] = matches[0];
        s.action = ConstSite::Action::RankTable;
        s.table = t->name;
        s.region.start = start;
        s.region.end = start;
        for (size_t d = 0; d < start.size(); ++d) s.region.end[d] += f.tensor->shape[d];
        bind_region(inf, *t->dims, *f.dims, s.region,
                    label + " equals a region of spec constant '" + t->name + "'");
      } else {
        const std::string why = matches.empty()
                                    ? " varies along it and equals no region of a spec constant"
                                    : " varies along it and equals several regions of spec constants";
        for (const Axis& a : *f.dims) inf.dims.fix(a, label + why);
        changed = true;
      }
    }
    // A spec table no rank table is bound to is something the plan computes its own way (a
    // Range where the spec has folded constants): a free table would be a false difference.
    std::set<std::string> used;
    for (const ConstSite& s : sites)
      if (s.action == ConstSite::Action::RankTable) used.insert(s.table);
    for (const Found* t : spec_tables) {
      if (used.count(t->name)) continue;
      for (const Axis& a : *t->dims)
        inf.dims.fix(a, "spec constant '" + t->name + "' varies along it and no rank holds it");
      changed = true;
    }
    if (!changed) break;
  }
  return sites;
}

}  // namespace onnx_tv::reduce
