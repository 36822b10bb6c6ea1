// privpost/samplers/naive.hpp
// naive_sampler: the noise-naive baseline, which pretends the release z is the exact statistic: independent draws from
// Conjugate-Update(lambda, project(z), n) (dissertation Sec. 4.4). Confidently wrong at small n or strict epsilon.
#pragma once

#include <Eigen/Core>

#include "privpost/core/concepts.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/family_concepts.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

namespace privpost {

/// Independent draws of the naive posterior. Models the sampler interface so the driver runs it like any chain.
template <conjugate_prior Prior>
class naive_sampler {
 public:
  using family = typename Prior::family;
  using parameter_type = typename family::parameter_type;

  /// z is projected onto the valid set for n records before the conjugate update.
  template <random_engine G>
  naive_sampler(const Prior& prior, const Eigen::VectorXd& z, double n, G& g)
      : posterior_(make_posterior(prior, z, n)), theta_(posterior_.draw(g)) {}

  template <random_engine G>
  void step(G& g) {
    theta_ = posterior_.draw(g);
  }

  const parameter_type& parameter() const noexcept { return theta_; }
  parameter_vector_t<family> parameter_vector() const { return family::to_vector(theta_); }
  const Prior& posterior_distribution() const noexcept { return posterior_; }
  const numerical_events& events() const noexcept { return events_; }

 private:
  static Prior make_posterior(const Prior& prior, const Eigen::VectorXd& z, double n) {
    detail::check_release<family>("naive_sampler", z, n);
    const statistic_t<family> s = family::project(statistic_t<family>(z), n);
    return prior.update(s, n);
  }

  Prior posterior_;
  parameter_type theta_;
  numerical_events events_;
};

}  // namespace privpost
