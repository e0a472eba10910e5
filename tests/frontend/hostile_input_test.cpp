// Inputs made to break the reader rather than to describe a plan: files that are not regular
// files or are too large, JSON nested without end, sizes and counts past what any plan holds,
// names that are not UTF-8. Each must be an InputError (or Unsupported) naming the file and the
// value, found before anything large is allocated, never a crash, a hang or a wrapped number.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <limits>

#include "common/printable.h"
#include "frontend/model_loader.h"
#include "frontend/plan.h"
#include "ir/comm_parse.h"
#include "test_util.h"

namespace onnx_tv::frontend::test {
namespace {

void write_rank_files(const TempDir& dir, int world) {
  for (int r = 0; r < world; ++r) {
    write_model(dir.file("rank" + std::to_string(r) + ".onnx"), identity_model());
  }
}

bool valid_utf8_and_printable(const std::string& s) {
  return printable(s) == s;
}

TEST(HostileFiles, OnlyRegularFilesAreRead) {
  TempDir dir;
  // /dev/zero never ends and a FIFO blocks until someone writes: both used to be read.
  ASSERT_EQ(symlink("/dev/zero", dir.file("zero.onnx").c_str()), 0);
  expect_input_error([&] { load_model(dir.file("zero.onnx")); },
                     {dir.file("zero.onnx"), "character device", "expected an ONNX model"});
  ASSERT_EQ(mkfifo(dir.file("fifo.onnx").c_str(), 0600), 0);
  expect_input_error([&] { load_model(dir.file("fifo.onnx")); }, {dir.file("fifo.onnx"), "FIFO"});
  std::filesystem::create_directory(dir.file("folder.onnx"));
  expect_input_error([&] { load_model(dir.file("folder.onnx")); },
                     {dir.file("folder.onnx"), "is a folder"});

  // The same for plan.json and for a rank program named by it.
  write_rank_files(dir, 1);
  ASSERT_EQ(mkfifo(dir.file("plan.json").c_str(), 0600), 0);
  expect_input_error([&] { load_plan(dir.path()); }, {dir.file("plan.json"), "FIFO"});
  std::filesystem::remove(dir.file("plan.json"));
  write_text(dir.file("plan.json"), R"({"world_size": 1, "ranks": {"0": "zero.onnx"}})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {"rank 0", dir.file("zero.onnx"), "character device"});
}

TEST(HostileFiles, ExternalDataMustBeARegularFileOfTheRightSize) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.file("w.bin").c_str(), 0600), 0);
  onnx::ModelProto m = identity_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  write_model(dir.file("m.onnx"), m);
  expect_input_error([&] { load_model(dir.file("m.onnx")); },
                     {dir.file("m.onnx"), "initializer 'w'", "FIFO"});
  // A regular file of 1 GiB (sparse: no disk used) for a tensor of 8 bytes: refused before the
  // gigabyte is read.
  std::filesystem::remove(dir.file("w.bin"));
  { std::ofstream(dir.file("w.bin")); }
  std::filesystem::resize_file(dir.file("w.bin"), uint64_t(1) << 30);
  expect_input_error([&] { load_model(dir.file("m.onnx")); },
                     {"initializer 'w'", "1073741824 bytes", "expected 8"});
}

