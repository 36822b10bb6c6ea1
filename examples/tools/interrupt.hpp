// Ctrl-C in the command-line tools: the first SIGINT sets a flag that the library's drivers poll
// (inference_options::stop before each sweep, calibration_options::stop before each trial), so a long run stops cleanly
// and the tool writes what it has, says so, and exits with status 130 (128 + SIGINT, the shell's convention). A second
// Ctrl-C ends the process at once (the default action is restored by the first).
#pragma once

#include <atomic>
#include <csignal>

namespace privpost::tools {

/// Exit status of a run stopped by Ctrl-C.
inline constexpr int interrupted_exit_status = 130;

/// The flag the first Ctrl-C sets (lock-free, so a signal handler may set it).
inline std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  static_assert(std::atomic<bool>::is_always_lock_free);
  return flag;
}

/// Whether Ctrl-C was pressed since install_interrupt_handler().
inline bool interrupt_requested() { return interrupt_flag().load(std::memory_order_relaxed); }

extern "C" inline void privpost_tools_on_sigint(int) {
  interrupt_flag().store(true, std::memory_order_relaxed);
  std::signal(SIGINT, SIG_DFL);
}

/// Routes the first SIGINT to interrupt_flag().
inline void install_interrupt_handler() {
  (void)interrupt_flag();  // the function-local static exists before any signal can arrive
  std::signal(SIGINT, privpost_tools_on_sigint);
}

}  // namespace privpost::tools
