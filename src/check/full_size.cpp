#include "check/full_size.h"

#include <charconv>
#include <map>

namespace onnx_tv::check {

namespace {

// value -> its axes in order; a value of rank 0 has none (its row has axis -1).
using Axes = std::map<std::string, std::vector<const ReducedDim*>>;

void add_axes(Axes& axes, const std::vector<ReducedDim>& dims) {
  for (const ReducedDim& d : dims) {
    auto& v = axes[d.value];
    if (d.axis == int64_t(v.size())) v.push_back(&d);  // a value listed twice is taken once
  }
}

// The full-size index of a reduced one, or nullopt when some axis does not say.
std::optional<std::vector<int64_t>> full_index(const std::vector<const ReducedDim*>& axes,
                                               const std::vector<int64_t>& index) {
  if (axes.size() != index.size()) return std::nullopt;
  std::vector<int64_t> out;
  for (size_t a = 0; a < axes.size(); ++a) {
    const std::optional<int64_t> p = reduce::full_position(*axes[a], index[a]);
    if (!p) return std::nullopt;
    out.push_back(*p);
  }
  return out;
}

// "x[0,3]" as ("x", {0, 3}), the form check::symbols names spec input elements in; nullopt for
// any other symbol (a free addend names a rank value and a region of its own).
std::optional<std::pair<std::string, std::vector<int64_t>>> parse_symbol(const std::string& s) {
  const size_t open = s.rfind('[');
  if (open == std::string::npos || s.empty() || s.back() != ']') return std::nullopt;
  std::vector<int64_t> index;
  const char* p = s.data() + open + 1;
  const char* end = s.data() + s.size() - 1;
  while (p < end) {
    int64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || next == p) return std::nullopt;
    index.push_back(v);
    p = next;
    if (p < end && *p++ != ',') return std::nullopt;
  }
  return std::make_pair(s.substr(0, open), index);
}

std::string index_text(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? "," : "") + std::to_string(index[i]);
  return s + "]";
}

}  // namespace

void name_at_full_size(Mismatch& m, const Reduction& red) {
  if (!red.applied) return;
  Axes axes;
  add_axes(axes, red.dims);
  add_axes(axes, red.other_dims);
  if (auto it = axes.find(m.spec_output); it != axes.end())
    m.full_element = full_index(it->second, m.element);
  for (WitnessEntry& w : m.witness) {
    const auto parsed = parse_symbol(w.symbol);
    if (!parsed) continue;
    auto it = axes.find(parsed->first);
    if (it == axes.end()) continue;  // not a spec value: a free addend of a partial set
    if (auto index = full_index(it->second, parsed->second))
      w.full_symbol = parsed->first + index_text(*index);
  }
}

}  // namespace onnx_tv::check
