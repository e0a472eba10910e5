#pragma once
// Private to the micro-batch files: the colours of values (the micro-batches each depends on),
// one rank's program coloured, and the checks of its bodies (micro_batch_bodies.cpp).
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ir/plan.h"
#include "reduce/micro_batches.h"

namespace onnx_tv::reduce::micro {

// Why a program's micro-batches cannot be cut.
struct NoBodies {
  std::string why;
};

// The micro-batches a value depends on, as bits (empty: none).
using Colour = std::vector<uint64_t>;

inline void add_to(Colour& into, const Colour& c) {
  if (c.size() > into.size()) into.resize(c.size(), 0);
  for (size_t i = 0; i < c.size(); ++i) into[i] |= c[i];
}

inline int64_t popcount(const Colour& c) {
  int64_t n = 0;
  for (uint64_t w : c) n += __builtin_popcountll(w);
  return n;
}

inline int64_t single(const Colour& c) {  // the micro-batch of a one-colour value
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i]) return int64_t(i) * 64 + __builtin_ctzll(c[i]);
  return -1;
}

inline bool disjoint(const Colour& a, const Colour& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] & b[i]) return false;
  return true;
}

inline Colour one_colour(int64_t k) {
  Colour c(size_t(k / 64) + 1, 0);
  c[size_t(k / 64)] = uint64_t(1) << (k % 64);
  return c;
}

// A value bound as piece k of a family of bindings, cut along dimension `dim`.
struct Piece {
  int64_t family = 0, k = 0;
  size_t dim = 0;
  bool operator==(const Piece&) const = default;
};

// One rank's program, coloured: what the checks of its bodies read.
struct Coloured {
  const ir::Graph* g = nullptr;
  std::string label;
  // value -> colour: the bound inputs' while colouring, every coloured value's for bodies_of
  std::unordered_map<std::string, Colour> colour;
  std::vector<Colour> node_colour;
  std::map<std::string, Piece> pieces;
  std::map<std::string, int> bindings;  // value -> how many bindings of this rank name it
};

inline const Colour& colour_of(const Coloured& c, const std::string& v) {
  static const Colour none;
  auto it = c.colour.find(v);
  return it == c.colour.end() ? none : it->second;
}

// The bodies of one rank's program of `n` micro-batches, checked (docs/shape-reduction.md,
// "Fewer micro-batches", points 2 to 4), or why they cannot be cut.
std::variant<ProgramBodies, NoBodies> bodies_of(const Coloured& c, int64_t n);

}  // namespace onnx_tv::reduce::micro
