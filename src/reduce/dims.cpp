#include "reduce/dims.h"

#include <algorithm>

#include "common/errors.h"

namespace onnx_tv::reduce {

Var DimStore::make(int64_t full, const std::string& origin, bool fixed, const std::string& why) {
  VarData d;
  d.full = full;
  d.fixed = fixed;
  d.origin = origin;
  d.why = why;
  vars_.push_back(std::move(d));
  return Var(vars_.size() - 1);
}

Axis DimStore::fresh(int64_t full, const std::string& origin, bool fixed) {
  ONNX_TV_ASSERT(full >= 0, "negative extent for " + origin);
  if (full == 1) return {};
  return {make(full, origin, fixed, fixed ? origin : "")};
}

Axis DimStore::fresh_count(int64_t full, const std::string& origin, int64_t target) {
  Axis a = fresh(full, origin);
  for (Var v : a) {
    vars_[v].count = true;
    vars_[v].target = target;
  }
  return a;
}

int64_t DimStore::reduced_extent(Var v) {
  const VarData& d = vars_[find(v)];
  return d.fixed ? d.full : std::min<int64_t>(d.full, d.count ? d.target : 2);
}

DimShape DimStore::fresh_shape(const std::vector<int64_t>& shape, const std::string& origin,
                               bool fixed) {
  DimShape s;
  for (size_t i = 0; i < shape.size(); ++i)
    s.push_back(fresh(shape[i], origin + " axis " + std::to_string(i), fixed));
  return s;
}

Var DimStore::find(Var v) {
  while (vars_[v].parent >= 0) {
    Var p = vars_[v].parent;
    if (vars_[p].parent >= 0) vars_[v].parent = vars_[p].parent;
    v = p;
  }
  return v;
}

void DimStore::set_split(Var v, std::vector<Var> parts) {
  if (vars_[v].fixed)
    for (Var p : parts) fix_var(p, vars_[v].why);
  vars_[v].split = std::move(parts);
}

void DimStore::fix_var(Var v, const std::string& why) {
  v = find(v);
  if (!vars_[v].split.empty()) {
    for (Var p : std::vector<Var>(vars_[v].split)) fix_var(p, why);
    return;
  }
  if (vars_[v].fixed) return;
  vars_[v].fixed = true;
  vars_[v].why = why;
}

void DimStore::join(Var a, Var b) {
  a = find(a);
  b = find(b);
  if (a == b) return;
  ONNX_TV_ASSERT(vars_[a].full == vars_[b].full && vars_[a].split.empty() && vars_[b].split.empty(),
                 "joining unequal dimensions " + vars_[a].origin + " and " + vars_[b].origin);
  if (vars_[b].fixed && !vars_[a].fixed) std::swap(a, b);  // keep the fixed one's reason
  if (vars_[a].origin.empty()) vars_[a].origin = vars_[b].origin;
  if (vars_[b].count && !vars_[a].count) vars_[a].target = vars_[b].target;
  vars_[a].count = vars_[a].count || vars_[b].count;
  vars_[b].parent = a;
}

Axis DimStore::leaves(const Axis& a) {
  Axis out;
  for (Var v : a) {
    Var r = find(v);
    if (vars_[r].split.empty()) {
      out.push_back(r);
    } else {
      Axis sub = leaves(vars_[r].split);
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  return out;
}

int64_t DimStore::full(const Axis& a) {
  int64_t n = 1;
  for (Var v : a) n *= vars_[find(v)].full;
  return n;
}

std::vector<int64_t> DimStore::full_shape(const DimShape& s) {
  std::vector<int64_t> out;
  for (const auto& a : s) out.push_back(full(a));
  return out;
}

void DimStore::fix(const Axis& a, const std::string& why) {
  for (Var v : leaves(a)) fix_var(v, why);
}

void DimStore::unify(const Axis& a, const Axis& b, const std::string& why) {
  ONNX_TV_ASSERT(full(a) == full(b), "unifying axes of extents " + std::to_string(full(a)) +
                                         " and " + std::to_string(full(b)) + ": " + why);
  Axis la = leaves(a), lb = leaves(b);
  size_t i = 0, j = 0;
  while (i < la.size() && j < lb.size()) {
    Var x = find(la[i]), y = find(lb[j]);
    // A factor split earlier in this walk (it occurs on both sides, as when a flat buffer is
    // viewed back as the tensor it came from) stands for its parts from here on.
    if (!vars_[x].split.empty() || !vars_[y].split.empty()) {
      Axis& side = vars_[x].split.empty() ? lb : la;
      const size_t at = vars_[x].split.empty() ? j : i;
      const Axis parts = leaves({side[at]});
      side.erase(side.begin() + long(at));
      side.insert(side.begin() + long(at), parts.begin(), parts.end());
      continue;
    }
    if (x == y) {
      ++i, ++j;
      continue;
    }
    int64_t fx = vars_[x].full, fy = vars_[y].full;
    if (fx != fy && (fx == 0 || fy == 0)) {
      // An empty tensor (Reshape with allowzero): no factor of one matches the other's; keep
      // them whole, as below. Nothing is lost, as they hold no elements.
      for (size_t k = i; k < la.size(); ++k) fix_var(la[k], why);
      for (size_t k = j; k < lb.size(); ++k) fix_var(lb[k], why);
      return;
    }
    if (fx == fy) {
      join(x, y);
      ++i, ++j;
    } else if (fx > fy && fx % fy == 0) {  // x = (part matching y, rest)
      Var p = make(fy, vars_[x].origin, false, ""), q = make(fx / fy, vars_[x].origin, false, "");
      set_split(x, {p, q});
      join(p, y);
      la[i] = q;
      ++j;
    } else if (fy > fx && fy % fx == 0) {
      Var p = make(fx, vars_[y].origin, false, ""), q = make(fy / fx, vars_[y].origin, false, "");
      set_split(y, {p, q});
      join(p, x);
      lb[j] = q;
      ++i;
    } else {
      // No common refinement from here on (e.g. [2, 3] against [3, 2]): keep both at full size.
      for (size_t k = i; k < la.size(); ++k) fix_var(la[k], why);
      for (size_t k = j; k < lb.size(); ++k) fix_var(lb[k], why);
      return;
    }
  }
}

std::optional<std::pair<Axis, Axis>> DimStore::split_inner(const Axis& a, int64_t n) {
  Axis l = leaves(a);
  int64_t p = 1;
  size_t k = l.size();
  while (k > 0 && p < n) {
    Var v = find(l[k - 1]);
    int64_t f = vars_[v].full;
    if (p * f <= n) {
      p *= f;
      --k;
      continue;
    }
    if (n % p != 0 || f % (n / p) != 0) return std::nullopt;
    const int64_t in = n / p;
    Var outer = make(f / in, vars_[v].origin, false, ""), inner = make(in, vars_[v].origin, false, "");
    set_split(v, {outer, inner});
    l[k - 1] = outer;
    l.insert(l.begin() + long(k), inner);
    p = n;
  }
  if (p != n) return std::nullopt;
  return std::make_pair(Axis(l.begin(), l.begin() + long(k)), Axis(l.begin() + long(k), l.end()));
}

bool DimStore::is_fixed(Var v) { return vars_[find(v)].fixed; }
int64_t DimStore::full_of(Var v) { return vars_[find(v)].full; }
const std::string& DimStore::origin_of(Var v) { return vars_[find(v)].origin; }
const std::string& DimStore::why_fixed(Var v) { return vars_[find(v)].why; }

int64_t DimStore::reduced(const Axis& a) {
  int64_t n = 1;
  for (Var v : leaves(a)) n *= reduced_extent(v);
  return n;
}

std::vector<int64_t> DimStore::reduced_shape(const DimShape& s) {
  std::vector<int64_t> out;
  for (const auto& a : s) out.push_back(reduced(a));
  return out;
}

std::optional<int64_t> DimStore::reduced_position(const Axis& a, int64_t full_pos,
                                                  bool piece_index) {
  const int64_t extent = full(a);
  if (full_pos == extent) return reduced(a);
  if (full_pos < 0 || full_pos > extent) return std::nullopt;
  Axis l = leaves(a);
  int64_t stride = extent, rstride = reduced(a), out = 0, rest = full_pos;
  for (Var v : l) {
    const VarData& d = vars_[v];
    stride /= d.full;
    rstride /= reduced_extent(v);
    const int64_t digit = rest / stride;
    rest %= stride;
    if (digit != 0 && !d.fixed && !(piece_index && d.count && digit <= reduced_extent(v)))
      return std::nullopt;
    out += digit * rstride;
  }
  return out;
}

std::vector<Var> DimStore::all_leaves() {
  std::vector<Var> out;
  for (Var v = 0; v < Var(vars_.size()); ++v)
    if (find(v) == v && vars_[v].split.empty()) out.push_back(v);
  return out;
}

}  // namespace onnx_tv::reduce
