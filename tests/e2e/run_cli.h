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

// A shell command (one that starts the binary some other way: mpirun); binary() is its path.
CliRun run_command(const std::string& command);
std::string binary();

// `onnx-tv check` of the model folder models/<folder> (its spec.onnx) against its plan
// <folder>/<plan>, without the progress bar; `mode` adds options (" --no-reduce").
CliRun check_model(const std::string& folder, const std::string& plan, const std::string& mode = "");

std::filesystem::path source_dir();
std::filesystem::path fresh_dir(const std::string& name);  // an empty temporary folder

// Runs tools/zoo/generate.py ARGS --out OUT (its output in OUT/generate.log); true when it
// succeeded.
bool generate_zoo(const std::string& args, const std::filesystem::path& out);

}  // namespace onnx_tv::e2e
