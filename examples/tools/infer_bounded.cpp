// privpost-infer, the bounded families (bounded_family_tool.hpp): the prior from --prior as the model's type says, then
// the family's noise-aware sampler under the release's mechanism.
#include <string>
#include <type_traits>
#include <vector>

#include "infer.hpp"

namespace privpost::tools::infer_tool {

int infer_bounded(const release_record& rec, const options& o) {
  return privpost::tools::visit_bounded_family(rec.model, rec.family().categories, [&]<class M>(std::type_identity<M>) {
    const auto prior = prior_from(o.prior.empty() ? std::string(M::prior_default) : o.prior, M::prior_values,
                                  std::string(M::prior_meaning), [](const std::vector<double>& p) { return M::prior(p); });
    return with_mechanism(prior, rec, o, M::parameters());
  });
}

}  // namespace privpost::tools::infer_tool
