// load_plan: shards folders with and without plan.json, SPMD programs, bindings from plan.json
// and metadata, and every input error of plan-format sections 2 to 4.
#include "frontend/plan.h"
#include "test_util.h"

namespace onnx_tv::frontend::test {
namespace {

using ir::Binding;
using ir::Placement;
using ir::Plan;
using ir::SliceEntry;

// Writes rank files for `world` ranks (identity models x -> y of shape [4]), each with
// `metadata` as its onnx_tv.bindings when not empty.
void write_rank_files(const TempDir& dir, int world, const std::string& metadata = "") {
  for (int r = 0; r < world; ++r) {
    onnx::ModelProto m = identity_model();
    if (!metadata.empty()) set_metadata(m, "onnx_tv.bindings", metadata);
    write_model(dir.file("rank" + std::to_string(r) + ".onnx"), m);
  }
}

const char* kMesh222 = R"("mesh": {"axes": ["dp", "pp", "tp"], "shape": [2, 2, 2]})";

TEST(Plan, DefaultRankFilesWithMetadataBindings) {
  TempDir dir;
  write_rank_files(dir, 3, R"([{"value": "x", "spec": "x", "slice": [[0, 4]]},
                              {"value": "y", "spec": "y", "partial": "sum", "group": "g"}])");
  Plan plan = load_plan(dir.path());
  EXPECT_EQ(plan.world_size, 3);
  EXPECT_FALSE(plan.mesh.has_value());
  EXPECT_EQ(plan.programs.size(), 3u);
  EXPECT_EQ(plan.rank_program, (std::vector<size_t>{0, 1, 2}));
  ASSERT_EQ(plan.bindings.size(), 6u);
  int partial = 0;
  for (const Binding& b : plan.bindings) {
    const std::string file = "rank" + std::to_string(b.rank) + ".onnx";
    EXPECT_NE(b.origin.find(file + " metadata onnx_tv.bindings["), std::string::npos) << b.origin;
    if (b.partial) {
      ++partial;
      EXPECT_EQ(b.group, "g");
      EXPECT_EQ(b.value, "y");
    } else {
      ASSERT_TRUE(b.slice.has_value());
      EXPECT_EQ((*b.slice)[0], SliceEntry(std::make_pair<int64_t, int64_t>(0, 4)));
    }
  }
  EXPECT_EQ(partial, 3);
  EXPECT_EQ(plan.program_of(1).file, dir.file("rank1.onnx"));
}

TEST(Plan, RanksMapLoadsEachFileOnce) {
  TempDir dir;
  write_model(dir.file("same.onnx"), identity_model());
  write_model(dir.file("other.onnx"), identity_model());
  write_text(dir.file("plan.json"), R"({
    "format": "onnx-tv.plan/1", "world_size": 3,
    "ranks": {"0": "same.onnx", "1": "./same.onnx", "2": "other.onnx"},
    "bindings": [{"rank": 2, "value": "x", "spec": "x", "slice": [null]},
                 {"ranks": [0, 1], "value": "y", "spec": "y"}]})");
  Plan plan = load_plan(dir.path());
  EXPECT_EQ(plan.programs.size(), 2u);
  EXPECT_EQ(plan.rank_program, (std::vector<size_t>{0, 0, 1}));
  ASSERT_EQ(plan.bindings.size(), 3u);
  EXPECT_EQ(plan.bindings[0].rank, 2);
  EXPECT_EQ(plan.bindings[0].origin, dir.file("plan.json") + " bindings[0]");
  EXPECT_EQ(plan.bindings[1].rank, 0);
  EXPECT_EQ(plan.bindings[2].rank, 1);
  EXPECT_EQ(plan.bindings[2].origin, dir.file("plan.json") + " bindings[1]");
}

TEST(Plan, PlanJsonWithDefaultFileNames) {
  TempDir dir;
  write_rank_files(dir, 2);
  write_text(dir.file("plan.json"), R"({"world_size": 2})");
  Plan plan = load_plan(dir.path());
  EXPECT_EQ(plan.world_size, 2);
  EXPECT_EQ(plan.programs.size(), 2u);
}

