// Which program each rank runs: plan.json's `ranks` or `programs`, or the default files
// rank<N>.onnx. Every rank runs exactly one program, and each distinct file is loaded once
// however many ranks run it (an SPMD plan may run one file on thousands of ranks).
#include <filesystem>
#include <map>
#include <set>

#include "common/errors.h"
#include "frontend/model_loader.h"
#include "frontend/plan_detail.h"

namespace onnx_tv::frontend::detail {

namespace fs = std::filesystem;

namespace {

std::string rank_file_name(int64_t r) { return "rank" + std::to_string(r) + ".onnx"; }

// N for a file named rank<N>.onnx (no leading zeros), else -1.
int64_t rank_file_number(const std::string& name) {
  if (name.size() < 10 || name.rfind("rank", 0) != 0 || !name.ends_with(".onnx")) return -1;
  const std::string digits = name.substr(4, name.size() - 9);
  if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return -1;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
  }
  return std::stoll(digits);
}

// Without plan.json: rank0.onnx, rank1.onnx, ... with no gap; their count is the world size.
// With plan.json (`world` given) only the files of ranks below `world` count, and a gap ends
// the list: the caller compares its length with the world size.
std::vector<std::string> scan_rank_files(const std::string& dir, int64_t world = -1) {
  std::set<int64_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const int64_t n = rank_file_number(entry.path().filename().string());
    if (n >= 0 && (world < 0 || n < world)) found.insert(n);
  }
  if (ec) throw InputError(dir + ": cannot list the folder (" + ec.message() + ")");
  if (world >= 0) {
    std::vector<std::string> files;
    for (int64_t r = 0; found.count(r); ++r) files.push_back(rank_file_name(r));
    return files;
  }
  if (found.empty()) {
    throw InputError(dir + ": no plan.json and no rank0.onnx (expected rank<N>.onnx files, "
                           "N = 0..W-1, or a plan.json)");
  }
  const int64_t last = *found.rbegin();
  for (int64_t r = 0; r <= last; ++r) {
    if (!found.count(r)) {
      throw InputError((fs::path(dir) / rank_file_name(r)).string() + " is missing: rank files "
                       "must be numbered 0..W-1 without gaps, and " + rank_file_name(last) +
                       " exists");
    }
  }
  std::vector<std::string> files;
  for (int64_t r = 0; r <= last; ++r) files.push_back(rank_file_name(r));
  return files;
}

// plan.json `ranks`: {"0": "rank0.onnx", ...} (or a list, index = rank). The entries are
// read into a map, so a world_size that the entries do not back allocates nothing.
std::vector<std::string> read_ranks_map(const Json& j, const std::string& where, int64_t world) {
  std::map<int64_t, std::string> files;
  auto set_rank = [&](const std::string& key, const Json& v, const std::string& at) {
    size_t used = 0;
    int64_t r = -1;
    try {
      r = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || key.empty()) json_fail(at, "'" + key + "' is not a rank number");
    if (r < 0 || r >= world) {
      json_fail(at, "rank " + key + " is outside the world (world_size " +
                        std::to_string(world) + ")");
    }
    if (files.count(r)) json_fail(at, "rank " + key + " is given twice");
    std::string file = json_string(v, at);
    if (file.empty()) json_fail(at, "the file name is empty");
    files[r] = std::move(file);
  };
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      set_rank(std::to_string(i), j[i], where + "[" + std::to_string(i) + "]");
    }
  } else {
    json_object(j, where);
    for (auto it = j.begin(); it != j.end(); ++it) {
      set_rank(it.key(), *it, where + " '" + it.key() + "'");
    }
  }
  // Every key is a distinct rank below world: all ranks have a program when there are world.
  if (int64_t(files.size()) != world) {
    int64_t r = 0;
    while (files.count(r)) ++r;
    json_fail(where, "rank " + std::to_string(r) + " has no program (expected an entry \"" +
                         std::to_string(r) + "\": \"<file>.onnx\")");
  }
  std::vector<std::string> out;
  out.reserve(files.size());
  for (auto& [r, f] : files) out.push_back(std::move(f));
  return out;
}

