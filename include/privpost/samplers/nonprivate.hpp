// privpost/samplers/nonprivate.hpp
// nonprivate_sampler: the non-private reference, independent draws from Conjugate-Update(lambda, s, n) given the exact
// statistic s. Only for simulation studies and as the MMD reference (dissertation Sec. 4.4): it sees private data.
#pragma once

#include <Eigen/Core>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/family_concepts.hpp"

namespace privpost {

template <conjugate_prior Prior>
class nonprivate_sampler {
 public:
  using family = typename Prior::family;
  using parameter_type = typename family::parameter_type;

  /// s must be a valid statistic of n records (the prior's update checks it).
  template <random_engine G>
  nonprivate_sampler(const Prior& prior, const statistic_t<family>& s, double n, G& g)
      : posterior_(prior.update(s, n)), theta_(posterior_.draw(g)) {}

  template <random_engine G>
  void step(G& g) {
    theta_ = posterior_.draw(g);
  }

  const parameter_type& parameter() const noexcept { return theta_; }
  parameter_vector_t<family> parameter_vector() const { return family::to_vector(theta_); }
  const Prior& posterior_distribution() const noexcept { return posterior_; }
  const numerical_events& events() const noexcept { return events_; }

 private:
  Prior posterior_;
  parameter_type theta_;
  numerical_events events_;
};

}  // namespace privpost
