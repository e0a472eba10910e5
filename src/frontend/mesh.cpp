// Reading the device mesh and rank selectors from plan.json (plan-format section 4).
#include <algorithm>
#include <set>

#include "common/checked.h"
#include "common/errors.h"
#include "frontend/plan_detail.h"

namespace onnx_tv::frontend {

namespace detail {

Mesh parse_mesh(const Json& j, const std::string& where, int64_t world_size) {
  json_object(j, where);
  check_keys(j, where, {"axes", "shape"});
  if (!j.contains("axes")) json_fail(where, "missing 'axes' (a list of axis names)");
  if (!j.contains("shape")) json_fail(where, "missing 'shape' (a list of axis sizes)");
  Mesh m;
  const Json& axes = json_array(j["axes"], where + " axes");
  const Json& shape = json_array(j["shape"], where + " shape");
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::string at = where + " axes[" + std::to_string(i) + "]";
    std::string name = json_string(axes[i], at);
    if (name.empty()) json_fail(at, "an axis name must not be empty");
    if (m.axis_index(name) >= 0) json_fail(at, "axis '" + name + "' is named twice");
    m.axes.push_back(std::move(name));
  }
  if (shape.size() != axes.size()) {
    json_fail(where, "'shape' has " + std::to_string(shape.size()) + " entries but 'axes' has " +
                         std::to_string(axes.size()) + " (expected one size per axis)");
  }
  std::optional<int64_t> product = 1;  // nullopt once past 2^63 - 1
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string at = where + " shape[" + std::to_string(i) + "]";
    const int64_t n = json_int(shape[i], at);
    if (n < 1) json_fail(at, "axis size " + std::to_string(n) + " (expected at least 1)");
    m.shape.push_back(n);
    if (product) product = checked_mul(*product, n);
  }
  if (product != world_size) {
    json_fail(where, "mesh shape " + shape.dump() + " holds " +
                         (product ? std::to_string(*product) : "more than 2^63") +
                         " ranks but world_size is " + std::to_string(world_size));
  }
  return m;
}

std::vector<int64_t> parse_rank_set(const Json& j, const std::string& where,
                                    const std::optional<Mesh>& mesh, int64_t world_size) {
  std::vector<int64_t> out;
  if (j.is_array()) {
    std::set<int64_t> seen;
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string at = where + "[" + std::to_string(i) + "]";
      const int64_t r = json_int(j[i], at);
      if (r < 0 || r >= world_size) {
        json_fail(at, "rank " + std::to_string(r) + " is outside the world (world_size " +
                          std::to_string(world_size) + ")");
      }
      if (!seen.insert(r).second) json_fail(at, "rank " + std::to_string(r) + " is listed twice");
    }
    out.assign(seen.begin(), seen.end());
    if (out.empty()) json_fail(where, "the list of ranks is empty");
    return out;
  }
  if (!j.is_object()) {
    json_fail(where, "expected a list of ranks or a mesh selector such as {\"pp\": 0}, found " +
                         j.dump());
  }
  if (j.empty()) {  // {} selects every rank, with or without a mesh
    for (int64_t r = 0; r < world_size; ++r) out.push_back(r);
    return out;
  }
  if (!mesh) json_fail(where, "a mesh selector needs a 'mesh' in plan.json");
  // Per axis, the coordinates selected (all of them unless the selector fixes the axis).
  std::vector<std::set<int64_t>> allowed(mesh->axes.size());
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string at = where + " '" + it.key() + "'";
    const int64_t a = mesh->axis_index(it.key());
    if (a < 0) {
      std::string list;
      for (const auto& n : mesh->axes) list += (list.empty() ? "" : ", ") + n;
      json_fail(at, "unknown mesh axis '" + it.key() + "' (the mesh axes are: " + list + ")");
    }
    std::vector<int64_t> values;
    if (it->is_array()) {
      for (size_t i = 0; i < it->size(); ++i) values.push_back(json_int((*it)[i], at));
      if (values.empty()) json_fail(at, "selects no coordinate");
    } else {
      values.push_back(json_int(*it, at));
    }
    for (int64_t v : values) {
      if (v < 0 || v >= mesh->shape[size_t(a)]) {
        json_fail(at, "coordinate " + std::to_string(v) + " is outside axis '" + it.key() +
                          "' of size " + std::to_string(mesh->shape[size_t(a)]));
      }
      allowed[size_t(a)].insert(v);
    }
  }
  for (int64_t r = 0; r < world_size; ++r) {
    const auto c = mesh->coords(r);
    bool ok = true;
    for (size_t a = 0; a < c.size() && ok; ++a) ok = allowed[a].empty() || allowed[a].count(c[a]);
    if (ok) out.push_back(r);
  }
  return out;
}

}  // namespace detail

}  // namespace onnx_tv::frontend
