// privpost-infer, the truncated families (truncated_family_tool.hpp): the prior from --prior as the model's type says,
// then the family's noise-aware sampler under the release's mechanism.
#include <string>
#include <type_traits>

#include "infer.hpp"

namespace privpost::tools::infer_tool {

int infer_unbounded(const release_record& rec, const options& o) {
  return privpost::tools::visit_truncated_family(rec.model, [&]<class M>(std::type_identity<M>) {
    const std::string meaning(M::prior_meaning);
    if (o.prior.empty() && M::prior_default.empty())
      throw std::invalid_argument("--prior is required for " + rec.model + ": " + meaning);
    const auto prior = prior_from(o.prior.empty() ? std::string(M::prior_default) : o.prior, M::prior_values, meaning,
                                  [](const std::vector<double>& p) { return M::prior(p); });
    return with_mechanism(prior, rec, o, M::parameters());
  });
}

}  // namespace privpost::tools::infer_tool
