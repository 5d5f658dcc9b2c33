// Calls into Rust from the shim: Rust errors arrive as rust::Error; messages starting
// "mate runtime error" (src/error.rs) become RuntimeError, every other one ValueError.
#pragma once
#include <c10/util/Exception.h>

#include <string>

#include "rust/cxx.h"

namespace mate {

template <class F>
auto call_rust(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const rust::Error& e) {
    const std::string msg = e.what();
    if (msg.rfind("mate runtime error", 0) == 0) TORCH_CHECK(false, msg);
    TORCH_CHECK_VALUE(false, msg);
  }
}

}  // namespace mate
