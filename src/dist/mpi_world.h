#pragma once
// Several processes proving one check: `mpirun -n N onnx-tv check ...` (docs/distributed.md).
// MPI starts only where a launcher (mpirun, srun) started this process; a plain
// `onnx-tv check` never touches it. The processes share out the instances of each grid
// (check::CheckOptions::Spread) and exchange what they proved, so that all decide alike; at the
// end every process reports the same result and exits with the same code.
//
// Every exchange is two collectives: first each process says what it brings (outcomes, or its
// final result), then, when all bring the same kind, the bytes. A process that leaves the
// check early (its own memory limit, an internal error) brings its final result while the
// others bring outcomes: they then stop too, saying another process stopped, and the result
// reported is the first that was not cut short this way. No process waits forever on one that
// has left, and the collectives stay matched.
#include <string>
#include <vector>

namespace onnx_tv::dist {

class MpiWorld {
 public:
  MpiWorld();  // MPI_Init when launched by mpirun or srun, else a world of one process
  ~MpiWorld();  // waits for every process (process 0 has printed the report), MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int process() const { return process_; }
  int processes() const { return processes_; }
  int processes_here() const { return processes_here_; }  // on this machine, this one included

  // Every process's bytes, in process order. Throws Unsupported when another process has
  // left the check (see above); cut_short() is then true.
  std::vector<std::string> exchange(const std::string& mine);
  bool cut_short() const { return cut_short_; }

  // Called once by every process after its check, whatever happened to it: returns the final
  // bytes of the first process not cut short (the same at every process).
  std::string finish(const std::string& mine);

 private:
  enum Kind : long long { kOutcomes = 0, kFinal = 1 };
  // One round: every process's kind; the bytes too when all kinds agree.
  bool round(Kind kind, const std::string& mine, std::vector<long long>& kinds,
             std::vector<std::string>& all);

  bool started_ = false;
  bool cut_short_ = false;
  int process_ = 0;
  int processes_ = 1;
  int processes_here_ = 1;
};

}  // namespace onnx_tv::dist
