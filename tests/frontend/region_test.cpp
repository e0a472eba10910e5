// resolve_region: slices, DTensor-style placements and local slices against the spec shape,
// and the keys that tell partial sets apart.
#include "ir/plan.h"
#include "test_util.h"

namespace onnx_tv::frontend::test {
namespace {

using ir::Binding;
using ir::Mesh;
using ir::Placement;
using ir::Region;
using ir::resolve_region;
using ir::SliceEntry;

using Span = std::pair<int64_t, int64_t>;

Binding binding(int64_t rank, std::vector<SliceEntry> slice = {}) {
  Binding b;
  b.rank = rank;
  b.value = "v";
  b.spec = "w";
  b.origin = "shards/plan.json bindings[3]";
  if (!slice.empty()) b.slice = std::move(slice);
  return b;
}

Binding placed(int64_t rank, const std::vector<std::string>& placements) {
  Binding b = binding(rank);
  for (const auto& p : placements) {
    b.placements.push_back(Placement{});
    if (p.rfind("Shard", 0) == 0) {
      b.placements.back().kind = Placement::Kind::Shard;
      b.placements.back().dim = std::stoll(p.substr(6));
    } else if (p == "Partial") {
      b.placements.back().kind = Placement::Kind::Partial;
      b.partial = true;
    }
  }
  return b;
}

Mesh mesh_2x2() { return Mesh{{"dp", "tp"}, {2, 2}}; }

TEST(Region, WholeTensorAndSlices) {
  Region r = resolve_region(binding(0), std::nullopt, {4, 6});
  EXPECT_EQ(r.start, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r.end, (std::vector<int64_t>{4, 6}));
  EXPECT_FALSE(r.partial);
  r = resolve_region(binding(0, {std::nullopt, Span{2, 5}}), std::nullopt, {4, 6});
  EXPECT_EQ(r.start, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(r.end, (std::vector<int64_t>{4, 5}));
}

TEST(Region, ShardPlacementsFollowMeshCoordinates) {
  const Mesh m = mesh_2x2();
  // Rank 2 has coordinates (dp 1, tp 0).
  Region r = resolve_region(placed(2, {"Shard(0)", "Shard(1)"}), m, {8, 6});
  EXPECT_EQ(r.start, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(r.end, (std::vector<int64_t>{8, 3}));
  r = resolve_region(placed(3, {"Replicate", "Shard(-1)"}), m, {8, 6});
  EXPECT_EQ(r.start, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r.end, (std::vector<int64_t>{8, 6}));
  // Two axes on one dimension: dp is the coarser split, tp splits each dp chunk.
  std::vector<Span> got;
  for (int64_t rank = 0; rank < 4; ++rank) {
    Region q = resolve_region(placed(rank, {"Shard(0)", "Shard(0)"}), m, {8});
    got.emplace_back(q.start[0], q.end[0]);
  }
  EXPECT_EQ(got, (std::vector<Span>{{0, 2}, {2, 4}, {4, 6}, {6, 8}}));
}

TEST(Region, LocalSliceIsRelativeToTheRegion) {
  const Mesh m = mesh_2x2();
  Binding b = placed(2, {"Shard(0)", "Replicate"});
  b.local_slice = std::vector<SliceEntry>{Span{2, 4}, std::nullopt};
  Region r = resolve_region(b, m, {8, 3});
  EXPECT_EQ(r.start, (std::vector<int64_t>{6, 0}));
  EXPECT_EQ(r.end, (std::vector<int64_t>{8, 3}));
  Binding s = binding(0, {Span{10, 20}});
  s.local_slice = std::vector<SliceEntry>{Span{5, 10}};
  r = resolve_region(s, std::nullopt, {32});
  EXPECT_EQ(r.start, (std::vector<int64_t>{15}));
  EXPECT_EQ(r.end, (std::vector<int64_t>{20}));
  s.local_slice = std::vector<SliceEntry>{Span{5, 11}};
  expect_input_error([&] { resolve_region(s, std::nullopt, {32}); },
                     {"bindings[3]", "local_slice[0]", "[5, 11)", "out of range", "10"});
}

TEST(Region, PartialSetKeys) {
  const Mesh m = mesh_2x2();
  // Partial over tp: ranks 0 and 1 are one set, ranks 2 and 3 another.
  std::vector<Region> r;
  for (int64_t rank = 0; rank < 4; ++rank) {
    r.push_back(resolve_region(placed(rank, {"Replicate", "Partial"}), m, {4}));
    EXPECT_TRUE(r.back().partial);
  }
  EXPECT_EQ(r[0].set_key, r[1].set_key);
  EXPECT_EQ(r[2].set_key, r[3].set_key);
  EXPECT_NE(r[0].set_key, r[2].set_key);
  // Partial over dp instead: a different set from rank 0's tp set.
  Region dp0 = resolve_region(placed(0, {"Partial", "Replicate"}), m, {4});
  Region dp2 = resolve_region(placed(2, {"Partial", "Replicate"}), m, {4});
  EXPECT_EQ(dp0.set_key, dp2.set_key);
  EXPECT_NE(dp0.set_key, r[0].set_key);
  // Groups separate sets.
  Binding a = binding(0), b = binding(1), c = binding(1);
  a.partial = b.partial = c.partial = true;
  a.group = b.group = "first";
  c.group = "second";
  const Region ra = resolve_region(a, std::nullopt, {4});
  EXPECT_TRUE(ra.partial);
  EXPECT_EQ(ra.set_key, resolve_region(b, std::nullopt, {4}).set_key);
  EXPECT_NE(ra.set_key, resolve_region(c, std::nullopt, {4}).set_key);
  Binding g = placed(0, {"Replicate", "Partial"});
  g.group = "first";
  EXPECT_NE(resolve_region(g, m, {4}).set_key, r[0].set_key);
}

TEST(RegionErrors, SliceOutOfRange) {
  expect_input_error(
      [&] { resolve_region(binding(1, {std::nullopt, Span{256, 600}}), std::nullopt, {4, 512}); },
      {"shards/plan.json bindings[3]", "rank 1", "'v'", "'w'", "slice[1]", "[256, 600)",
       "out of range", "512"});
}

TEST(RegionErrors, SliceLengthMismatch) {
  expect_input_error([&] { resolve_region(binding(0, {Span{0, 2}}), std::nullopt, {4, 4}); },
                     {"bindings[3]", "slice has 1 entries", "2 dimensions", "[4, 4]"});
}

TEST(RegionErrors, ShardDoesNotDivide) {
  expect_input_error([&] { resolve_region(placed(0, {"Shard(1)", "Replicate"}), mesh_2x2(),
                                          {4, 5}); },
                     {"bindings[3]", "Shard(1)", "'dp'", "extent 5", "evenly"});
  expect_input_error([&] { resolve_region(placed(0, {"Shard(2)", "Replicate"}), mesh_2x2(),
                                          {4, 4}); },
                     {"bindings[3]", "Shard(2)", "2 dimensions"});
}

TEST(RegionErrors, PlacementsDoNotMatchTheMesh) {
  expect_input_error([&] { resolve_region(placed(0, {"Shard(0)"}), mesh_2x2(), {4}); },
                     {"bindings[3]", "1 placements", "2 axes"});
  expect_input_error([&] { resolve_region(placed(0, {"Shard(0)"}), std::nullopt, {4}); },
                     {"bindings[3]", "mesh"});
}

}  // namespace
}  // namespace onnx_tv::frontend::test