// plan.json `programs`: [{"file": ..., "ranks": list or selector}, ...].
std::vector<std::string> read_programs(const Json& j, const std::string& where, const Plan& plan) {
  json_array(j, where);
  // Lists of ranks cover no more ranks than they hold; only a selector may cover many. Counted
  // before tables of world_size entries are made.
  std::set<int64_t> listed;
  bool selector = false;
  for (const Json& e : j) {
    const Json* ranks = e.is_object() && e.contains("ranks") ? &e["ranks"] : nullptr;
    if (!ranks || !ranks->is_array()) selector = true;
    for (size_t i = 0; !selector && i < ranks->size(); ++i) {
      if ((*ranks)[i].is_number_integer()) listed.insert((*ranks)[i].get<int64_t>());
    }
  }
  if (!selector && int64_t(listed.size()) < plan.world_size) {
    int64_t r = 0;
    while (listed.count(r)) ++r;
    if (r < plan.world_size) {
      json_fail(where, "rank " + std::to_string(r) + " runs no program (every rank of "
                       "world_size " + std::to_string(plan.world_size) + " needs exactly one)");
    }
  }
  std::vector<std::string> files(size_t(plan.world_size));
  std::vector<std::string> given_by(size_t(plan.world_size));
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    json_object(j[i], at);
    check_keys(j[i], at, {"file", "ranks"});
    if (!j[i].contains("file")) json_fail(at, "missing 'file'");
    if (!j[i].contains("ranks")) json_fail(at, "missing 'ranks' (a list of ranks or a selector)");
    const std::string file = json_string(j[i]["file"], at + " file");
    if (file.empty()) json_fail(at + " file", "the file name is empty");
    for (int64_t r : parse_rank_set(j[i]["ranks"], at + " ranks", plan.mesh, plan.world_size)) {
      if (!files[size_t(r)].empty()) {
        json_fail(at, "rank " + std::to_string(r) + " would run two programs: " + file +
                          " here and " + files[size_t(r)] + " in " + given_by[size_t(r)]);
      }
      files[size_t(r)] = file;
      given_by[size_t(r)] = at;
    }
  }
  for (int64_t r = 0; r < plan.world_size; ++r) {
    if (files[size_t(r)].empty()) {
      json_fail(where, "rank " + std::to_string(r) + " runs no program (every rank of "
                       "world_size " + std::to_string(plan.world_size) + " needs exactly one)");
    }
  }
  return files;
}

}  // namespace

void load_programs(Plan& plan, const Json* manifest, const std::string& where,
                   size_t memory_bytes) {
  std::vector<std::string> files;
  if (!manifest) {
    files = scan_rank_files(plan.dir);
    plan.world_size = int64_t(files.size());
  } else if (manifest->contains("ranks") && manifest->contains("programs")) {
    json_fail(where, "give either 'ranks' or 'programs', not both");
  } else if (manifest->contains("ranks")) {
    files = read_ranks_map((*manifest)["ranks"], where + " ranks", plan.world_size);
  } else if (manifest->contains("programs")) {
    files = read_programs((*manifest)["programs"], where + " programs", plan);
  } else {
    // The default files rank0.onnx .. rank<W-1>.onnx must all be in the folder; they are
    // counted first, so that a world_size the folder cannot back allocates nothing.
    const std::vector<std::string> found = scan_rank_files(plan.dir, plan.world_size);
    if (int64_t(found.size()) != plan.world_size) {
      const int64_t missing = int64_t(found.size());
      throw InputError("the program of rank " + std::to_string(missing) + ": " +
                       (fs::path(plan.dir) / rank_file_name(missing)).string() +
                       ": no such file (" + where + " gives world_size " +
                       std::to_string(plan.world_size) + "; without 'ranks' or 'programs', "
                       "rank N runs rank<N>.onnx)");
    }
    files = found;
  }

  std::map<std::string, size_t> index_of;  // normalized path -> index in plan.programs
  plan.rank_program.assign(size_t(plan.world_size), 0);
  for (int64_t r = 0; r < plan.world_size; ++r) {
    const fs::path path = fs::path(plan.dir) / files[size_t(r)];
    const std::string key = path.lexically_normal().string();
    auto it = index_of.find(key);
    if (it == index_of.end()) {
      try {
        LoadOptions options;
        options.memory_bytes = memory_bytes;
        plan.programs.push_back(
            std::make_shared<const ir::Graph>(load_model(path.string(), options)));
      } catch (Error& e) {
        e.add_context("the program of rank " + std::to_string(r));
        throw;
      }
      it = index_of.emplace(key, plan.programs.size() - 1).first;
    }
    plan.rank_program[size_t(r)] = it->second;
  }
}

}  // namespace onnx_tv::frontend::detail
