// privpost/samplers/conjugate.hpp
// conjugate_sampler: independent draws of Conjugate-Update(lambda, s, n) for any model. Given the release z it is the
// noise-naive baseline, which pretends z is the exact statistic (dissertation Sec. 4.4; confidently wrong at small n or
// strict epsilon); given the exact s it is the non-private reference (simulation studies only: it sees private data).
#pragma once

#include <Eigen/Core>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/samplers/detail/sweep.hpp"

namespace privpost {

/// Draws of the conjugate posterior given a statistic s of n records. s is projected onto the model's valid set first
/// (counted in events().projections: a release usually needs it, an exact statistic never does).
///
///     conjugate_sampler naive(prior, z, n, g);          // naive: the release as if it were exact
///     conjugate_sampler reference(prior, s, n, g);      // non-private: the exact statistic
///     conjugate_sampler naive_regression(linear_regression_statistic(layout), prior, z, n, g);
template <conjugate_model Model, class Prior>
requires conjugate_prior_for<Prior, Model>
class conjugate_sampler {
 public:
  /// The statistic model.
  using model_type = Model;
  /// The model's parameter type.
  using parameter_type = typename Model::parameter_type;

  /// The conjugate posterior of prior given the statistic s of n records, treated as exact (the naive and non-private baselines);
  /// the first draw uses g.
  template <random_engine G>
  conjugate_sampler(Model model, const Prior& prior, const Eigen::VectorXd& s, double n, G& g)
      : model_(std::move(model)), posterior_(make_posterior(model_, prior, s, n, events_)), theta_(posterior_.draw(g)) {}

  /// A static family's sampler: the model is family_model<family>.
  // clang-format off
  template <random_engine G>
    requires std::is_default_constructible_v<Model>
  conjugate_sampler(const Prior& prior, const Eigen::VectorXd& s, double n, G& g) : conjugate_sampler(Model{}, prior, s, n, g) {}
  // clang-format on

  /// One independent draw from the conjugate posterior.
  template <random_engine G>
  void step(G& g) {
    theta_ = posterior_.draw(g);
  }

  /// The current draw.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return model_.parameter_vector(theta_); }
  /// The conjugate posterior itself (closed-form summaries without sampling).
  const Prior& posterior_distribution() const noexcept { return posterior_; }
  /// The numerical events so far.
  const numerical_events& events() const noexcept { return events_; }

 private:
  static Prior make_posterior(const Model& model, const Prior& prior, const Eigen::VectorXd& s, double n,
                              numerical_events& events) {
    detail::check_release("conjugate_sampler", s, model.size(), n);
    typename Model::vector_type v = s;
    if (model.support().project(v, n, events)) ++events.projections;
    return model.update(prior, v, n);
  }

  Model model_;
  numerical_events events_;  // before posterior_: make_posterior counts into it
  Prior posterior_;
  parameter_type theta_;
};

template <conjugate_prior Prior, class S, random_engine G>
conjugate_sampler(const Prior&, const S&, double, G&) -> conjugate_sampler<family_model<typename Prior::family>, Prior>;
template <conjugate_model Model, class Prior, class S, random_engine G>
conjugate_sampler(Model, const Prior&, const S&, double, G&) -> conjugate_sampler<Model, Prior>;

}  // namespace privpost
