// privpost/testing/family_study.hpp
// bounded_family_study: one simulation-based-calibration trial for a family with bounded statistics: theta from the
// prior, n records from the model, a release through the mechanism, then the posterior of each requested method.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/ops.hpp"

namespace privpost {

/// Settings shared by the study classes.
struct study_settings {
  double n = 100;                  ///< records per trial (a whole number)
  int burnin = 500;                ///< Gibbs-SS sweeps discarded per posterior
  int draws = 1000;                ///< draws kept per posterior
  int thin = 1;                    ///< Gibbs-SS keeps every thin-th sweep (strong noise mixes slowly: see README)
  std::vector<std::string> methods = {"gibbs", "naive", "nonprivate"};  ///< any of gibbs, naive, nonprivate, ops
  ops_options ops{};               ///< OPS settings (binomial only); its epsilon is the study's epsilon
};

namespace detail {
inline void check_study_settings(const char* who, const study_settings& s, bool ops_allowed, bool noisy_allowed = false) {
  if (!(s.n >= 1.0 && s.n <= 1e9 && std::floor(s.n) == s.n)) throw_invalid(who, "n", s.n, "a whole number in [1, 1e9]");
  if (s.burnin < 0) throw_invalid(who, "burnin", s.burnin, "an integer >= 0");
  if (s.draws < 2) throw_invalid(who, "draws", s.draws, "an integer >= 2");
  if (s.thin < 1) throw_invalid(who, "thin", s.thin, "an integer >= 1");
  if (s.methods.empty()) throw std::invalid_argument(std::string(who) + ": methods is empty; accepted: gibbs, naive, nonprivate, ops");
  for (const auto& m : s.methods) {
    const bool known = m == "gibbs" || m == "naive" || m == "nonprivate" || (m == "ops" && ops_allowed) || (m == "noisy" && noisy_allowed);
    if (!known)
      throw std::invalid_argument(std::string(who) + ": method is '" + m + "'; accepted: gibbs, naive, nonprivate" +
                                  (ops_allowed ? ", ops" : "") + (noisy_allowed ? ", noisy" : "") +
                                  " (ops: binomial only; noisy: linear regression only)");
  }
}

// One chain of `make`'s sampler, seeded from g, as a draws matrix.
template <class Make, random_engine G>
Eigen::MatrixXd single_chain(Make make, int burnin, int draws, G& g, int thin = 1) {
  inference_options o;
  o.chains = 1;
  o.burnin = burnin;
  o.draws = draws;
  o.thin = thin;
  o.seed = static_cast<std::uint64_t>(g());
  return infer(make, o).draws.chains().front();
}
}  // namespace detail

/// A calibration study of a bounded family (binomial, multinomial, or a user's family with draw_record).
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
class bounded_family_study {
 public:
  using family = typename Prior::family;
  static constexpr bool has_ops = std::is_same_v<Prior, beta_prior>;

  bounded_family_study(const Prior& prior, const Mechanism& mechanism, study_settings settings)
      : prior_(prior), mechanism_(mechanism), settings_(std::move(settings)) {
    detail::check_study_settings("bounded_family_study", settings_, has_ops);
  }

  /// One trial: the truth, the data, the release, and every method's draws (deterministic given g).
  template <random_engine G>
  std::vector<method_draws> trial(G& g) const {
    const auto theta = prior_.draw(g);
    statistic_t<family> s = statistic_t<family>::Zero();
    const auto n_records = static_cast<std::int64_t>(settings_.n);
    for (std::int64_t i = 0; i < n_records; ++i) s += family::statistic(family::draw_record(theta, g));
    const Eigen::VectorXd s_dynamic = s;
    const Eigen::VectorXd z = mechanism_.release(s_dynamic, g);
    const Eigen::VectorXd truth = family_parameter_vector<family>(theta);
    const double n = settings_.n;
    std::vector<method_draws> out;
    for (const auto& m : settings_.methods) {
      method_draws r{m, truth, {}, 0.0};
      if (m == "gibbs") {
        r.draws = timed([&] { return detail::single_chain([&](auto& cg) { return gibbs_ss(prior_, mechanism_, z, n, cg); },
                                                          settings_.burnin, settings_.draws, g, settings_.thin); }, r.seconds);
      } else if (m == "naive") {
        r.draws = timed([&] { return detail::single_chain([&](auto& cg) { return conjugate_sampler(prior_, z, n, cg); }, 0,
                                                          settings_.draws, g); }, r.seconds);
      } else if (m == "nonprivate") {
        r.draws = timed([&] { return detail::single_chain([&](auto& cg) { return conjugate_sampler(prior_, s, n, cg); }, 0,
                                                          settings_.draws, g); }, r.seconds);
      } else if constexpr (has_ops) {
        ops_options o = settings_.ops;
        o.epsilon = mechanism_.budget().epsilon;
        r.draws = timed([&] { return Eigen::MatrixXd(ops_binomial(prior_, s(0), n, o, g)); }, r.seconds);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  const study_settings& settings() const noexcept { return settings_; }

 private:
  Prior prior_;
  Mechanism mechanism_;
  study_settings settings_;
};

}  // namespace privpost
