// privpost-calibrate, the truncated family models (truncated_family_tool.hpp): the parameter drawn from the model's
// calibration_prior, records from the family, a truncated release.
#include <stdexcept>
#include <string>
#include <type_traits>

#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/testing/truncated_study.hpp>

#include "calibrate.hpp"
#include "truncated_family_tool.hpp"

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

// Each truncated family model's calibration_prior (its file in models/; docs/tool-calibrate.md lists them).
int run_unbounded_model(const cli_options& o, const privpost::study_settings& settings) {
  return privpost::tools::visit_truncated_family(
      o.model, [&]<class M>(std::type_identity<M>) { return run_truncated(M::calibration_prior(), o, settings); });
}

}  // namespace privpost::tools::calibrate
