// Binding objects (plan-format section 3) from plan.json and from models' metadata, checked
// for types and shape of the JSON here; regions are checked against the spec's shapes later,
// in resolve_region, when the spec is known.
#include <set>
#include <string>
#include <unordered_map>

#include "common/errors.h"
#include "frontend/plan_detail.h"

namespace onnx_tv::frontend::detail {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<SliceEntry> parse_slice(const Json& j, const std::string& where) {
  json_array(j, where);
  std::vector<SliceEntry> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (j[i].is_null()) {
      out.push_back(std::nullopt);
      continue;
    }
    if (!j[i].is_array() || j[i].size() != 2) {
      json_fail(at, "expected null or [start, end], found " + j[i].dump());
    }
    const int64_t s = json_int(j[i][0], at + " start"), e = json_int(j[i][1], at + " end");
    if (s < 0 || e < s) {
      json_fail(at, "[" + std::to_string(s) + ", " + std::to_string(e) +
                        ") is not a range (expected 0 <= start <= end)");
    }
    out.push_back(std::make_pair(s, e));
  }
  return out;
}

}  // namespace

Placement parse_placement(const std::string& text, const std::string& where) {
  const std::string t = trim(text);
  Placement p;
  if (t == "Replicate()" || t == "Replicate") return p;
  if (t == "Partial()" || t == "Partial" || t == "Partial(sum)" || t == "Partial(\"sum\")") {
    p.kind = Placement::Kind::Partial;
    return p;
  }
  if (t.rfind("Partial(", 0) == 0) {
    json_fail(where, "placement '" + text + "': only sum partials are supported (Partial() or "
                     "Partial(sum))");
  }
  if (t.rfind("Shard(", 0) == 0 && t.back() == ')') {
    std::string arg = trim(t.substr(6, t.size() - 7));
    if (arg.rfind("dim=", 0) == 0) arg = trim(arg.substr(4));
    size_t used = 0;
    try {
      p.dim = std::stoll(arg, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == arg.size() && !arg.empty()) {
      p.kind = Placement::Kind::Shard;
      return p;
    }
  }
  json_fail(where, "unknown placement '" + text +
                       "' (expected Shard(d), Replicate(), Partial() or Partial(sum))");
}

std::vector<Binding> parse_binding(const Json& j, const std::string& origin,
                                   const BindingScope& scope) {
  json_object(j, origin);
  check_keys(j, origin, {"rank", "ranks", "value", "spec", "slice", "placements", "local_slice",
                         "partial", "group"});
  const std::optional<Mesh>& mesh = *scope.mesh;
  Binding b;
  b.origin = origin;

  for (const char* key : {"value", "spec"}) {
    if (!j.contains(key)) json_fail(origin, std::string("missing '") + key + "'");
    std::string s = json_string(j[key], origin + " " + key);
    if (s.empty()) json_fail(origin + " " + key, "must not be empty");
    (std::string(key) == "value" ? b.value : b.spec) = std::move(s);
  }
  if (j.contains("slice")) b.slice = parse_slice(j["slice"], origin + " slice");
  if (j.contains("local_slice")) {
    b.local_slice = parse_slice(j["local_slice"], origin + " local_slice");
  }
  if (j.contains("partial")) {
    const std::string p = json_string(j["partial"], origin + " partial");
    if (p != "sum") {
      json_fail(origin + " partial", "'" + p + "' is not supported (expected \"sum\")");
    }
    b.partial = true;
  }
  if (j.contains("group")) b.group = json_string(j["group"], origin + " group");
  if (j.contains("placements")) {
    const std::string at = origin + " placements";
    if (!mesh) json_fail(at, "placements need a 'mesh' in plan.json");
    if (b.slice) json_fail(origin, "give either 'slice' or 'placements', not both");
    if (j.contains("partial")) {
      json_fail(origin, "give either 'partial' or a Partial() placement, not both");
    }
    const Json& list = json_array(j["placements"], at);
    if (list.size() != mesh->axes.size()) {
      json_fail(at, std::to_string(list.size()) + " placements given, but the mesh has " +
                        std::to_string(mesh->axes.size()) + " axes (expected one per axis)");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string pat = at + "[" + std::to_string(i) + "]";
      b.placements.push_back(parse_placement(json_string(list[i], pat), pat));
      if (b.placements.back().kind == Placement::Kind::Partial) b.partial = true;
    }
  }

  // The ranks it holds on.
  if (j.contains("rank") && j.contains("ranks")) {
    json_fail(origin, "give either 'rank' or 'ranks', not both");
  }
  std::vector<int64_t> ranks;
  if (j.contains("rank")) {
    const int64_t r = json_int(j["rank"], origin + " rank");
    if (r < 0 || r >= scope.world_size) {
      json_fail(origin + " rank", "rank " + std::to_string(r) +
                                      " is outside the world (world_size " +
                                      std::to_string(scope.world_size) + ")");
    }
    ranks.push_back(r);
  } else if (j.contains("ranks")) {
    ranks = parse_rank_set(j["ranks"], origin + " ranks", mesh, scope.world_size);
  } else if (scope.program_ranks) {
    ranks = *scope.program_ranks;
  } else {
    json_fail(origin, "missing 'rank' or 'ranks' (which ranks the binding holds on)");
  }
  if (scope.program_ranks) {  // metadata may narrow its program's ranks, never widen them
    const std::set<int64_t> running(scope.program_ranks->begin(), scope.program_ranks->end());
    for (int64_t r : ranks) {
      if (!running.count(r)) {
        json_fail(origin, "rank " + std::to_string(r) + " does not run this program");
      }
    }
  }
  std::vector<Binding> out;
  for (int64_t r : ranks) {
    b.rank = r;
    out.push_back(b);
  }
  return out;
}

void check_binding_values(const Plan& plan) {
  for (const Binding& b : plan.bindings) {
    const ir::Graph& g = plan.program_of(b.rank);
    bool found = g.initializers.count(b.value) > 0;
    for (const auto& v : g.inputs) found = found || v.name == b.value;
    for (const auto& v : g.outputs) found = found || v.name == b.value;
    if (!found) {
      throw InputError(b.origin + ": rank " + std::to_string(b.rank) + " (" + g.file +
                       ") has no graph input, output or initializer named '" + b.value + "'");
    }
  }
}

void check_duplicate_bindings(const std::vector<Binding>& bindings) {
  // Hashed: a plan of thousands of ranks has hundreds of thousands of bindings per rank set
  // expanded, and their keys share long prefixes that an ordered map compares again and again.
  std::unordered_map<std::string, const Binding*> seen;
  seen.reserve(bindings.size());
  for (const Binding& b : bindings) {
    auto [it, fresh] = seen.emplace(std::to_string(b.rank) + "\n" + binding_key(b), &b);
    if (!fresh) {
      throw InputError(b.origin + ": the same binding (rank " + std::to_string(b.rank) +
                       ", value '" + b.value + "', spec '" + b.spec +
                       "') is already given by " + it->second->origin);
    }
  }
}

}  // namespace onnx_tv::frontend::detail
