// privpost/testing/family_study.hpp
// bounded_family_study: one simulation-based-calibration trial for a family with bounded statistics: theta from the
// prior, n records from the model, a release through the mechanism, then the posterior of each requested method.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/ops.hpp"
#include "privpost/samplers/sampler_policy.hpp"

namespace privpost {

/// Settings shared by the study classes.
struct study_settings {
  double n = 100;    ///< records per trial (a whole number)
  int burnin = 500;  ///< Gibbs-SS sweeps discarded per posterior
  int draws = 1000;  ///< draws kept per posterior
  int thin = 1;      ///< Gibbs-SS keeps every thin-th sweep (strong noise mixes slowly: see docs/calibration.md)
  int collapsed_moves =
      0;                ///< Gibbs-SS's collapsed moves per sweep (gibbs_ss::set_collapsed_moves; bounded and tree-CGM studies)
  int shift_moves = 0;  ///< Gibbs-SS's shift moves per sweep (gibbs_ss::set_shift_moves; tree-CGM study only)
  std::vector<std::string> methods = {"gibbs", "naive", "nonprivate"};  ///< gibbs, naive, nonprivate, ops, exact, records
  ops_options ops{};  ///< OPS settings (binomial only); its epsilon is the study's epsilon
};

namespace detail {
// What a study's samplers can move besides Gibbs-SS's blocks: a study refuses the other moves by name.
struct study_moves {
  bool collapsed = true;  // Gibbs-SS's collapsed moves
  bool shift = false;     // the tree CGM's shift moves
};

// The design settings every study checks, and the moves it has none of; the method names are checked by
// select_methods against its factories.
inline void check_study_settings(const char* who, const study_settings& s, study_moves moves) {
  if (!(s.n >= 1.0 && s.n <= 1e9 && std::floor(s.n) == s.n)) throw_invalid(who, "n", s.n, "a whole number in [1, 1e9]");
  if (s.burnin < 0) throw_invalid(who, "burnin", s.burnin, "an integer >= 0");
  if (s.draws < 2) throw_invalid(who, "draws", s.draws, "an integer >= 2");
  if (s.thin < 1) throw_invalid(who, "thin", s.thin, "an integer >= 1");
  if (s.collapsed_moves < 0 || s.collapsed_moves > 1000)
    throw_invalid(who, "collapsed_moves", s.collapsed_moves, "an integer in [0, 1000]");
  if (s.shift_moves < 0 || s.shift_moves > 1000) throw_invalid(who, "shift_moves", s.shift_moves, "an integer in [0, 1000]");
  if (!moves.shift && s.shift_moves != 0) throw_invalid(who, "shift_moves", s.shift_moves, "0 (shift moves are the tree CGM's)");
  if (!moves.collapsed && s.collapsed_moves != 0)
    throw_invalid(who, "collapsed_moves", s.collapsed_moves, "0 (its samplers have no collapsed moves yet)");
}
}  // namespace detail

/// One simulated trial of a bounded family: the truth, the exact statistic and its release.
template <exponential_family F>
struct bounded_trial {
  Eigen::VectorXd truth;  ///< the true parameter vector
  statistic_t<F> s;       ///< the exact statistic (private; the non-private reference and OPS use it)
  Eigen::VectorXd z;      ///< the release
  /// The number of records.
  double n = 0.0;
};

/// A calibration study of a bounded family (binomial, multinomial, or a user's family with draw_record): theta from the
/// prior, n records from the model, a release through the mechanism, then each method's posterior. Standard methods
/// (standard_methods()): gibbs, naive, nonprivate, and for the binomial ops; any other is one more named_method.
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
requires record_generating_family<typename Prior::family>
class bounded_family_study : public study_methods<bounded_trial<typename Prior::family>> {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The trial type.
  using trial_type = bounded_trial<family>;

