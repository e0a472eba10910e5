#include "harness.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "common/errors.h"

namespace onnx_tv::fuzz {

void crash(const char* what) {
  std::fprintf(stderr, "onnx-tv fuzz: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

void expect_clean(const std::function<void()>& f) {
  try {
    f();
  } catch (const InternalError& e) {
    crash(e.what());
  } catch (const InputError&) {
  } catch (const Unsupported&) {
  } catch (const std::bad_alloc&) {
    crash("std::bad_alloc: an allocation the input's sizes should have prevented");
  } catch (const std::exception& e) {
    crash(e.what());
  }
}

}  // namespace onnx_tv::fuzz
