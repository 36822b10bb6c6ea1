// privpost/core/numerical_events.hpp
// numerical_events: counters of every numerical repair a sampler made (jitter added to a covariance, a projection onto
// the valid set or the PSD cone, a bounded retry loop that gave up), and a gradient-based sampler's warnings
// (divergent trajectories, saturated tree depths). The rule: counted, never hidden, never a hang.
#pragma once

#include <cstdint>

namespace privpost {

/// Counts of numerical repairs, kept by each sampler and summed by the driver over chains.
struct numerical_events {
  std::uint64_t jitter = 0;          ///< a Cholesky factorisation needed diagonal jitter
  std::uint64_t projections = 0;     ///< a draw was projected onto the valid set (retries exhausted)
  std::uint64_t rejected_draws = 0;  ///< draws outside the valid set that were retried
  std::uint64_t psd_repairs = 0;     ///< a matrix was projected onto the PSD cone (eigenvalue clipping)
  // Gradient-based samplers (samplers/nuts.hpp), counted after warm-up like Stan's diagnostics:
  std::uint64_t divergences = 0;            ///< transitions whose trajectory diverged (energy error beyond the limit)
  std::uint64_t treedepth_saturations = 0;  ///< transitions that stopped at the maximum tree depth, not at a U-turn
  std::uint64_t nonfinite_density = 0;      ///< leapfrog steps that reached a point with a non-finite log density
  // Iterative estimators (samplers/cgm, inference/fit.hpp):
  std::uint64_t message_passing_nonconverged = 0;  ///< an approximate inference call stopped at its sweep cap
  std::uint64_t inner_solver_nonconverged = 0;     ///< an inner solve (E-step, M-step) stopped at its iteration cap
  std::uint64_t log_floors = 0;                    ///< a zero moment was floored before its log was taken

  /// Adds o's counts to these (merging the events of several chains or runs).
  numerical_events& operator+=(const numerical_events& o) {
    jitter += o.jitter;
    projections += o.projections;
    rejected_draws += o.rejected_draws;
    psd_repairs += o.psd_repairs;
    divergences += o.divergences;
    treedepth_saturations += o.treedepth_saturations;
    nonfinite_density += o.nonfinite_density;
    message_passing_nonconverged += o.message_passing_nonconverged;
    inner_solver_nonconverged += o.inner_solver_nonconverged;
    log_floors += o.log_floors;
    return *this;
  }
  /// Equal when every count is equal.
  friend bool operator==(const numerical_events&, const numerical_events&) = default;
};

}  // namespace privpost
