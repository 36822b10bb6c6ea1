// privpost-infer, the unbounded families (truncated releases): exponential and Poisson (Gamma prior of the rate),
// normal with known variance (normal prior of the mean) and normal (normal-inverse-gamma prior).
#include <string>

#include "infer.hpp"

namespace privpost::tools::infer_tool {

int infer_unbounded(const release_record& rec, const options& o) {
  const std::string& m = rec.model;
  if (m == "exponential") {
    const auto prior = prior_from(o.prior.empty() ? "1,1" : o.prior, 2, "Gamma shape,rate of the rate",
                                  [](const std::vector<double>& p) { return privpost::exponential_gamma_prior(p[0], p[1]); });
    return with_mechanism(prior, rec, o, {"rate"});
  }
  if (m == "poisson") {
    const auto prior = prior_from(o.prior.empty() ? "1,1" : o.prior, 2, "Gamma shape,rate of the rate",
                                  [](const std::vector<double>& p) { return privpost::poisson_gamma_prior(p[0], p[1]); });
    return with_mechanism(prior, rec, o, {"rate"});
  }
  if (m == "normal-known-var") {
    if (o.prior.empty())
      throw std::invalid_argument("--prior is required for normal-known-var: mean0,sd0,sigma (sigma: the known record sd)");
    const auto prior = prior_from(o.prior, 3, "mean0,sd0,sigma",
                                  [](const std::vector<double>& p) { return privpost::normal_mean_prior(p[0], p[1], p[2]); });
    return with_mechanism(prior, rec, o, {"mean"});
  }
  if (m == "normal") {
    const auto prior =
        prior_from(o.prior.empty() ? "0,1,1,1" : o.prior, 4, "normal-inverse-gamma m,kappa,a,b",
                   [](const std::vector<double>& p) { return privpost::normal_inverse_gamma_prior(p[0], p[1], p[2], p[3]); });
    return with_mechanism(prior, rec, o, {"mean", "variance"});
  }
  throw std::invalid_argument("release record: model '" + m +
                              "'; accepted: binomial, multinomial, poisson, exponential, normal-known-var, normal");
}

}  // namespace privpost::tools::infer_tool