TEST(HostileFiles, ModelsLargerThanProtobufReadsAreRefusedUnread) {
  TempDir dir;
  { std::ofstream(dir.file("big.onnx")); }
  std::filesystem::resize_file(dir.file("big.onnx"), uint64_t(3) << 30);  // sparse
  const auto start = std::chrono::steady_clock::now();
  expect_input_error([&] { load_model(dir.file("big.onnx")); },
                     {dir.file("big.onnx"), "3221225472 bytes", "external data"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(HostileJson, NestingIsBounded) {
  TempDir dir;
  write_rank_files(dir, 1);
  // 100,000 nested lists overflowed the stack when the message printed the value.
  write_text(dir.file("plan.json"), "{\"world_size\": " + std::string(100000, '[') +
                                        std::string(100000, ']') + "}");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json"), "nest more than 64 levels"});
  // Brackets inside strings do not count.
  write_text(dir.file("plan.json"),
             "{\"world_size\": 1, \"format\": \"" + std::string(1000, '[') + "\"}");
  expect_input_error([&] { load_plan(dir.path()); }, {"format", "is not a known format"});
  // Bindings in a model's metadata are bounded the same way.
  std::filesystem::remove(dir.file("plan.json"));
  onnx::ModelProto m = identity_model();
  set_metadata(m, "onnx_tv.bindings", std::string(100000, '[') + std::string(100000, ']'));
  write_model(dir.file("rank0.onnx"), m);
  expect_input_error([&] { load_plan(dir.path()); },
                     {"rank0.onnx metadata onnx_tv.bindings", "nest more than 64 levels"});
}

TEST(HostileJson, IntegersOutsideInt64AreErrors) {
  TempDir dir;
  write_rank_files(dir, 1);
  write_text(dir.file("plan.json"), R"({"world_size": 18446744073709551615})");
  expect_input_error([&] { load_plan(dir.path()); }, {"world_size", "too large"});
  write_text(dir.file("plan.json"), R"({"world_size": 1e300})");
  expect_input_error([&] { load_plan(dir.path()); }, {"world_size", "expected an integer"});
  // Past the range of a double the JSON parser throws out_of_range, not parse_error (fuzz:
  // fuzz/regressions/plan_json/number_overflow.json): exit 4 before.
  write_text(dir.file("plan.json"), R"({"world_size": 1e400})");
  expect_input_error([&] { load_plan(dir.path()); }, {"plan.json", "not valid JSON", "1e400"});
}

TEST(HostileCounts, WorldSizeIsCheckedBeforeAnythingIsAllocated) {
  TempDir dir;
  write_rank_files(dir, 2);
  // 2^31 ranks allocated 6 GB of tables and ended out of memory.
  write_text(dir.file("plan.json"), R"({"world_size": 2147483648})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("plan.json"), "world_size", "2147483648", "at most 1048576"});
  // Below the bound, the folder and the manifest must back the count.
  const auto start = std::chrono::steady_clock::now();
  write_text(dir.file("plan.json"), R"({"world_size": 1048576})");
  expect_input_error([&] { load_plan(dir.path()); },
                     {dir.file("rank2.onnx"), "no such file", "world_size 1048576"});
  write_text(dir.file("plan.json"),
             R"({"world_size": 1048576, "ranks": {"0": "rank0.onnx", "1": "rank1.onnx"}})");
  expect_input_error([&] { load_plan(dir.path()); }, {"ranks", "rank 2 has no program"});
  write_text(dir.file("plan.json"),
             R"({"world_size": 1048576, "programs": [{"file": "rank0.onnx", "ranks": [0, 1]}]})");
  expect_input_error([&] { load_plan(dir.path()); }, {"programs", "rank 2 runs no program"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(HostileCounts, MeshShapeProductDoesNotWrap) {
  TempDir dir;
  write_rank_files(dir, 2);
  // 2^32 * 2^32 * 2 wraps to 0 in 64 bits, and 2^62 * 4 to 0 as well.
  write_text(dir.file("plan.json"), R"({"world_size": 2,
      "mesh": {"axes": ["a", "b", "c"], "shape": [4294967296, 4294967296, 2]}})");
  expect_input_error([&] { load_plan(dir.path()); }, {"mesh", "more than 2^63", "world_size is 2"});
}

TEST(HostileCounts, PeerOffsetDoesNotWrap) {
  onnx::ModelProto m = make_model();
  import_domain(m, "onnx_tv");
  add_output(m, "y", {4});
  onnx::NodeProto* recv = add_node(m, "Recv", {}, {"y"}, "onnx_tv", "recv");
  set_string(recv, "peer_axis", "pp");
  set_int(recv, "peer_offset", std::numeric_limits<int64_t>::max());  // 1 + it wraps
  ir::Plan p;
  p.dir = "shards";
  p.world_size = 2;
  p.mesh = ir::Mesh{{"pp"}, {2}};
  p.programs.push_back(
      std::make_shared<const ir::Graph>(parse_model(m.SerializeAsString(), "shards/p.onnx")));
  p.rank_program = {0, 0};
  expect_input_error([&] { ir::parse_comm_op(p, 1, 0); },
                     {"shards/p.onnx", "recv", "peer_offset 9223372036854775807", "leaves the mesh"});
}

TEST(HostileCounts, DeclaredDimensionsAreSizes) {
  onnx::ModelProto m = identity_model({4});
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(0)->set_dim_value(-1);
  expect_input_error([&] { parse_model(m.SerializeAsString(), "neg.onnx"); },
                     {"neg.onnx", "value 'x'", "declared as -1"});
  onnx::ModelProto big = identity_model({4});
  auto* shape =
      big.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_value(int64_t(1) << 62);
  shape->add_dim()->set_dim_value(4);  // 2^64 elements: wraps to 0
  expect_input_error([&] { parse_model(big.SerializeAsString(), "big.onnx"); },
                     {"big.onnx", "value 'y'", "4611686018427387904", "more than 2^48"});
}

TEST(HostileCounts, StoredShapesAreBounded) {
  onnx::ModelProto m = identity_model();
  add_float_initializer(m, "w", {int64_t(1) << 62, 4}, {});  // 2^64 elements wrap to 0
  expect_input_error([&] { parse_model(m.SerializeAsString(), "w.onnx"); },
                     {"w.onnx", "initializer 'w'", "more than 2^48"});
  // A sparse tensor's dense size is not backed by data in the file.
  onnx::ModelProto s = identity_model();
  auto* sp = s.mutable_graph()->add_sparse_initializer();
  sp->add_dims(int64_t(1) << 40);
  sp->mutable_values()->set_name("sp");
  sp->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  sp->mutable_values()->add_dims(0);
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(0);
  try {
    parse_model(s.SerializeAsString(), "sp.onnx");
    ADD_FAILURE() << "a sparse tensor of 2^40 elements was made dense";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("sparse initializer 'sp'"), std::string::npos) << e.what();
  }
}

TEST(HostileCounts, InlinedFunctionsAreBounded) {
  // f0 calls f1 twice, f1 calls f2 twice, ... f29 is one Identity: 2^29 nodes once inlined,
  // from a file of a few kilobytes. They were all expanded, until memory ran out.
  onnx::ModelProto m = make_model();
  import_domain(m, "local");
  add_input(m, "x", {2});
  add_output(m, "y", {2});
  add_node(m, "f0", {"x"}, {"y"}, "local", "call");
  for (int i = 0; i < 30; ++i) {
    auto* f = m.add_functions();
    f->set_name("f" + std::to_string(i));
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    f->add_opset_import()->set_version(17);
    auto node = [&](const std::string& in, const std::string& out) {
      auto* n = f->add_node();
      n->set_op_type(i == 29 ? "Identity" : "f" + std::to_string(i + 1));
      n->set_domain(i == 29 ? "" : "local");
      n->add_input(in);
      n->add_output(out);
    };
    if (i == 29) {
      node("a", "b");
    } else {
      node("a", "t");
      node("t", "b");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    parse_model(m.SerializeAsString(), "bomb.onnx");
    ADD_FAILURE() << "2^29 nodes were inlined";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("bomb.onnx"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("more than 1000000 nodes"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(HostileNames, NamesThatAreNotUtf8AreEscapedInMessages) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  add_input(m, "x\xff", {1});
  add_output(m, "y", {1});
  add_node(m, "Relu", {"x\xff"}, {"y"}, "", "relu\xfe\x1b");
  try {
    parse_model(m.SerializeAsString(), "names\xc3.onnx");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(valid_utf8_and_printable(msg)) << msg;
    EXPECT_NE(msg.find("names\\xc3.onnx"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Relu node 'relu\\xfe\\x1b'"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace onnx_tv::frontend::test
