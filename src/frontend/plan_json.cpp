// load_plan: the shards folder as a whole (plan-format sections 2 to 4). plan.json, when
// present, is read strictly; the programs are loaded; bindings from plan.json and from every
// program's metadata are merged, expanded to one per rank, and checked for duplicates.
#include <filesystem>

#include "common/errors.h"
#include "common/memory_limit.h"
#include "frontend/plan_detail.h"
#include "frontend/regular_file.h"

namespace onnx_tv::frontend {

namespace fs = std::filesystem;
using detail::Json;

namespace {

constexpr const char* kFormat = "onnx-tv.plan/1";
constexpr const char* kMetadataKey = "onnx_tv.bindings";

// plan.json of a plan that lists every binding of thousands of ranks is large, but not this
// large.
constexpr uint64_t kMaxPlanBytes = uint64_t(1) << 30;

// More ranks than any training job runs (the largest run on about 100,000 devices); below it,
// a plan's per-rank tables stay a few hundred megabytes at most.
constexpr int64_t kMaxWorldSize = int64_t(1) << 20;

Json read_json_file(const std::string& path) {
  detail::RegularFile file(path, "a plan.json file");
  return detail::parse_json(file.read_all(kMaxPlanBytes, "the most a plan.json may hold"), path);
}

// The top level of plan.json, before the programs are known.
void read_header(Plan& plan, const Json& j, const std::string& where) {
  detail::json_object(j, where);
  detail::check_keys(j, where, {"format", "world_size", "mesh", "ranks", "programs", "bindings"});
  if (j.contains("format")) {
    const std::string f = detail::json_string(j["format"], where + " format");
    if (f != kFormat) {
      detail::json_fail(where + " format", "'" + f + "' is not a known format (expected \"" +
                                               kFormat + "\")");
    }
  }
  if (!j.contains("world_size")) {
    detail::json_fail(where, "missing 'world_size' (the number of ranks), which is required");
  }
  plan.world_size = detail::json_int(j["world_size"], where + " world_size");
  if (plan.world_size < 1 || plan.world_size > kMaxWorldSize) {
    detail::json_fail(where + " world_size",
                      std::to_string(plan.world_size) + " (expected at least 1 and at most " +
                          std::to_string(kMaxWorldSize) + " ranks)");
  }
  if (j.contains("mesh")) plan.mesh = detail::parse_mesh(j["mesh"], where + " mesh", plan.world_size);
}

void read_metadata_bindings(Plan& plan, size_t memory_bytes) {
  for (size_t p = 0; p < plan.programs.size(); ++p) {
    const ir::Graph& g = *plan.programs[p];
    auto it = g.metadata.find(kMetadataKey);
    if (it == g.metadata.end()) continue;
    const std::string where = g.file + " metadata " + kMetadataKey;
    const Json list = detail::parse_json(it->second, where);
    detail::json_array(list, where);
    std::vector<int64_t> ranks;
    for (int64_t r = 0; r < plan.world_size; ++r) {
      if (plan.rank_program[size_t(r)] == p) ranks.push_back(r);
    }
    const detail::BindingScope scope{&plan.mesh, plan.world_size, &ranks};
    for (size_t i = 0; i < list.size(); ++i) {
      for (Binding& b : detail::parse_binding(list[i], where + "[" + std::to_string(i) + "]",
                                              scope)) {
        plan.bindings.push_back(std::move(b));
      }
      check_memory(memory_bytes, "reading the bindings of " + g.file);
    }
  }
}

}  // namespace

Plan load_plan(const std::string& shards_dir, size_t memory_bytes) {
  std::error_code ec;
  if (!fs::is_directory(shards_dir, ec)) {
    throw InputError(shards_dir + ": " +
                     (fs::exists(shards_dir, ec) ? "is not a folder" : "no such folder") +
                     " (expected the shards folder holding plan.json or rank<N>.onnx files)");
  }
  Plan plan;
  plan.dir = shards_dir;
  const std::string manifest_path = (fs::path(shards_dir) / "plan.json").string();
  std::optional<Json> manifest;
  if (fs::exists(manifest_path, ec)) {
    manifest = read_json_file(manifest_path);
    read_header(plan, *manifest, manifest_path);
  }
  detail::load_programs(plan, manifest ? &*manifest : nullptr, manifest_path, memory_bytes);

  if (manifest && manifest->contains("bindings")) {
    const std::string where = manifest_path + " bindings";
    const Json& list = detail::json_array((*manifest)["bindings"], where);
    const detail::BindingScope scope{&plan.mesh, plan.world_size, nullptr};
    for (size_t i = 0; i < list.size(); ++i) {
      for (Binding& b : detail::parse_binding(list[i], where + "[" + std::to_string(i) + "]",
                                              scope)) {
        plan.bindings.push_back(std::move(b));
      }
      check_memory(memory_bytes, "reading the bindings of " + manifest_path);
    }
  }
  read_metadata_bindings(plan, memory_bytes);
  detail::check_binding_values(plan);
  detail::check_duplicate_bindings(plan.bindings);
  return plan;
}

}  // namespace onnx_tv::frontend
