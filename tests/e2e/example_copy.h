#pragma once
// The bundled example (models/examples/mlp_tp2) copied to a fresh folder, to be broken in one
// way by a test: its files, its plan.json and its models, read and written back.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_cli.h"

namespace onnx_tv::e2e {

struct ExampleCopy {
  std::filesystem::path dir;
  std::filesystem::path spec() const { return dir / "spec.onnx"; }
  std::filesystem::path shards() const { return dir / "shards"; }
  CliRun run(const std::string& extra = "") const {
    return run_cli("check " + spec().string() + " " + shards().string() + extra);
  }
  nlohmann::json plan() const {
    std::ifstream in(shards() / "plan.json");
    return nlohmann::json::parse(in);
  }
  void set_plan(const nlohmann::json& j) const { std::ofstream(shards() / "plan.json") << j.dump(1); }
  onnx::ModelProto model(const std::filesystem::path& p) const {
    onnx::ModelProto m;
    std::ifstream in(p, std::ios::binary);
    EXPECT_TRUE(m.ParseFromIstream(&in)) << p;
    return m;
  }
  void save(const onnx::ModelProto& m, const std::filesystem::path& p) const {
    std::ofstream out(p, std::ios::binary);
    m.SerializeToOstream(&out);
  }
};

// A fresh copy named `name` (under the tests' scratch folder).
inline ExampleCopy copy_example(const std::string& name) {
  ExampleCopy c{fresh_dir(name)};
  std::filesystem::copy(source_dir() / "models/examples/mlp_tp2/spec.onnx", c.spec());
  std::filesystem::copy(source_dir() / "models/examples/mlp_tp2/shards", c.shards());
  return c;
}

}  // namespace onnx_tv::e2e
