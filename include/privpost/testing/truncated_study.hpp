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
#include "privpost/families/family_model.hpp"
#include "privpost/families/truncation.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/mechanisms/ssp.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/sampler_policy.hpp"
#include "privpost/testing/family_study.hpp"

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

/// One simulated trial of a truncated release: the truth, the untruncated and centre statistics, and the releases.
template <exponential_family F>
struct truncated_trial {
  /// The true parameter vector.
  Eigen::VectorXd truth;
  statistic_t<F> full;     ///< the untruncated statistic (private)
  Eigen::VectorXd z;       ///< the release of the centre statistic (records in [a, b]; the others dropped)
  Eigen::VectorXd z_full;  ///< a release of the untruncated statistic at the same noise scale (NOT private: the
                           ///< dissertation's "cheating" naive only)
  /// @{
  /// The number of records and the truncation bounds [a, b].
  double n = 0.0, a = 0.0, b = 0.0;
  /// @}
};

/// Calibration trials for a truncated release. make_mechanism(l1, l2) builds the mechanism from the bounded
/// statistic's sensitivities. Standard methods: gibbs (gibbs_ss_truncated), naive (the dissertation's "cheating" naive:
/// the conjugate update on a noisy release of the untruncated statistic with the same noise scale, NOT private),
/// nonprivate, records (record_gibbs with the drop rule; a whole n up to 1e7); any other is one more named_method.
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
requires truncatable_family<typename Prior::family> && record_generating_family<typename Prior::family> &&
    generic_statistic_family<typename Prior::family>
class truncated_family_study : public study_methods<truncated_trial<typename Prior::family>> {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The bounded statistic of the truncated release.
  using statistic_type = bounded_statistic<1, record_statistic<family>>;
  /// The trial type.
  using trial_type = truncated_trial<family>;

  /// The study with bounds from prior_predictive_bounds(prior, truncation_q), the drop rule, and make_mechanism's mechanism;
  /// std::invalid_argument on bad settings (collapsed_moves must be 0).
  template <mechanism_factory MakeMechanism>
  truncated_family_study(const Prior& prior, double truncation_q, MakeMechanism make_mechanism, study_settings settings)
      : study_methods<trial_type>("truncated_family_study"),
        prior_(prior),
        bounds_(prior_predictive_bounds(prior, truncation_q)),
        statistic_(record_statistic<family>{}, {interval(bounds_.first, bounds_.second)}, out_of_bounds::drop),
        mechanism_(make_mechanism(statistic_.l1_sensitivity(), statistic_.l2_sensitivity())),
        settings_(std::move(settings)) {
    detail::check_study_settings("truncated_family_study", settings_, {.collapsed = false});
    this->set_methods(select_methods(standard_methods(), settings_.methods, "truncated_family_study"));
  }

  /// Lower truncation bound a.
  double lower() const noexcept { return bounds_.first; }
  /// Upper truncation bound b.
  double upper() const noexcept { return bounds_.second; }
  /// The bounded statistic.
  const statistic_type& statistic() const noexcept { return statistic_; }
  /// The release mechanism.
  const Mechanism& mechanism() const noexcept { return mechanism_; }
  /// The study's settings.
  const study_settings& settings() const noexcept { return settings_; }

  /// The standard methods of the class comment (gibbs, naive, nonprivate, records).
  std::vector<named_method<trial_type>> standard_methods() const {
    const Prior prior = prior_;
    const Mechanism mechanism = mechanism_;
    const study_settings st = settings_;
    // The release dropped every record outside [a, b]: gibbs_ss_truncated, or the records latent with that rule (exact,
    // O(n) a sweep), built as the tools and a library user build them (visit_sampler).
    auto chain_of = [=](sampler_kind kind) {
      return [=](const trial_type& t, std::mt19937_64& g) {
        return visit_sampler(kind, prior, mechanism, t.z, t.n, {.dropped_outside = interval(t.a, t.b)},
                             [&](auto make) { return single_chain(make, st.burnin, st.draws, g, st.thin); });
      };
    };
    return {{"gibbs", chain_of(sampler_kind::gibbs)},
            {"naive",
             [=](const trial_type& t, std::mt19937_64& g) {
               return single_chain([&](auto& cg) { return conjugate_sampler(prior, t.z_full, t.n, cg); }, 0, st.draws, g);
             }},
            {"nonprivate",
             [=](const trial_type& t, std::mt19937_64& g) {
               return single_chain([&](auto& cg) { return conjugate_sampler(prior, t.full, t.n, cg); }, 0, st.draws, g);
             }},
            {"records", chain_of(sampler_kind::records)}};
  }

  /// One simulated trial.
  trial_type simulate(std::mt19937_64& g) const {
    const auto theta = prior_.draw(g);
    const auto n_records = static_cast<std::int64_t>(settings_.n);
    trial_type t;
    t.full = statistic_t<family>::Zero();
    Eigen::VectorXd centre = Eigen::VectorXd::Zero(family::dimension);
    for (std::int64_t i = 0; i < n_records; ++i) {
      const double x = static_cast<double>(family::draw_record(theta, g));
      t.full += family::statistic(x);
      centre += statistic_.contribution({x});
    }
    t.z = mechanism_.release(centre, g);
    const Eigen::VectorXd full_dynamic = t.full;
    t.z_full = mechanism_.release(full_dynamic, g);
    t.truth = family_parameter_vector<family>(theta);
    t.n = settings_.n;
    t.a = bounds_.first;
    t.b = bounds_.second;
    return t;
  }

  /// One trial: simulate, then every method's draws.
  std::vector<method_draws> trial(std::mt19937_64& g) const { return this->run_on(simulate(g), g); }

 private:
  Prior prior_;
  std::pair<double, double> bounds_;
  statistic_type statistic_;
  Mechanism mechanism_;
  study_settings settings_;
};

}  // namespace privpost