TEST(Plan, SpmdProgramsWithSelectorsAndPlacements) {
  TempDir dir;
  onnx::ModelProto stage1 = identity_model({4}, "h", "loss");
  set_metadata(stage1, "onnx_tv.bindings",
               R"J([{"value": "loss", "spec": "loss", "placements":
                    ["Partial()", "Replicate()", "Replicate()"]}])J");
  write_model(dir.file("stage0.onnx"), identity_model({4}, "x_mb3", "h"));
  write_model(dir.file("stage1.onnx"), stage1);
  write_text(dir.file("plan.json"), std::string(R"({
    "format": "onnx-tv.plan/1", "world_size": 8, )") + kMesh222 + R"J(,
    "programs": [{"file": "stage0.onnx", "ranks": {"pp": 0}},
                 {"file": "stage1.onnx", "ranks": {"pp": 1}}],
    "bindings": [{"ranks": {"pp": 0}, "value": "x_mb3", "spec": "x",
                  "placements": ["Shard(0)", "Replicate()", "Replicate()"],
                  "local_slice": [[6, 8], null]}]})J");
  Plan plan = load_plan(dir.path());
  ASSERT_TRUE(plan.mesh.has_value());
  EXPECT_EQ(plan.mesh->axes, (std::vector<std::string>{"dp", "pp", "tp"}));
  EXPECT_EQ(plan.programs.size(), 2u);
  // Rank r has coords (r / 4, r / 2 % 2, r % 2): pp = 1 for ranks 2, 3, 6, 7.
  EXPECT_EQ(plan.rank_program, (std::vector<size_t>{0, 0, 1, 1, 0, 0, 1, 1}));
  ASSERT_EQ(plan.bindings.size(), 8u);
  std::vector<int64_t> x_ranks, loss_ranks;
  for (const Binding& b : plan.bindings) {
    (b.value == "x_mb3" ? x_ranks : loss_ranks).push_back(b.rank);
    if (b.value == "loss") {
      EXPECT_TRUE(b.partial);
      EXPECT_NE(b.origin.find("stage1.onnx metadata onnx_tv.bindings[0]"), std::string::npos);
    } else {
      ASSERT_EQ(b.placements.size(), 3u);
      EXPECT_EQ(b.placements[0].kind, Placement::Kind::Shard);
      EXPECT_TRUE(b.local_slice.has_value());
    }
  }
  EXPECT_EQ(x_ranks, (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(loss_ranks, (std::vector<int64_t>{2, 3, 6, 7}));
}

TEST(Plan, ProgramsByListAndEveryRankSelector) {
  TempDir dir;
  write_model(dir.file("all.onnx"), identity_model());
  write_text(dir.file("plan.json"),
             R"({"world_size": 4, "programs": [{"file": "all.onnx", "ranks": {}}],
                 "bindings": [{"ranks": {}, "value": "x", "spec": "x"}]})");
  Plan plan = load_plan(dir.path());
  EXPECT_EQ(plan.programs.size(), 1u);
  EXPECT_EQ(plan.bindings.size(), 4u);

  TempDir dir2;
  write_model(dir2.file("a.onnx"), identity_model());
  write_model(dir2.file("b.onnx"), identity_model());
  write_text(dir2.file("plan.json"),
             R"({"world_size": 3, "programs": [{"file": "a.onnx", "ranks": [0, 2]},
                                               {"file": "b.onnx", "ranks": [1]}]})");
  Plan plan2 = load_plan(dir2.path());
  EXPECT_EQ(plan2.rank_program, (std::vector<size_t>{0, 1, 0}));
}

// ---- errors --------------------------------------------------------------------------------

TEST(PlanErrors, MissingFolderAndNoRankFiles) {
  TempDir dir;
  expect_input_error([&] { load_plan(dir.file("nowhere")); }, {"nowhere", "no such folder"});
  expect_input_error([&] { load_plan(dir.path()); }, {dir.path(), "rank0.onnx"});
}

TEST(PlanErrors, GapInRankFiles) {
  TempDir dir;
  write_model(dir.file("rank0.onnx"), identity_model());
  write_model(dir.file("rank2.onnx"), identity_model());
  expect_input_error([&] { load_plan(dir.path()); }, {dir.file("rank1.onnx"), "missing"});
}

TEST(PlanErrors, MissingRankFileNamedByPlan) {
  TempDir dir;
  write_rank_files(dir, 2);
  write_text(dir.file("plan.json"), R"({"world_size": 3})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("rank2.onnx"), "no such file", "rank 2"});
  write_text(dir.file("plan.json"), R"({"world_size": 1, "ranks": {"0": "gone.onnx"}})");
  expect_input_error([&] { load_plan(dir.path()); }, {dir.file("gone.onnx"), "no such file"});
}

TEST(PlanErrors, GarbageRankFile) {
  TempDir dir;
  write_rank_files(dir, 1);
  write_text(dir.file("rank1.onnx"), "garbage garbage garbage");
  expect_input_error([&] { load_plan(dir.path()); }, {dir.file("rank1.onnx"), "not an ONNX"});
}

TEST(PlanErrors, GarbagePlanJsonAndWrongFormat) {
  TempDir dir;
  write_rank_files(dir, 1);
  write_text(dir.file("plan.json"), "{\"world_size\": 1,");
  expect_input_error([&] { load_plan(dir.path()); }, {dir.file("plan.json"), "not valid JSON"});
  write_text(dir.file("plan.json"), R"({"format": "onnx-tv.plan/9", "world_size": 1})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json"), "onnx-tv.plan/9", "onnx-tv.plan/1"});
}

