// privpost-infer, the bounded families: binomial (Beta prior) and multinomial (Dirichlet prior, 2 to 5 categories).
#include <string>
#include <vector>

#include "infer.hpp"

namespace privpost::tools::infer_tool {

namespace {

template <int K>
int multinomial(const privpost::tools::release_record& rec, const options& o) {
  const auto prior = prior_from(o.prior, K, "Dirichlet alpha_1..alpha_K", [](const std::vector<double>& a) {
    Eigen::Matrix<double, K, 1> alpha;
    for (int k = 0; k < K; ++k) alpha(k) = a[static_cast<std::size_t>(k)];
    return privpost::dirichlet_prior<K>(alpha);
  });
  std::vector<std::string> names;
  for (int k = 0; k < K; ++k) names.push_back("theta_" + std::to_string(k));
  return with_mechanism(prior, rec, o, names);
}

}  // namespace

int infer_bounded(const release_record& rec, const options& o) {
  const std::string& m = rec.model;
  if (m == "binomial") {
    const auto prior = prior_from(o.prior.empty() ? "1,1" : o.prior, 2, "Beta a,b",
                                  [](const std::vector<double>& p) { return privpost::beta_prior(p[0], p[1]); });
    return with_mechanism(prior, rec, o, {"theta"});
  }
  options with_prior = o;
  if (with_prior.prior.empty()) {
    for (int k = 0; k < rec.categories; ++k) with_prior.prior += (k ? ",1" : "1");
  }
  switch (rec.categories) {
    case 2:
      return multinomial<2>(rec, with_prior);
    case 3:
      return multinomial<3>(rec, with_prior);
    case 4:
      return multinomial<4>(rec, with_prior);
    case 5:
      return multinomial<5>(rec, with_prior);
    default:
      throw std::invalid_argument("release record: categories is " + std::to_string(rec.categories) + "; accepted: 2 to 5");
  }
}

}  // namespace privpost::tools::infer_tool
