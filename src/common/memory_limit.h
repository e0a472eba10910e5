#pragma once
// A bound on the memory a proof may take. Symbolic values grow with an instance in ways the
// element count only estimates (deep models hold more per element), and a process the system
// kills gives the user nothing: past the limit the check stops with UNKNOWN instead, naming
// where it was. Every phase checks it (loading, binding, linking, shape reduction, running,
// comparing), so that --max-memory holds wherever the memory goes.
#include <cstddef>
#include <string>

namespace onnx_tv {

// Resident memory of this process and physical memory of the machine, in bytes (0 where the
// system does not say).
size_t resident_bytes();
size_t physical_bytes();

// Whether resident memory has passed `limit` bytes (0: no limit). The current figure, not the
// process's peak, so that a library caller's later checks are not held to an earlier one's
// memory. Reading it costs a few microseconds: it is read at most every kMemoryLookMicros, looking
// at the clock every kMemoryCheckEvery-th call (common/limits.h), so that once per node is cheap
// and little memory is taken between two looks.
bool memory_exceeded(size_t limit);

// What a check stopped past `limit` says, `where` naming the step.
std::string memory_limit_message(size_t limit, const std::string& where);

// Throws ResourceLimit naming `where`.
[[noreturn]] void memory_limit_reached(size_t limit, const std::string& where);

// Throws ResourceLimit naming `where` when memory_exceeded(limit).
void check_memory(size_t limit, const std::string& where);

// The same with `where()` built only when the limit is reached (a node's description).
template <class Where>
void check_memory_at(size_t limit, const Where& where) {
  if (memory_exceeded(limit)) memory_limit_reached(limit, where());
}

// The same, looking at once: for steps that each may take much (a file loaded).
void check_memory_now(size_t limit, const std::string& where);

}  // namespace onnx_tv
