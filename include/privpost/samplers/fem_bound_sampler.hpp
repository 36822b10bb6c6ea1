// privpost/samplers/fem_bound_sampler.hpp
// fem_bound_sampler: the approximate posterior Williams & McSherry (2010) ran for a release of the factored exponential
// mechanism, random-walk Metropolis on a scalar theta with the lower bound L(z | theta) of mechanisms/fem_bounds.hpp as
// its likelihood. A parameter-only chain on an approximate target, kept as the paper's baseline: the exact posterior
// given such a release is the record-level frame's (samplers/record_fem.hpp).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/mechanisms/factored_exponential.hpp"
#include "privpost/mechanisms/fem_bounds.hpp"

namespace privpost {

/// W&M's approximate posterior of a scalar theta in an open interval (lo, hi) given a release z: random-walk
/// Metropolis on t = logit((theta - lo) / (hi - lo)) with a normal step of sd `step`, target log_prior(theta) +
/// log L(z | theta) + the Jacobian log((theta - lo)(hi - theta)). law(theta, f) = E_theta[f(x)] for one record.
/// Models privpost::sampler (parameter: theta). It samples the lower-bound posterior, an approximation; the tests
/// measure its distance to the exact posterior.
template <class Record, class Score, class LogPrior, class Law>
class fem_bound_sampler {
 public:
  /// std::invalid_argument for a release outside the candidates, n not finite and >= 1, a parameter interval that is
  /// not finite with lo < hi, a step not finite and > 0, or a start outside (lo, hi); std::domain_error if the target
  /// is not finite at the start.
  template <random_engine G>
  fem_bound_sampler(factored_exponential_mechanism<Record, Score> mechanism, std::size_t z, double n, LogPrior log_prior, Law law,
                    interval parameter_range, double step, double start, G&)
      : mechanism_(std::move(mechanism)),
        z_(z),
        n_(n),
        log_prior_(std::move(log_prior)),
        law_(std::move(law)),
        range_(parameter_range),
        step_(step) {
    constexpr const char* who = "fem_bound_sampler";
    mechanism_.check_release(who, z);
    if (!(std::isfinite(n) && n >= 1.0)) throw_invalid(who, "n", n, "a finite number >= 1");
    if (!(std::isfinite(range_.lo) && std::isfinite(range_.hi) && range_.lo < range_.hi))
      throw_invalid(who, "parameter range width", range_.hi - range_.lo, "a finite interval with lo < hi");
    check_positive_finite(who, "step", step);
    if (!(start > range_.lo && start < range_.hi)) throw_invalid(who, "start", start, "a value inside the open parameter range");
    theta_ = start;
    t_ = std::log((start - range_.lo) / (range_.hi - start));
    log_target_ = log_target(theta_);
    if (!std::isfinite(log_target_))
      throw std::domain_error(std::string(who) + ": the target at the start is " + std::to_string(log_target_) +
                              "; accepted: a finite log density");
  }

  /// One Metropolis step on t.
  template <random_engine G>
  void step(G& g) {
    const double t = t_ + step_ * draw_normal(g);
    const double theta = range_.lo + (range_.hi - range_.lo) / (1.0 + std::exp(-t));
    ++proposed_;
    if (!(theta > range_.lo && theta < range_.hi)) return;  // rounded onto an end: zero prior mass
    const double lt = log_target(theta);
    if (!(std::log(draw_uniform(g)) < lt - log_target_)) return;
    ++accepted_;
    t_ = t;
    theta_ = theta;
    log_target_ = lt;
  }

  /// The current theta as a vector of one.
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, theta_); }
  /// Accepted / proposed steps (1 before any).
  double acceptance() const noexcept {
    return proposed_ == 0 ? 1.0 : static_cast<double>(accepted_) / static_cast<double>(proposed_);
  }
  /// Nothing is repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  double log_target(double theta) const {
    const double lower = fem_log_marginal_bounds(mechanism_, z_, n_, [&](auto&& f) { return law_(theta, f); }).log_lower;
    return log_prior_(theta) + lower + std::log((theta - range_.lo) * (range_.hi - theta));
  }

  factored_exponential_mechanism<Record, Score> mechanism_;
  std::size_t z_;
  double n_;
  LogPrior log_prior_;
  Law law_;
  interval range_;
  double step_;
  double theta_ = 0.0, t_ = 0.0, log_target_ = 0.0;
  std::uint64_t proposed_ = 0, accepted_ = 0;
  numerical_events events_;
};

}  // namespace privpost
