// privpost-calibrate, the bounded family models (bounded_family_tool.hpp): the parameter drawn from the model's
// calibration_prior, records from the family, a release of their counts.
#include <stdexcept>
#include <string>
#include <type_traits>

#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/testing/family_study.hpp>

#include "bounded_family_tool.hpp"
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

}  // namespace

// Each bounded family model's calibration_prior (its file in models/; docs/tool-calibrate.md lists them).
int run_bounded_model(const cli_options& o, const privpost::study_settings& settings) {
  if (takes_categories(o.model) && !(o.categories >= 2 && o.categories <= 5))
    throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: 2, 3, 4 or 5");
  return privpost::tools::visit_bounded_family(
      o.model, o.categories, [&]<class M>(std::type_identity<M>) { return run_bounded(M::calibration_prior(), o, settings); });
}

}  // namespace privpost::tools::calibrate
