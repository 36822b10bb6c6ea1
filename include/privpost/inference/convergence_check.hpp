// privpost/inference/convergence_check.hpp
// Diagnostics that speak up: the thresholds of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021),
// R-hat <= 1.01 and bulk and tail ESS >= 100 per chain, plus a ceiling on numerical repairs per sweep, checked for
// every parameter; the problems are returned as plain-word warnings with advice, empty when there are none.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/inference/posterior.hpp"

namespace privpost {

/// Thresholds of the convergence check.
struct convergence_criteria {
  double max_rhat = 1.01;             ///< split rank-normalised R-hat (and its folded variant) at most this
  double min_ess_per_chain = 100.0;   ///< bulk and tail ESS at least this times the number of chains
  double max_repair_fraction = 0.01;  ///< numerical repairs (projections, jitter, PSD repairs) per sweep at most this
};

namespace detail {
inline void check_criteria(const char* who, const convergence_criteria& c) {
  if (!(c.max_rhat >= 1.0 && std::isfinite(c.max_rhat))) throw_invalid(who, "max_rhat", c.max_rhat, "a finite number >= 1");
  if (!(c.min_ess_per_chain >= 0.0 && std::isfinite(c.min_ess_per_chain)))
    throw_invalid(who, "min_ess_per_chain", c.min_ess_per_chain, "a finite number >= 0");
  if (!(c.max_repair_fraction >= 0.0 && c.max_repair_fraction <= 1.0))
    throw_invalid(who, "max_repair_fraction", c.max_repair_fraction, "a number in [0, 1]");
}
inline std::string format_number(const char* format, double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, x);
  return buffer;
}
}  // namespace detail

/// Plain-word warnings for every parameter whose R-hat exceeds criteria.max_rhat or whose bulk or tail ESS is below
/// criteria.min_ess_per_chain per chain (or whose draws are all equal, where neither is defined). `names` labels the
/// coordinates (default theta[j]). Empty when the posterior passes.
inline std::vector<std::string> convergence_warnings(const posterior& p, const convergence_criteria& criteria = {},
                                                     const std::vector<std::string>& names = {}) {
  detail::check_criteria("convergence_warnings", criteria);
  if (!names.empty())
    check_size_match("convergence_warnings", "names", static_cast<Eigen::Index>(names.size()), "parameters", p.dimension());
  std::vector<std::string> out;
  const double min_ess = criteria.min_ess_per_chain * static_cast<double>(p.num_chains());
  for (Eigen::Index j = 0; j < p.dimension(); ++j) {
    const std::string name = names.empty() ? "theta[" + std::to_string(j) + "]" : names[static_cast<std::size_t>(j)];
    const double rhat = p.rhat(j), bulk = p.ess_bulk(j), tail = p.ess_tail(j);
    if (!std::isfinite(rhat) || !std::isfinite(bulk) || !std::isfinite(tail)) {
      out.push_back(name +
                    ": every draw is the same value, so R-hat and ESS are undefined; the chain did not move (check the "
                    "release and the prior)");
      continue;
    }
    if (rhat > criteria.max_rhat)
      out.push_back(name + ": R-hat " + detail::format_number("%.3f", rhat) + " is above " +
                    detail::format_number("%.3g", criteria.max_rhat) +
                    ": the chains disagree, so the posterior summary is not reliable; run longer chains (more --draws or --thin, "
                    "or --target-ess)");
    if (bulk < min_ess || tail < min_ess)
      out.push_back(name + ": effective sample size bulk " + detail::format_number("%.0f", bulk) + ", tail " +
                    detail::format_number("%.0f", tail) + " is below " + detail::format_number("%.0f", min_ess) + " (" +
                    detail::format_number("%.0f", criteria.min_ess_per_chain) +
                    " per chain): the draws are strongly autocorrelated and the quantiles are imprecise; thin more or draw more");
  }
  return out;
}

/// The same, plus a warning when the numerical repairs exceed criteria.max_repair_fraction of the sweeps run
/// (`sweeps`: over all chains, burn-in included).
inline std::vector<std::string> convergence_warnings(const posterior& p, const numerical_events& events, std::int64_t sweeps,
                                                     const convergence_criteria& criteria = {},
                                                     const std::vector<std::string>& names = {}) {
  if (sweeps < 1) throw_invalid("convergence_warnings", "sweeps", static_cast<double>(sweeps), "an integer >= 1");
  std::vector<std::string> out = convergence_warnings(p, criteria, names);
  const double repairs = static_cast<double>(events.projections + events.jitter + events.psd_repairs);
  const double fraction = repairs / static_cast<double>(sweeps);
  if (fraction > criteria.max_repair_fraction)
    out.push_back("numerical repairs in " + detail::format_number("%.1f", 100.0 * fraction) + "% of sweeps (projections " +
                  std::to_string(events.projections) + ", jitter " + std::to_string(events.jitter) + ", PSD repairs " +
                  std::to_string(events.psd_repairs) +
                  "): the CLT model of the latent statistics is strained, e.g. by a release "
                  "far outside what the prior and n allow; check the release and the prior");
  return out;
}

/// True when convergence_warnings(p, criteria) is empty.
inline bool converged(const posterior& p, const convergence_criteria& criteria = {}) {
  return convergence_warnings(p, criteria).empty();
}

}  // namespace privpost
