// privpost/testing/truncated_study.hpp
// truncated_family_study: calibration trials for an unbounded univariate family released after dropping records outside
// declared bounds. The bounds are the central 1 - q interval of the prior predictive distribution of one record, fixed for
// the whole study (taking them from each trial's true parameter, as the dissertation did, leaks the parameter).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/diagnostics/sample_quantile.hpp"
#include "privpost/families/truncation.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/testing/family_study.hpp"
#include "privpost/mechanisms/ssp.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/samplers/conjugate.hpp"

namespace privpost {

/// The central 1 - q interval of the prior predictive distribution of one record, from `draws` Monte Carlo draws with a
/// fixed seed (deterministic). Discrete families get whole-number bounds (floor, ceil). Throws unless 0 < q < 1.
template <conjugate_prior Prior>
std::pair<double, double> prior_predictive_bounds(const Prior& prior, double q, int draws = 200000, std::uint64_t seed = 12345) {
  using F = typename Prior::family;
  if (!(q > 0.0 && q < 1.0)) throw_invalid("prior_predictive_bounds", "q", q, "a number in (0, 1)");
  std::mt19937_64 g(seed);
  Eigen::VectorXd x(draws);
  for (int i = 0; i < draws; ++i) x(i) = static_cast<double>(F::draw_record(prior.draw(g), g));
  double a = sample_quantile(x, 0.5 * q), b = sample_quantile(x, 1.0 - 0.5 * q);
  if constexpr (F::discrete) {
    a = std::floor(a);
    b = std::ceil(b);
  }
  if (!(a < b)) throw_domain("prior_predictive_bounds", "upper bound", b, "a bound above the lower bound (increase q)");
  return {a, b};
}

/// Calibration trials for a truncated release. make_mechanism(l1, l2) builds the mechanism from the bounded
/// statistic's sensitivities. Methods: gibbs (gibbs_ss_truncated), naive (the dissertation's "cheating" naive: the
/// conjugate update on a noisy release of the untruncated statistic with the same noise scale, NOT private),
/// nonprivate.
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
  requires truncatable_family<typename Prior::family>
class truncated_family_study {
 public:
  using family = typename Prior::family;
  using statistic_type = bounded_statistic<1, record_statistic<family>>;

  template <class MakeMechanism>
  truncated_family_study(const Prior& prior, double truncation_q, MakeMechanism make_mechanism, study_settings settings)
      : prior_(prior),
        bounds_(prior_predictive_bounds(prior, truncation_q)),
        statistic_(record_statistic<family>{}, {interval(bounds_.first, bounds_.second)}, out_of_bounds::drop),
        mechanism_(make_mechanism(statistic_.l1_sensitivity(), statistic_.l2_sensitivity())),
        settings_(std::move(settings)) {
    detail::check_study_settings("truncated_family_study", settings_, false);
  }

  double lower() const noexcept { return bounds_.first; }
  double upper() const noexcept { return bounds_.second; }
  const statistic_type& statistic() const noexcept { return statistic_; }
  const Mechanism& mechanism() const noexcept { return mechanism_; }

  template <random_engine G>
  std::vector<method_draws> trial(G& g) const {
    const auto theta = prior_.draw(g);
    const auto n_records = static_cast<std::int64_t>(settings_.n);
    statistic_t<family> full = statistic_t<family>::Zero();
    Eigen::VectorXd centre = Eigen::VectorXd::Zero(family::dimension);
    for (std::int64_t i = 0; i < n_records; ++i) {
      const double x = static_cast<double>(family::draw_record(theta, g));
      full += family::statistic(x);
      centre += statistic_.contribution({x});
    }
    const Eigen::VectorXd z = mechanism_.release(centre, g);
    const Eigen::VectorXd full_dynamic = full;
    const Eigen::VectorXd z_full = mechanism_.release(full_dynamic, g);  // for the "cheating" naive only
    const Eigen::VectorXd truth = family_parameter_vector<family>(theta);
    const double n = settings_.n, a = bounds_.first, b = bounds_.second;
    std::vector<method_draws> out;
    for (const auto& m : settings_.methods) {
      method_draws r{m, truth, {}, 0.0};
      if (m == "gibbs") {
        r.draws = timed([&] {
          return detail::single_chain([&](auto& cg) { return gibbs_ss_truncated(prior_, mechanism_, z, n, a, b, cg); },
                                      settings_.burnin, settings_.draws, g, settings_.thin);
        }, r.seconds);
      } else if (m == "naive") {
        r.draws = timed([&] { return detail::single_chain([&](auto& cg) { return conjugate_sampler(prior_, z_full, n, cg); }, 0,
                                                          settings_.draws, g); }, r.seconds);
      } else if (m == "nonprivate") {
        r.draws = timed([&] { return detail::single_chain([&](auto& cg) { return conjugate_sampler(prior_, full, n, cg); }, 0,
                                                          settings_.draws, g); }, r.seconds);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  Prior prior_;
  std::pair<double, double> bounds_;
  statistic_type statistic_;
  Mechanism mechanism_;
  study_settings settings_;
};

}  // namespace privpost
