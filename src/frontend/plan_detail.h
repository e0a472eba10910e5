#pragma once
// Private to the frontend: the pieces of the plan reader shared by its files (JSON checks,
// mesh and rank selectors, binding objects). Every `where` argument is the place being read,
// as it should appear in a message ("shards/plan.json bindings[3]").
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/plan.h"

namespace onnx_tv::frontend {

// The plan's data types, by their short names inside the reader.
using ir::Binding;
using ir::Mesh;
using ir::Placement;
using ir::placement_name;
using ir::Plan;
using ir::SliceEntry;

}  // namespace onnx_tv::frontend

namespace onnx_tv::frontend::detail {

using Json = nlohmann::json;

[[noreturn]] void json_fail(const std::string& where, const std::string& msg);

// Nesting deeper than this is an error: plan.json needs 5 levels, and printing or destroying a
// deeper document recurses once per level, so 100,000 nested lists would overflow the stack.
constexpr size_t kMaxJsonDepth = 64;

// Parses JSON text read from `where` (plan.json, a model's metadata). InputError naming `where`
// when the text is not JSON or nests deeper than kMaxJsonDepth, checked before it is parsed.
Json parse_json(const std::string& text, const std::string& where);

// InputError on the first key of `obj` not in `allowed`, naming it and listing what is allowed.
void check_keys(const Json& obj, const std::string& where,
                std::initializer_list<const char*> allowed);

// Typed reads; InputError naming `where` and the JSON text found when the type is wrong.
int64_t json_int(const Json& v, const std::string& where);
std::string json_string(const Json& v, const std::string& where);
const Json& json_object(const Json& v, const std::string& where);
const Json& json_array(const Json& v, const std::string& where);

// The mesh object {"axes": [...], "shape": [...]}; its size must be world_size.
Mesh parse_mesh(const Json& j, const std::string& where, int64_t world_size);

// A set of ranks, as a list of ranks or as a mesh selector ({"pp": 0}; {} is every rank).
// Sorted ascending, never empty.
std::vector<int64_t> parse_rank_set(const Json& j, const std::string& where,
                                    const std::optional<Mesh>& mesh, int64_t world_size);

// What a binding list is read against.
struct BindingScope {
  const std::optional<Mesh>* mesh = nullptr;
  int64_t world_size = 0;
  // Metadata bindings: the ranks running the program that holds them. They apply to all of
  // these unless the binding narrows them; nullptr for plan.json, where rank(s) are required.
  const std::vector<int64_t>* program_ranks = nullptr;
};

// One binding object, expanded to one Binding per rank it holds on; each gets `origin`.
std::vector<Binding> parse_binding(const Json& j, const std::string& origin,
                                   const BindingScope& scope);

// "Shard(0)", "Replicate()", "Partial()", "Partial(sum)".
Placement parse_placement(const std::string& text, const std::string& where);
std::string placement_name(const Placement& p);

// Each binding names a graph input, output or initializer of its rank's program.
void check_binding_values(const Plan& plan);

// The same binding given twice is an error naming both origins.
void check_duplicate_bindings(const std::vector<Binding>& bindings);

// Which program each rank runs, and the files: fills plan.programs and plan.rank_program.
// `manifest` is plan.json (nullptr when absent); `where` names it.
void load_programs(Plan& plan, const Json* manifest, const std::string& where,
                   size_t memory_bytes);

}  // namespace onnx_tv::frontend::detail
