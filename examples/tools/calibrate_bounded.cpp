// privpost-calibrate, bounded models: binomial (Beta(1, 1) prior) and multinomial (Dirichlet(1, ..., 1) prior).
#include <stdexcept>
#include <string>

#include <privpost/families/binomial.hpp>
#include <privpost/families/multinomial.hpp>
#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/testing/family_study.hpp>

#include "calibrate.hpp"

namespace privpost::tools::calibrate {
namespace {
template <class Prior, class Family = typename Prior::family>
int run_bounded(const Prior& prior, const cli_options& o, const privpost::study_settings& settings) {
  const tool_mechanism m =
      o.mechanism == "laplace"
          ? tool_mechanism(privpost::laplace_mechanism(Family::l1_sensitivity, o.epsilon))
          : tool_mechanism(privpost::gaussian_mechanism::analytic(Family::l2_sensitivity, o.epsilon, o.delta));
  return run(privpost::bounded_family_study(prior, m, resolve_auto<Family>(settings)), o);
}

template <int K>
int run_multinomial(const cli_options& o, const privpost::study_settings& settings) {
  return run_bounded(privpost::dirichlet_prior<K>(Eigen::Matrix<double, K, 1>::Ones()), o, settings);
}

}  // namespace

int run_bounded_model(const cli_options& o, const privpost::study_settings& settings) {
  if (o.model == "binomial") return run_bounded(privpost::beta_prior(1.0, 1.0), o, settings);
  switch (o.categories) {
    case 2:
      return run_multinomial<2>(o, settings);
    case 3:
      return run_multinomial<3>(o, settings);
    case 4:
      return run_multinomial<4>(o, settings);
    case 5:
      return run_multinomial<5>(o, settings);
    default:
      throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: 2, 3, 4 or 5");
  }
}

}  // namespace privpost::tools::calibrate