TEST(PlanErrors, MissingWorldSize) {
  TempDir dir;
  write_rank_files(dir, 1);
  write_text(dir.file("plan.json"), R"({"format": "onnx-tv.plan/1"})");
  expect_input_error([&] { load_plan(dir.path()); }, {dir.file("plan.json"), "world_size"});
  write_text(dir.file("plan.json"), R"({"world_size": "one"})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json"), "world_size", "expected an integer"});
}

TEST(PlanErrors, UnknownKeys) {
  TempDir dir;
  write_rank_files(dir, 2);
  write_text(dir.file("plan.json"), R"({"world_size": 2, "bindigns": []})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json"), "unknown key 'bindigns'"});
  write_text(dir.file("plan.json"), R"({"world_size": 2, "bindings": [
      {"rank": 0, "value": "x", "spec": "x"},
      {"rank": 1, "value": "x", "spec": "x", "slcie": [[0, 2]]}]})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json") + " bindings[1]", "unknown key 'slcie'"});
  write_text(dir.file("plan.json"),
             R"({"world_size": 2, "mesh": {"axes": ["dp"], "shape": [2], "dims": 1}})");
  expect_input_error([&] { load_plan(dir.path()); }, {"mesh", "unknown key 'dims'"});
  write_text(dir.file("plan.json"),
             R"({"world_size": 2, "programs": [{"file": "rank0.onnx", "ranks": {}, "x": 1}]})");
  expect_input_error([&] { load_plan(dir.path()); }, {"programs[0]", "unknown key 'x'"});
}

TEST(PlanErrors, UnknownKeyInMetadataBinding) {
  TempDir dir;
  write_rank_files(dir, 1, R"([{"value": "x", "spec": "x", "partail": "sum"}])");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("rank0.onnx") + " metadata onnx_tv.bindings[0]",
                      "unknown key 'partail'"});
}

TEST(PlanErrors, MetadataNotJson) {
  TempDir dir;
  write_rank_files(dir, 1, "[{]");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("rank0.onnx"), "onnx_tv.bindings", "not valid JSON"});
}

TEST(PlanErrors, DuplicateBinding) {
  TempDir dir;
  write_rank_files(dir, 2, R"([{"value": "y", "spec": "y", "slice": [[0, 4]]}])");
  write_text(dir.file("plan.json"), R"({"world_size": 2, "bindings": [
      {"rank": 1, "value": "y", "spec": "y", "slice": [[0, 4]]}]})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json") + " bindings[0]",
                      dir.file("rank1.onnx") + " metadata onnx_tv.bindings[0]", "same binding",
                      "'y'"});

  TempDir dir2;
  write_rank_files(dir2, 2);
  write_text(dir2.file("plan.json"), R"({"world_size": 2, "bindings": [
      {"ranks": [0, 1], "value": "x", "spec": "x"},
      {"rank": 1, "value": "x", "spec": "x", "slice": [null]}]})");
  expect_input_error([&] { load_plan(dir2.path()); },
                     {"bindings[0]", "bindings[1]", "same binding", "rank 1"});
}

TEST(PlanErrors, DifferentGroupsAreNotDuplicates) {
  TempDir dir;
  write_rank_files(dir, 1);
  write_text(dir.file("plan.json"), R"({"world_size": 1, "bindings": [
      {"rank": 0, "value": "y", "spec": "y", "partial": "sum", "group": "a"},
      {"rank": 0, "value": "y", "spec": "y", "partial": "sum", "group": "b"}]})");
  EXPECT_EQ(load_plan(dir.path()).bindings.size(), 2u);
}