  /// The standard methods named in settings.methods.
  bounded_family_study(const Prior& prior, const Mechanism& mechanism, study_settings settings)
      : study_methods<trial_type>("bounded_family_study"), prior_(prior), mechanism_(mechanism), settings_(std::move(settings)) {
    detail::check_study_settings("bounded_family_study", settings_, {});
    this->set_methods(select_methods(standard_methods(), settings_.methods, "bounded_family_study"));
  }
  /// Any list of methods (settings.methods is ignored).
  bounded_family_study(const Prior& prior, const Mechanism& mechanism, study_settings settings,
                       std::vector<named_method<trial_type>> methods)
      : study_methods<trial_type>("bounded_family_study"), prior_(prior), mechanism_(mechanism), settings_(std::move(settings)) {
    detail::check_study_settings("bounded_family_study", settings_, {});
    this->set_methods(std::move(methods));
  }

  /// gibbs (Gibbs-SS), naive (the conjugate update on the release), nonprivate (on the exact statistic), and for the
  /// binomial ops (one posterior sample per release, Sec. 4.4 of the dissertation; it spends its own budget), exact
  /// (gibbs_ss_exact, any finite_sum_family), corrected (gibbs_ss_corrected, the same families) and records (record_gibbs, any
  /// family that draws records).
  std::vector<named_method<trial_type>> standard_methods() const {
    const Prior prior = prior_;
    const Mechanism mechanism = mechanism_;
    const study_settings st = settings_;
    // One chain of the sampler a kind names, built as the tools and a library user build it (visit_sampler).
    auto chain_of = [=](sampler_kind kind, sampler_build build) {
      return [=](const trial_type& t, std::mt19937_64& g) {
        return visit_sampler(kind, prior, mechanism, t.z, t.n, build,
                             [&](auto make) { return single_chain(make, st.burnin, st.draws, g, st.thin); });
      };
    };
    std::vector<named_method<trial_type>> m{
        {"gibbs", chain_of(sampler_kind::gibbs, {.collapsed_moves = st.collapsed_moves})},
        {"naive",
         [=](const trial_type& t, std::mt19937_64& g) {
           return single_chain([&](auto& cg) { return conjugate_sampler(prior, t.z, t.n, cg); }, 0, st.draws, g);
         }},
        {"nonprivate", [=](const trial_type& t, std::mt19937_64& g) {
           return single_chain([&](auto& cg) { return conjugate_sampler(prior, t.s, t.n, cg); }, 0, st.draws, g);
         }}};
    // Exact Gibbs (the sum enumerated over its integer support, no CLT) and Gibbs-SS with the MH-corrected sum draw
    // (exact at O(1) a sweep) for a finite-sum family; the n records latent (exact for any n, O(n) a sweep) for a
    // family that draws records.
    if constexpr (finite_sum_family<typename Prior::family>) {
      m.push_back({"exact", chain_of(sampler_kind::exact, {})});
      m.push_back({"corrected", chain_of(sampler_kind::corrected, {})});
    }
    if constexpr (record_generating_family<typename Prior::family>) m.push_back({"records", chain_of(sampler_kind::records, {})});
    if constexpr (std::is_same_v<Prior, beta_prior>) {
      ops_options o = st.ops;
      o.epsilon = mechanism.budget().epsilon;
      m.push_back({"ops", [=](const trial_type& t, std::mt19937_64& g) {
                     return Eigen::MatrixXd(ops_binomial(prior, t.s(0), t.n, o, g));
                   }});
    }
    return m;
  }

  /// theta from the prior, the records, the release (deterministic given g).
  trial_type simulate(std::mt19937_64& g) const {
    const auto theta = prior_.draw(g);
    trial_type t;
    t.s = statistic_t<family>::Zero();
    const auto n_records = static_cast<std::int64_t>(settings_.n);
    for (std::int64_t i = 0; i < n_records; ++i) t.s += family::statistic(family::draw_record(theta, g));
    const Eigen::VectorXd s_dynamic = t.s;
    t.z = mechanism_.release(s_dynamic, g);
    t.truth = family_parameter_vector<family>(theta);
    t.n = settings_.n;
    return t;
  }

  /// One trial: the truth, the data, the release, and every method's draws.
  std::vector<method_draws> trial(std::mt19937_64& g) const { return this->run_on(simulate(g), g); }

  /// The study's settings.
  const study_settings& settings() const noexcept { return settings_; }

 private:
  Prior prior_;
  Mechanism mechanism_;
  study_settings settings_;
};

}  // namespace privpost
