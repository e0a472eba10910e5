#pragma once
// A bound on the memory a proof may take. Symbolic values grow with an instance in ways the
// element count only estimates (deep models hold more per element), and a process the system
// kills gives the user nothing: past the limit the check stops with UNKNOWN instead, naming
// where it was.
#include <cstddef>
#include <string>

namespace onnx_tv {

// Resident memory of this process and physical memory of the machine, in bytes (0 where the
// system does not say).
size_t resident_bytes();
size_t physical_bytes();

// Throws ResourceLimit naming `where` when resident memory exceeds `limit` bytes (0: no
// limit). Cheap enough to call once per node: it reads the system's figure only every 256
// calls. Every phase calls it (loading, linking, binding, shape reduction, running, comparing),
// so that --max-memory holds wherever the memory goes.
void check_memory(size_t limit, const std::string& where);

// The same, reading the figure at once: for steps that each may take much (a file loaded).
void check_memory_now(size_t limit, const std::string& where);

}  // namespace onnx_tv