TEST(PlanErrors, BindingsMalformed) {
  TempDir dir;
  write_rank_files(dir, 2);
  auto with_binding = [&](const std::string& b) {
    write_text(dir.file("plan.json"), std::string(R"({"world_size": 2, )") + kMesh222 +
                                          std::string(R"(, "bindings": [)") + b + "]}");
  };
  // The mesh above needs 8 ranks: the mismatch is reported first.
  with_binding(R"({"rank": 0, "value": "x", "spec": "x"})");
  expect_input_error([&] { load_plan(dir.path()); }, {"mesh", "world_size is 2"});

  auto plain = [&](const std::string& b) {
    write_text(dir.file("plan.json"),
               R"({"world_size": 2, "mesh": {"axes": ["dp"], "shape": [2]}, "bindings": [)" +
                   b + "]}");
  };
  plain(R"J({"rank": 0, "value": "x", "spec": "x", "placements": ["Shard(0)", "Replicate()"]})J");
  expect_input_error([&] { load_plan(dir.path()); },
                     {"bindings[0] placements", "2 placements", "1 axes"});
  plain(R"J({"rank": 0, "value": "x", "spec": "x", "placements": ["Spread(0)"]})J");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0]", "'Spread(0)'"});
  plain(R"({"rank": 0, "value": "x", "spec": "x", "partial": "max"})");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0] partial", "'max'", "sum"});
  plain(R"({"rank": 5, "value": "x", "spec": "x"})");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0] rank", "rank 5", "world"});
  plain(R"({"value": "x", "spec": "x"})");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0]", "'rank' or 'ranks'"});
  plain(R"({"rank": 0, "value": "x", "spec": "x", "slice": [[1]]})");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0] slice[0]", "[start, end]"});
  plain(R"({"rank": 0, "value": "x", "spec": "x", "slice": [[3, 1]]})");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0] slice[0]", "not a range"});
  plain(R"({"rank": 0, "value": "x", "spec": 3})");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0] spec", "expected a string"});
  plain(R"({"ranks": {"tp": 0}, "value": "x", "spec": "x"})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {"bindings[0] ranks 'tp'", "unknown mesh axis 'tp'"});
  plain(R"({"ranks": {"dp": 2}, "value": "x", "spec": "x"})");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0] ranks 'dp'", "coordinate 2"});
  plain(R"({"rank": 1, "value": "w_shard", "spec": "w"})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {"bindings[0]", dir.file("rank1.onnx"), "'w_shard'"});

  write_text(dir.file("plan.json"), R"J({"world_size": 2, "bindings": [
      {"rank": 0, "value": "x", "spec": "x", "placements": ["Replicate()"]}]})J");
  expect_input_error([&] { load_plan(dir.path()); }, {"bindings[0] placements", "mesh"});
}

TEST(PlanErrors, EveryRankRunsExactlyOneProgram) {
  TempDir dir;
  write_model(dir.file("a.onnx"), identity_model());
  write_model(dir.file("b.onnx"), identity_model());
  write_text(dir.file("plan.json"), std::string(R"({"world_size": 8, )") + kMesh222 + R"(,
      "programs": [{"file": "a.onnx", "ranks": {"pp": 0}},
                   {"file": "b.onnx", "ranks": {"tp": 1}}]})");
  // Rank 1 has pp = 0 and tp = 1.
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json") + " programs[1]", "rank 1", "two programs", "a.onnx",
                      "b.onnx"});
  write_text(dir.file("plan.json"), std::string(R"({"world_size": 8, )") + kMesh222 + R"(,
      "programs": [{"file": "a.onnx", "ranks": {"pp": 0}}]})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json") + " programs", "rank 2", "no program"});
  write_text(dir.file("plan.json"), R"({"world_size": 2, "ranks": {"0": "a.onnx"}})");
  expect_input_error([&] { load_plan(dir.path()); }, {"ranks", "rank 1", "no program"});
  write_text(dir.file("plan.json"),
             R"({"world_size": 2, "ranks": {"0": "a.onnx", "1": "a.onnx", "2": "b.onnx"}})");
  expect_input_error([&] { load_plan(dir.path()); }, {"ranks '2'", "outside the world"});
  write_text(dir.file("plan.json"), R"({"world_size": 1, "ranks": {"0": "a.onnx"},
                                        "programs": []})");
  expect_input_error([&] { load_plan(dir.path()); }, {dir.file("plan.json"), "not both"});
}

TEST(PlanErrors, MetadataBindingForRankNotRunningTheProgram) {
  TempDir dir;
  onnx::ModelProto m = identity_model();
  set_metadata(m, "onnx_tv.bindings", R"([{"rank": 1, "value": "x", "spec": "x"}])");
  write_model(dir.file("a.onnx"), m);
  write_model(dir.file("b.onnx"), identity_model());
  write_text(dir.file("plan.json"), R"({"world_size": 2, "ranks": ["a.onnx", "b.onnx"]})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("a.onnx") + " metadata onnx_tv.bindings[0]", "rank 1",
                      "does not run"});
}

}  // namespace
}  // namespace onnx_tv::frontend::test
