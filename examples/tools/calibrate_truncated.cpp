// privpost-calibrate, unbounded models with truncated release: exponential (Gamma(20, 20) prior on the rate), Poisson
// (Gamma(10, 2)), normal with known sd 1 (N(0, 1) prior on the mean), normal (NIG(0, 1, 10, 10)).
#include <stdexcept>
#include <string>

#include <privpost/families/exponential.hpp>
#include <privpost/families/normal.hpp>
#include <privpost/families/normal_known_variance.hpp>
#include <privpost/families/poisson.hpp>
#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/testing/truncated_study.hpp>

#include "calibrate.hpp"

namespace privpost::tools::calibrate {
namespace {
template <class Prior>
int run_truncated(const Prior& prior, const cli_options& o, const privpost::study_settings& settings) {
  if (!(o.truncation > 0.0 && o.truncation < 1.0))
    throw std::invalid_argument("--truncation is " + std::to_string(o.truncation) +
                                "; accepted: a number in (0, 1) for unbounded models");
  for (const auto& m : settings.methods)
    if (m == "ops") throw std::invalid_argument("--methods: ops is available for the binomial model only");
  const bool laplace = o.mechanism == "laplace";
  const privpost::truncated_family_study<Prior, tool_mechanism> study(
      prior, o.truncation,
      [&](double l1, double l2) {
        return laplace ? tool_mechanism(privpost::laplace_mechanism(l1, o.epsilon))
                       : tool_mechanism(privpost::gaussian_mechanism::analytic(l2, o.epsilon, o.delta));
      },
      resolve_auto<typename Prior::family>(settings));
  std::cerr << "privpost-calibrate: declared bounds [" << study.lower() << ", " << study.upper() << "], "
            << (laplace ? "L1" : "L2") << " sensitivity "
            << (laplace ? study.statistic().l1_sensitivity() : study.statistic().l2_sensitivity())
            << "; 'naive' is the dissertation's cheating naive (not private)\n";
  return run(study, o);
}

}  // namespace

// Priors of the built-in unbounded models (documented in docs/tool-calibrate.md).
int run_unbounded_model(const cli_options& o, const privpost::study_settings& settings) {
  if (o.model == "exponential") return run_truncated(privpost::exponential_gamma_prior(20.0, 20.0), o, settings);
  if (o.model == "poisson") return run_truncated(privpost::poisson_gamma_prior(10.0, 2.0), o, settings);
  if (o.model == "normal-known-var") return run_truncated(privpost::normal_mean_prior(0.0, 1.0, 1.0), o, settings);
  return run_truncated(privpost::normal_inverse_gamma_prior(0.0, 1.0, 10.0, 10.0), o, settings);
}

}  // namespace privpost::tools::calibrate
