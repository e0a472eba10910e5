#pragma once
// Runs the onnx-tv binary as a user would and captures what it prints.
#include <filesystem>
#include <string>

namespace onnx_tv::e2e {

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

CliRun run_cli(const std::string& args);

std::filesystem::path source_dir();
std::filesystem::path fresh_dir(const std::string& name);  // an empty temporary folder

}  // namespace onnx_tv::e2e
