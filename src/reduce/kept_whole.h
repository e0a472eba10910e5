#pragma once
// What a check keeps at full size, and why: the state its choosing loop (check.cpp) carries from
// one try to the next. A try that cannot stand adds one reason here and the loop chooses again.
// Every field only grows, each reason names something the plan has a finite number of (its mesh
// axes, its micro-batches, its sum sites, shape reduction itself), and a try that adds nothing
// new is a bug: so the loop ends.
#include <map>
#include <optional>
#include <string>

namespace onnx_tv::reduce {

struct KeptWhole {
  std::map<std::string, std::string> mesh_axes;  // mesh axis -> why all its ranks are kept
  std::optional<std::string> every_rank;         // why no mesh axis shrinks
  std::optional<std::string> micro_batches;      // why every micro-batch is kept
  std::optional<std::string> shape_reduction;    // why no dimension shrinks at all
  // reduce::counted_sum_key -> why: a sum an instance found counting its axis's size keeps it.
  std::map<std::string, std::string> counted_sums;

  bool operator==(const KeptWhole&) const = default;

  // How much is kept: each round of choosing again adds to it.
  size_t measure() const {
    return mesh_axes.size() + counted_sums.size() + every_rank.has_value() +
           micro_batches.has_value() + shape_reduction.has_value();
  }
};

}  // namespace onnx_tv::reduce
