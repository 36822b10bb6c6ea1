// privpost/core/progress.hpp
// The one progress idiom of the drivers (infer, fit, run_calibration, the studies): a progress argument is either a
// callable or a null function pointer (the default, no reports), so callers may pass nullptr for "silent".
#pragma once

#include <type_traits>
#include <utility>

namespace privpost::detail {

/// False only for a null function pointer: whether a driver should report to `progress` at all.
template <class Progress>
constexpr bool wants_progress(const Progress& progress) noexcept {
  if constexpr (std::is_pointer_v<Progress>) {
    return progress != nullptr;
  } else {
    return true;
  }
}

/// Calls progress(args...) unless it is a null function pointer.
template <class Progress, class... Args>
void report_progress(Progress& progress, Args&&... args) {
  if (wants_progress(progress)) progress(std::forward<Args>(args)...);
}

}  // namespace privpost::detail
