#include "run_cli.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace onnx_tv::e2e {

CliRun run_cli(const std::string& args) { return run_command(binary() + " " + args); }

std::string binary() { return ONNX_TV_BINARY; }

CliRun run_command(const std::string& command) {
  CliRun r;
  std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::filesystem::path source_dir() { return ONNX_TV_SOURCE_DIR; }

std::filesystem::path fresh_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("onnx_tv_e2e_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

CliRun check_model(const std::string& folder, const std::string& plan, const std::string& mode) {
  const std::filesystem::path dir = source_dir() / "models" / folder;
  return run_cli("check " + (dir / "spec.onnx").string() + " " + (dir / plan).string() +
                 " --no-progress" + mode);
}

bool generate_zoo(const std::string& args, const std::filesystem::path& out) {
  const std::string cmd = "/usr/bin/python3 " + (source_dir() / "tools/zoo/generate.py").string() +
                          " " + args + " --out " + out.string() + " > " +
                          (out / "generate.log").string() + " 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace onnx_tv::e2e
