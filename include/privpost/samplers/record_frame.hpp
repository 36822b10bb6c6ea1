// privpost/samplers/record_frame.hpp
// record_frame: the record-level data-augmentation sweep (Ju et al. 2022, Algorithm 1; docs/record-level.md), written
// once for any record_model. The n records are latent and the target is
//     p(theta) prod_i f(x_i | theta) prod_r p_r(z_r | S_r),   S_r = sum_i c_r(x_i, i),
// with R >= 1 releases, each with its own noise kernel p_r (any mechanism's exact density, or a kernel the user writes)
// and its own contribution rule c_r. One sweep:
//   (a) theta | records, by the model's conjugate update on the records' summed statistic or by any step the model
//       supplies (a Metropolis or NUTS block over theta given the records);
//   (t) for a model that can transport its records between parameters (x' = T(x; theta, theta') pushes f(. | theta)
//       forward to f(. | theta'): a location shift, a scale, a quantile map), theta given the records' noise by one
//       slice-sampling update (Neal 2003, stepping out and shrinkage) of log p(theta) + sum_r log p_r(z_r | S_r(T(x))).
//       This is the collapsed move that keeps the chain mixing where the noise dominates: there the records pin theta
//       (the record scan alone moves theta by about its sampling sd per sweep, far less than its posterior sd), while the
//       transport moves theta and the records together and is judged by the releases alone;
//   (b) every record in turn: x* ~ f(. | theta) from the model's record law, accepted with
//       alpha = min(1, prod_r p_r(z_r | S_r - c_r(x_i, i) + c_r(x*, i)) / p_r(z_r | S_r))
//       (the f terms cancel; a release whose contribution did not change contributes 1 without a density evaluation);
//   (d) the sums are summed afresh from the records' stored contributions and the densities recomputed from them, so
//       rounding never accumulates (n additions per release, no model evaluation: cheaper than deciding per record
//       whether a sum is whole and exact).
// For eps_r-DP Laplace releases whose contributions stay in their declared ranges every alpha in (b) is at least
// exp(-sum_r eps_r), the acceptance floor the tests check.
//
//     record_frame chain(my_model{...}, n, g, record_release(my_noise{...}, z));        // a user's model and kernel
//     record_gibbs_releases chain(beta_prior(1, 1), 10.0, g, record_release(laplace_mechanism(1, 0.5), z));
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/mechanisms/reachable.hpp"

namespace privpost {

// ---------------------------------------------------------------------------------------------------------------------
// The record model: Ju et al. 2022's four modules, less the release's kernel, which each release brings
// ---------------------------------------------------------------------------------------------------------------------

/// The parameter given the records by a conjugate update on their summed statistic T = sum_i t(x_i, i): the frame keeps
/// T as records change and calls draw_given_statistic(T, n, g) once a sweep. Optional: draw_given_statistic(T, n, g,
/// theta), which draws in place (a parameter of run-time size: sweeps then allocate nothing), and add_statistic(T, x, i,
/// w), T += w t(x, i) in place, which spares the frame storing every record's statistic (a cell record's is a unit
/// vector over the D cells).
template <class M>
concept conjugate_record_update = requires(const M& m, const typename M::record_type& x, std::size_t i,
                                           const typename M::statistic_type& t, double n, std::mt19937_64& g) {
  typename M::statistic_type;
  { m.statistic(x, i) } -> std::convertible_to<typename M::statistic_type>;
  { m.draw_given_statistic(t, n, g) } -> std::convertible_to<typename M::parameter_type>;
};

/// The parameter given the records by any step the model supplies (dapper's posterior_f): update_parameter(theta,
/// records, g) must leave p(theta | records) invariant (an exact draw, a Metropolis or a NUTS step).
template <class M>
concept block_record_update = requires(M& m, typename M::parameter_type& theta,
                                       const std::vector<typename M::record_type>& records, std::mt19937_64& g) {
  m.update_parameter(theta, records, g);
};

/// A model the record-level frame samples: a prior draw of theta (draw_prior), the record law x_i ~ f(. | theta), which
/// may depend on the record's index (draw_record(theta, i, g)), the record's contribution to the released statistic,
/// which may depend on its index too (contribution(x, i), of the model's vector_type: what a release that names no
/// rule of its own sums), theta as a vector for the draws (parameter_vector), and theta given the records (a
/// conjugate_record_update or a block_record_update). Optional: draw_record(theta, i, g, out) and contribution(x, i,
/// out), which write in place (records and contributions of run-time size: sweeps then allocate nothing);
/// draw_start_record(pass, theta, i, g, out), the proposals of record_init::consistent's passes (default: the record
/// law at a fresh prior draw); transport and log_prior (transported_record_model),
/// contribution_sum_range (the range the summed contribution can take, for the reachability rule of
/// mechanisms/reachable.hpp); static constexpr bool whole_contributions = true when the statistic and the model's own
/// contribution are whole numbers (counts: the sweep then keeps its running sums, exact, without summing afresh).
template <class M>
concept record_model = requires(const M& m, const typename M::parameter_type& theta, const typename M::record_type& x,
                                std::size_t i, std::mt19937_64& g) {
  typename M::parameter_type;
  typename M::record_type;
  typename M::vector_type;
  { m.draw_prior(g) } -> std::convertible_to<typename M::parameter_type>;
  { m.draw_record(theta, i, g) } -> std::convertible_to<typename M::record_type>;
  { m.contribution(x, i) } -> std::convertible_to<typename M::vector_type>;
  { m.parameter_vector(theta) } -> std::convertible_to<Eigen::VectorXd>;
}
&&(conjugate_record_update<M> || block_record_update<M>);

/// A record model with the collapsed move (t) of the frame: transport(x, i, from, to) maps a record drawn from
/// f(. | from) to one distributed as f(. | to) with unit Jacobian (x + to - from for a location family), and log_prior
/// is log p(theta) up to a constant. theta is a double or an Eigen::VectorXd (each coordinate moved in turn).
template <class M>
concept transported_record_model = record_model<M> &&
    (std::floating_point<typename M::parameter_type> ||
     std::same_as<typename M::parameter_type, Eigen::VectorXd>)&&requires(const M& m, const typename M::parameter_type& theta,
                                                                          const typename M::record_type& x, std::size_t i) {
  { m.transport(x, i, theta, theta) } -> std::convertible_to<typename M::record_type>;
  { m.log_prior(theta) } -> std::convertible_to<double>;
};

/// The noise kernel of a release: log_likelihood(z, s) = log p(z | s) for the released z and the exact sum s. Every
/// release_mechanism is one; so is a density the user writes for someone else's release (dapper's mechanism_f). An
/// optional log_density_change(z, s, s_new) saves the normalising constants (density_change_mechanism).
template <class K, class V = Eigen::VectorXd>
concept release_kernel = requires(const K& k, const V& z, const V& s) {
  { k.log_likelihood(z, s) } -> std::convertible_to<double>;
};

/// The contribution rule of a release that names none: the model's own contribution(x, i) (for a family, its
/// statistic unchanged: a bounded family's release, binomial, multinomial).
struct family_statistic {};

/// One release of the records: its noise kernel, the released value z and what the data owner summed per record (a
/// callable c(x) or c(x, i) to the model's vector_type, or family_statistic for the model's own contribution).
template <class Mechanism, class Contribution = family_statistic>
requires release_kernel<Mechanism>
struct record_release {
  /// The release's mechanism (or noise kernel).
  Mechanism mechanism;
  /// The released value.
  Eigen::VectorXd z;
  /// What the data owner summed per record.
  Contribution contribution;
  /// The release z of mechanism m with contribution rule c.
  record_release(Mechanism m, Eigen::VectorXd released, Contribution c = {})
      : mechanism(std::move(m)), z(std::move(released)), contribution(std::move(c)) {}
};

template <class M>
record_release(M, Eigen::VectorXd) -> record_release<M>;
template <class M, class C>
record_release(M, Eigen::VectorXd, C) -> record_release<M, C>;

namespace detail {
template <class R>
inline constexpr bool is_record_release = false;
template <class M, class C>
inline constexpr bool is_record_release<record_release<M, C>> = true;

// T's type: the model's statistic_type where theta | records is conjugate (the frame keeps no T otherwise).
template <class M>
struct record_statistic {
  using type = typename M::vector_type;
};
template <class M>
requires conjugate_record_update<M>
struct record_statistic<M> {
  using type = typename M::statistic_type;
};

// What rule c of a release sums for record x at index i: the model's contribution for family_statistic, else c(x, i)
// or c(x).
template <class Model, class C>
auto contribute(const Model& model, const C& c, const typename Model::record_type& x, std::size_t i) {
  if constexpr (std::same_as<C, family_statistic>)
    return typename Model::vector_type(model.contribution(x, i));
  else if constexpr (std::invocable<const C&, const typename Model::record_type&, std::size_t>)
    return c(x, i);
  else
    return c(x);
}

// The same into out, with no allocation where the rule writes in place (c(x, out) or c(x, i, out): a rule with a
// contribution of run-time size, such as a record's score vector under the factored exponential mechanism).
template <class Model, class C, class V>
void contribute_into(const Model& model, const C& c, const typename Model::record_type& x, std::size_t i, V& out) {
  if constexpr (std::same_as<C, family_statistic> && requires { model.contribution(x, i, out); })
    model.contribution(x, i, out);
  else if constexpr (requires { c(x, i, out); })
    c(x, i, out);
  else if constexpr (requires { c(x, out); })
    c(x, out);
  else
    out = contribute(model, c, x, i);
}

// The vector type of release R's contributions and sums under model M.
template <class M, class R>
using release_vector_t = std::remove_cvref_t<decltype(contribute(std::declval<const M&>(), std::declval<const R&>().contribution,
                                                                 std::declval<const typename M::record_type&>(), std::size_t{}))>;
}  // namespace detail

/// A release that brings its own state for the frame's record scan (R::state<M>, built from R): for releases whose
/// proposals move a few coordinates of a long sum, such as linear queries of a histogram (samplers/record_histogram.hpp),
/// where keeping every record's contribution as a vector would cost n times the sum's length. The state implements the
/// members of the frame's summed_release state (fill, check, log_density, evaluate, log_change, accept, settle, resum,
/// the changed flag, exact_sums; optionally uniform_every_move(), true to have a uniform drawn for every changed
/// proposal).
template <class R, class M>
concept record_release_state = requires {
  typename R::template state<M>;
}
&&std::constructible_from<typename R::template state<M>, R>;

/// Model M reads release R: R is a record_release whose rule gives an Eigen column vector for M's records (the model's
/// vector_type for family_statistic; a rule may have its own type and size), or a release with its own state
/// (record_release_state), in the style of conjugate_prior_for.
template <class M, class R>
concept record_model_for = record_model<M> &&((detail::is_record_release<R> &&
                                               requires(const M& m, const R& r, const typename M::record_type& x, std::size_t i) {
                                                 detail::contribute(m, r.contribution, x, i);
                                                 requires detail::release_vector_t<M, R>::ColsAtCompileTime == 1;
                                               }) ||
                                              record_release_state<R, M>);

/// How a record-level chain starts (docs/record-level.md). Neither choice affects what the chain converges to, only
/// its burn-in.
enum class record_init {
  /// theta from the prior and the records from f(. | theta) (the default).
  prior,
  /// Then at most record_init_passes greedy passes move the records' contributions towards the releases: every record
  /// in turn is offered x* ~ f(. | theta') with a fresh theta' from the prior per pass, and x* replaces it when the sum
  /// of the releases' log densities does not fall (binomial with one Laplace release: S reaches round(clamp(z, 0, n)) as
  /// closely as the proposals allow). The passes stop after five in a row raise nothing; theta is then drawn given the
  /// records. Costs at most record_init_passes sweeps' worth of record draws, once.
  consistent
};

/// The most greedy passes of record_init::consistent.
inline constexpr int record_init_passes = 20;

/// The most records a record-level chain holds.
inline constexpr double record_frame_max_records = 1e7;

namespace detail {
// Whether release rule C sums whole numbers for model M, so that the running sums stay exact (below 2^53): the model
// declares its statistic and its own contribution whole (static constexpr bool whole_contributions = true: counts) and
// the rule is the model's own (family_statistic, or a rule that declares itself the statistic, as
// statistic_contribution does).
template <class M, class C>
inline constexpr bool whole_rule = requires {
  requires M::whole_contributions;
}
&&(std::same_as<C, family_statistic> || requires { requires C::is_statistic; });

// The range coordinate j of the summed contribution of rule c over n records can take: the model's, where it declares
// one (contribution_sum_range); unbounded otherwise.
template <class Model, class C>
std::pair<double, double> record_sum_range(const Model& m, const C& c, double n, int j) {
  if constexpr (requires { m.contribution_sum_range(c, n, j); })
    return m.contribution_sum_range(c, n, j);
  else
    return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
}

// A release z of the sum of rule c's contributions over n records: the contribution's size, finite entries, and
// every coordinate reachable (with noise of this scale) from the range the model declares for the sum. `name` names z.
template <class Model, class C, class Z>
void check_summed_release(const char* f, const Model& m, const C& c, double n, const std::string& name, const Z& z,
                          Eigen::Index size, double scale) {
  check_size_match(f, name, z.size(), "the contribution's size", size);
  check_finite(f, name, z);
  for (Eigen::Index j = 0; j < size; ++j) {
    const auto [lo, hi] = record_sum_range(m, c, n, static_cast<int>(j));
    check_reachable(f, size == 1 ? name : name + "(" + std::to_string(j) + ")", z(j), lo, hi, n, scale);
  }
}

// The state of one release of summed contributions (a record_release): every record's contribution kept, so that a
// proposal's change is one contribution out and one in, and the sums summed afresh from them at a sweep's end. The
// interface below is what record_scan calls on every release state; a release that brings a state of its own
// (record_release_state) implements the same members. settle and resum receive the scan's summed statistic T too
// (of a conjugate model; empty otherwise), so that a state whose sums are a function of T need not keep its own copy.
template <record_model Model, class Release>
struct summed_release {
  using record_type = typename Model::record_type;
  using V = release_vector_t<Model, Release>;
  // Whether the running sums are exact (whole contributions), so that settle need not sum afresh.
  static constexpr bool exact_sums = whole_rule<Model, decltype(Release::contribution)>;

  Release release;
  V z{}, sum{}, proposed{}, c_new{};
  std::vector<V> contributions;
  double density = 0.0, log_new = 0.0;
  bool changed = false;

  explicit summed_release(Release r) : release(std::move(r)) {}

  // Sized by the first record's contribution, z the release's own (the sums are not yet computed: resum).
  void fill(const Model& m, const std::vector<record_type>& records) {
    const auto size = contribute(m, release.contribution, records[0], 0).size();
    sum = proposed = c_new = V::Zero(size);
    z = release.z.size() == size ? V(release.z) : V(V::Zero(size));
    contributions.assign(records.size(), V::Zero(size));
  }

  // z against the model (check_summed_release).
  void check(const char* f, const Model& m, double n, const std::string& name) const {
    check_summed_release(f, m, release.contribution, n, name + " z", release.z, sum.size(), noise_scale(release.mechanism));
  }

  double log_density() const noexcept { return density; }

  // The log-density change of replacing record i by x, kept for accept; changed says whether its contribution moved.
  double evaluate(const Model& m, std::size_t i, const record_type&, const record_type& x) {
    contribute_into(m, release.contribution, x, i, c_new);
    changed = !(c_new == contributions[i]);
    if (!changed) return 0.0;
    proposed = sum - contributions[i] + c_new;
    return change(proposed, log_new);
  }
  // The same without keeping anything.
  double log_change(const Model& m, std::size_t i, const record_type&, const record_type& x) const {
    const V c = contribute(m, release.contribution, x, i);
    if (c == contributions[i]) return 0.0;
    double unused = 0.0;
    return change(sum - contributions[i] + c, unused);
  }
  void accept(std::size_t i, const record_type&, const record_type&) {
    if (!changed) return;
    sum = proposed;
    density = log_new;  // a running sum of changes only within a sweep (settle)
    contributions[i] = c_new;
  }

  template <class T>
  void settle(const Model& m, const std::vector<record_type>& records, const T& statistic) {
    if constexpr (exact_sums)
      density = release.mechanism.log_likelihood(z, sum);
    else
      resum(m, records, statistic, false);
  }
  // With recompute every contribution evaluated anew (the records were replaced wholesale); without, the stored ones
  // summed afresh (exact per record, so this alone keeps rounding from accumulating, at no model evaluation).
  template <class T>
  void resum(const Model& m, const std::vector<record_type>& records, const T&, bool recompute) {
    sum.setZero();
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (recompute) contribute_into(m, release.contribution, records[i], i, contributions[i]);
      sum += contributions[i];
    }
    density = release.mechanism.log_likelihood(z, sum);
  }

  // log p(z | S(T(x; from, to))) with every record transported (move (t)).
  template <class P>
  double transported_log_density(const Model& m, const std::vector<record_type>& records, const P& from, const P& to) {
    auto summed = [&](V& total, V& c) {
      total.setZero();
      for (std::size_t i = 0; i < records.size(); ++i) {
        contribute_into(m, release.contribution, m.transport(records[i], i, from, to), i, c);
        total += c;
      }
      return release.mechanism.log_likelihood(z, total);
    };
    // A sum of fixed size accumulates in locals: stores into members might alias the parameters (a double passed by
    // reference), which the loop would then reload for every record.
    if constexpr (V::SizeAtCompileTime != Eigen::Dynamic) {
      V total, c;
      return summed(total, c);
    } else {
      return summed(proposed, c_new);
    }
  }

  // Sets the released value (the sharded frame's share y_k, every sweep) and the log density at the records.
  template <class Z>
  void set_released(const Z& value) {
    z = value;
    density = release.mechanism.log_likelihood(z, sum);
  }

 private:
  // log p(z | s) - log p(z | S), and log p(z | s) into log_density_new: the kernel's own log_density_change when it
  // has one (then the kept log density plus the change), else one log_likelihood call against the kept log density.
  double change(const V& s, double& log_density_new) const {
    if constexpr (requires { release.mechanism.log_density_change(z, sum, s); }) {
      const double delta = release.mechanism.log_density_change(z, sum, s);
      log_density_new = density + delta;
      return delta;
    } else {
      log_density_new = release.mechanism.log_likelihood(z, s);
      return log_density_new - density;
    }
  }
};

// Whether release R's sums under model M have type V (false for a release with a state of its own, which has no
// contribution rule).
template <class M, class R, class V>
inline constexpr bool release_sum_is = false;
template <class M, class R, class V>
requires requires { typename release_vector_t<M, R>; }
inline constexpr bool release_sum_is<M, R, V> = std::same_as<release_vector_t<M, R>, V>;

// Whether a release state has the optional uniform_every_move().
template <class S>
inline constexpr bool asks_uniform = requires(const S& st) {
  st.uniform_every_move();
};

// A release's state in the scan: the release's own (R::state<Model>), else summed_release.
template <class Model, class R>
struct release_state_for {
  using type = summed_release<Model, R>;
};
template <class Model, class R>
requires requires { typename R::template state<Model>; }
struct release_state_for<Model, R> {
  using type = typename R::template state<Model>;
};

// The records of a record-level chain and the states of their releases: steps (b) and (d) of the sweep, written once.
// record_frame holds one scan over all n records; the sharded frame (samplers/record_sharded.hpp) one per shard, whose
// release is the shard's share of the split noise. The model is passed to every call rather than held, so that the
// scans of K shards share their chain's one model and a moved chain leaves no dangling reference.
template <record_model Model, class... Releases>
class record_scan {
 public:
  using record_type = typename Model::record_type;
  using parameter_type = typename Model::parameter_type;
  using statistic_type = typename record_statistic<Model>::type;
  static constexpr std::size_t release_count = sizeof...(Releases);
  static constexpr bool conjugate = conjugate_record_update<Model>;
  // A conjugate model that moves its statistic in place (add_statistic(T, x, i, w): T += w t(x)), so that no record's
  // statistic is stored (a cell record's statistic is a unit vector over D cells: storing n of them is n D numbers).
  static constexpr bool moved_statistic =
      conjugate && requires(const Model& m, statistic_type& t, const record_type& x, std::size_t i) {
    m.add_statistic(t, x, i, 1.0);
  };
  static constexpr bool stored_statistics = conjugate && !moved_statistic;
  static constexpr bool exact_sums = (release_state_for<Model, Releases>::type::exact_sums && ...);

  explicit record_scan(Releases... releases) : states_(std::move(releases)...) {}

  // count >= 1 records from f(. | theta), drawn with g, and the release states sized by the first record's
  // contributions, each z the release's own. The sums are not yet computed (resum): a caller checks z first.
  template <random_engine G>
  void fill(const Model& m, std::size_t count, const parameter_type& theta, G& g) {
    records_.resize(count);
    if constexpr (stored_statistics) statistics_.resize(count);
    for (std::size_t i = 0; i < count; ++i) records_[i] = m.draw_record(theta, i, g);
    proposal_ = records_[0];  // sized like a record: in-place draws allocate nothing
    for_each_state([&](auto& st, std::size_t) { st.fill(m, records_); });
    if constexpr (conjugate) total_ = statistic_type::Zero(m.statistic(records_[0], 0).size());
  }

  // The serial frame's checks of every release of n records, under the name f.
  void check_releases(const char* f, const Model& m, double n) const {
    for_each_state([&](const auto& st, std::size_t r) { st.check(f, m, n, release_name(r)); });
  }

  // std::domain_error naming f unless every release has positive density at the records.
  void check_densities(const char* f) const {
    for_each_state([&](const auto& st, std::size_t r) {
      if (!(st.log_density() > -std::numeric_limits<double>::infinity()))
        throw std::domain_error(std::string(f) + ": " + (release_count == 1 ? "the release" : release_name(r)) +
                                " has zero density at the initial records (log density " + std::to_string(st.log_density()) +
                                "); accepted: a mechanism with positive density there");
    });
  }

  static std::string release_name(std::size_t r) {
    return release_count == 1 ? std::string("release") : "release " + std::to_string(r + 1);
  }

  // (b) every record in turn at theta (systematic scan), then (d).
  template <random_engine G>
  void sweep(const Model& m, const parameter_type& theta, G& g) {
    // The tally lives in a local for the sweep: the stores into the release states through double pointers could
    // alias a double member, and reloading it every record was measurable (3% at a million records).
    // The count too: the states' stores through pointers to their sums might alias the vector's bounds otherwise.
    tally t = tally_;
    t.uniform_every_move = uniform_every_move();
    const std::size_t count = records_.size();
    for (std::size_t i = 0; i < count; ++i) update(m, theta, i, g, t);
    tally_ = t;
    settle(m);
  }

  // (d): every release state settles: the sums summed afresh from the stored values, unless they are exact (whole
  // contributions, whose running sums are exact, so summing afresh would change nothing and, at a million records,
  // costs a pass over memory as long as the sweep's own); the log densities are recomputed from the sums either way,
  // so that running density changes never accumulate.
  void settle(const Model& m) {
    if constexpr (stored_statistics && !exact_sums) {
      total_.setZero();
      for (const auto& t : statistics_) total_ += t;
    }
    for_each_state([&](auto& st, std::size_t) { st.settle(m, records_, total_); });
  }

  // One Metropolis-Hastings update of record i at theta: x* ~ f(. | theta), accepted with min(1, exp(log alpha)).
  template <random_engine G>
  bool update_record(const Model& m, const parameter_type& theta, std::size_t i, G& g) {
    tally_.uniform_every_move = uniform_every_move();
    return update(m, theta, i, g, tally_);
  }

  // log alpha of replacing record i by x (record_frame::log_acceptance).
  double log_acceptance(const Model& m, std::size_t i, const record_type& x) const {
    double log_alpha = 0.0;
    for_each_state([&](const auto& st, std::size_t) { log_alpha += st.log_change(m, i, records_[i], x); });
    return log_alpha;
  }

  // record_init::consistent (see there): greedy passes with proposals from f(. | theta'), theta' fresh from the prior
  // each pass, accepting rises and ties of the summed log density (from -infinity any finite density is a rise);
  // passes without a rise are idle. Not counted in the acceptance.
  template <random_engine G>
  void start_consistent(const Model& m, G& g) {
    int idle = 0;
    for (int pass = 0; pass < record_init_passes && idle < 5; ++pass) {
      const parameter_type proposal_theta = m.draw_prior(g);
      bool moved = false;
      for (std::size_t i = 0; i < records_.size(); ++i) {
        if constexpr (requires { m.draw_start_record(pass, proposal_theta, i, g, proposal_); })
          m.draw_start_record(pass, proposal_theta, i, g, proposal_);
        else
          draw_into(m, proposal_theta, i, g, proposal_);
        bool changed = false;
        const double log_alpha = evaluate(m, i, proposal_, changed);
        if (changed && log_alpha >= 0.0) {  // ties move too (plateaus of the L1 density), but only rises count
          replace(m, i, proposal_);
          moved = moved || log_alpha > 0.0;
        }
      }
      settle(m);
      idle = moved ? 0 : idle + 1;
    }
  }

  // sum_r log p_r(z_r | S_r(T(x; from, to))): the releases' log density with every record transported (move (t)).
  double transported_log_density(const Model& m, const parameter_type& from, const parameter_type& to) {
    double total = 0.0;
    for_each_state([&](auto& st, std::size_t) { total += st.transported_log_density(m, records_, from, to); });
    return total;
  }
  // Every record transported from `from` to `to`, then the sums recomputed.
  void transport(const Model& m, const parameter_type& from, const parameter_type& to) {
    for (std::size_t i = 0; i < records_.size(); ++i) records_[i] = m.transport(records_[i], i, from, to);
    resum(m);
  }

  // The sums and log densities from the records: with recompute, every statistic and contribution evaluated anew (the
  // records were replaced wholesale); without, the stored ones summed afresh.
  void resum(const Model& m, bool recompute = true) {
    if constexpr (conjugate) {
      total_.setZero();
      for (std::size_t i = 0; i < records_.size(); ++i) {
        if constexpr (moved_statistic) {
          m.add_statistic(total_, records_[i], i, 1.0);
        } else {
          if (recompute) statistics_[i] = m.statistic(records_[i], i);
          total_ += statistics_[i];
        }
      }
    }
    for_each_state([&](auto& st, std::size_t) { st.resum(m, records_, total_, recompute); });
  }

  // Replaces the records (the caller checked their count; the model checks each where it can refuse one:
  // check_record(x)) and recomputes the sums.
  void set_records(const Model& m, const std::vector<record_type>& records) {
    if constexpr (requires(const record_type& x) { m.check_record(x); })
      for (const auto& x : records) m.check_record(x);
    records_ = records;
    resum(m);
  }
  // Sets release r's released value (the sharded frame's share y_k, every sweep) and its log density at the records.
  template <std::size_t r, class Z>
  void set_released(const Z& z) {
    std::get<r>(states_).set_released(z);
  }
  // Release r and its state.
  template <std::size_t r>
  auto& release() noexcept {
    return std::get<r>(states_).release;
  }
  template <std::size_t r>
  const auto& state() const noexcept {
    return std::get<r>(states_);
  }
  template <std::size_t r>
  auto& state() noexcept {
    return std::get<r>(states_);
  }
  template <std::size_t r>
  const auto& released() const noexcept {
    return std::get<r>(states_).z;
  }

  const std::vector<record_type>& records() const noexcept { return records_; }
  const statistic_type& statistic() const noexcept { return total_; }
  template <std::size_t r>
  const auto& release_sum() const noexcept {
    return std::get<r>(states_).sum;
  }
  // S_r of release r given at run time, when every release's sum has type V.
  template <class V>
  const V& release_sum(std::size_t r) const {
    const V* sum = nullptr;
    for_each_state([&](const auto& st, std::size_t k) {
      if (k == r) sum = &st.sum;
    });
    return *sum;
  }
  std::uint64_t proposed() const noexcept { return tally_.proposed; }
  std::uint64_t accepted() const noexcept { return tally_.accepted; }
  double smallest_log_acceptance() const noexcept { return tally_.smallest; }

 private:
  // Record updates proposed and accepted, the smallest log alpha computed (0 before any), and whether a uniform is
  // drawn for every changed proposal (see decide).
  struct tally {
    std::uint64_t proposed = 0, accepted = 0;
    double smallest = 0.0;
    bool uniform_every_move = false;
  };

  // fn(state, index) for every release's state in order.
  template <class Fn>
  void for_each_state(Fn&& fn) {
    [&]<std::size_t... r>(std::index_sequence<r...>) { (fn(std::get<r>(states_), r), ...); }
    (std::index_sequence_for<Releases...>{});
  }
  template <class Fn>
  void for_each_state(Fn&& fn) const {
    [&]<std::size_t... r>(std::index_sequence<r...>) { (fn(std::get<r>(states_), r), ...); }
    (std::index_sequence_for<Releases...>{});
  }

  // Whether some release state can ask for a uniform at every changed proposal (optional member
  // uniform_every_move()), and whether one does.
  static constexpr bool may_ask_uniform = (asks_uniform<typename release_state_for<Model, Releases>::type> || ...);
  bool uniform_every_move() const {
    bool every = false;
    if constexpr (may_ask_uniform)
      for_each_state([&](const auto& st, std::size_t) {
        if constexpr (requires { st.uniform_every_move(); }) every = every || st.uniform_every_move();
      });
    return every;
  }

  // x ~ f(. | theta) into out: in place where the model draws so (a record of run-time size), else by value.
  template <random_engine G>
  static void draw_into(const Model& m, const parameter_type& theta, std::size_t i, G& g, record_type& out) {
    if constexpr (requires { m.draw_record(theta, i, g, out); })
      m.draw_record(theta, i, g, out);
    else
      out = m.draw_record(theta, i, g);
  }

  // The Metropolis-Hastings decision for the drawn proposal x, and the replacement if accepted. A uniform is drawn
  // when log alpha < 0, or for every changed proposal where a release state asks so: a state whose changes are a few
  // loads and adds (the marginal tables' rows) is faster deciding u - 1 < log alpha without a branch on its sign.
  template <random_engine G>
  bool decide(const Model& m, std::size_t i, const record_type& x, G& g, tally& t) {
    ++t.proposed;
    bool changed = false;
    const double log_alpha = evaluate(m, i, x, changed);
    if (changed) {
      t.smallest = std::min(t.smallest, log_alpha);
      if (((may_ask_uniform && t.uniform_every_move) || log_alpha < 0.0) && !log_uniform_below(draw_uniform(g), log_alpha))
        return false;
    }
    ++t.accepted;
    replace(m, i, x);
    return true;
  }

  // update_record, counted into t.
  template <random_engine G>
  bool update(const Model& m, const parameter_type& theta, std::size_t i, G& g, tally& t) {
    // A small record lives in a local, which the stores into the release states cannot alias; a record of run-time
    // size is drawn into the member proposal_, so that sweeps allocate nothing.
    if constexpr (std::is_trivially_copyable_v<record_type> && sizeof(record_type) <= 64) {
      record_type x;
      draw_into(m, theta, i, g, x);
      return decide(m, i, x, g, t);
    } else {
      draw_into(m, theta, i, g, proposal_);
      return decide(m, i, proposal_, g, t);
    }
  }

  // Every release state's change for replacing record i by x; returns log alpha (the sum of the changed releases'
  // log-density changes) and sets changed when any release's contribution differs.
  double evaluate(const Model& m, std::size_t i, const record_type& x, bool& changed) {
    double log_alpha = 0.0;
    for_each_state([&](auto& st, std::size_t) {
      log_alpha += st.evaluate(m, i, records_[i], x);
      changed |= st.changed;
    });
    return log_alpha;
  }

  // Replaces record i by x after evaluate(i, x, ...): T, and the changed releases' states.
  void replace(const Model& m, std::size_t i, const record_type& x) {
    if constexpr (moved_statistic) {
      m.add_statistic(total_, records_[i], i, -1.0);
      m.add_statistic(total_, x, i, 1.0);
    } else if constexpr (stored_statistics) {
      const statistic_type t_new = m.statistic(x, i);
      total_ += t_new - statistics_[i];
      statistics_[i] = t_new;
    }
    for_each_state([&](auto& st, std::size_t) { st.accept(i, records_[i], x); });
    records_[i] = x;
  }

  std::tuple<typename release_state_for<Model, Releases>::type...> states_;
  std::vector<record_type> records_;
  record_type proposal_{};
  std::vector<statistic_type> statistics_;
  statistic_type total_{};
  tally tally_;
};
}  // namespace detail

/// The record-level frame over (theta, x_1..x_n) given R >= 1 releases of the same records (sweep above). Models
/// privpost::sampler. Sweeps allocate nothing beyond what the model's own update does.
template <record_model Model, class... Releases>
requires(sizeof...(Releases) >= 1) && (record_model_for<Model, Releases> && ...) class record_frame {
 public:
  /// The model.
  using model_type = Model;
  /// A record.
  using record_type = typename Model::record_type;
  /// The parameter's type.
  using parameter_type = typename Model::parameter_type;
  /// Type of the model's own contribution (family_statistic), and of every release's sum when all have that type.
  using vector_type = typename Model::vector_type;
  /// Number of releases.
  static constexpr std::size_t release_count = sizeof...(Releases);
  /// The most records a chain holds.
  static constexpr double max_records = record_frame_max_records;
  /// Whether theta | records is the conjugate update on the summed statistic.
  static constexpr bool conjugate = conjugate_record_update<Model>;
  /// Whether the sweep has the collapsed transport move (t).
  static constexpr bool transported = transported_record_model<Model>;

  /// n: the public number of records (a whole number in [1, 1e7]); each release's z has the contribution's size and
  /// finite entries. theta starts from the prior and the records from f(. | theta) (record_init::prior), or also moved
  /// towards the releases (record_init::consistent). std::invalid_argument for a wrong size, a non-finite or
  /// unreachable z or a bad n; std::domain_error if a release has zero density at the initial records.
  template <random_engine G>
  record_frame(Model model, double n, G& g, Releases... releases)
      : record_frame("record_frame", std::move(model), n, g, record_init::prior, std::move(releases)...) {}
  /// As above, with the records' start chosen by init.
  template <random_engine G>
  record_frame(Model model, double n, G& g, record_init init, Releases... releases)
      : record_frame("record_frame", std::move(model), n, g, init, std::move(releases)...) {}

  /// One sweep: (a) theta | records, (t) the transport move where the model has one, (b) every record in turn
  /// (systematic scan), (d) the sums recomputed.
  template <random_engine G>
  void step(G& g) {
    update_parameter(g);
    if constexpr (transported) transport_move(g);
    scan_.sweep(model_, theta_, g);
  }

  /// log alpha of replacing record i by x (before the min with 0): the sum over releases of log p_r(z_r | S_r*) -
  /// log p_r(z_r | S_r), each 0 when that release's contribution is unchanged.
  double log_acceptance(std::size_t i, const record_type& x) const { return scan_.log_acceptance(model_, i, x); }

  /// One Metropolis-Hastings update of record i at the current theta: x* ~ f(. | theta), accepted with probability
  /// min(1, exp(log_acceptance(i, x*))) (no uniform is drawn when that is 1). Returns whether it was accepted.
  template <random_engine G>
  bool update_record(std::size_t i, G& g) {
    return scan_.update_record(model_, theta_, i, g);
  }

  /// The model.
  const Model& model() const noexcept { return model_; }
  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  Eigen::VectorXd parameter_vector() const { return model_.parameter_vector(theta_); }
  /// Sets theta (the kernel tests hold it fixed and call update_record).
  void set_parameter(const parameter_type& theta) { theta_ = theta; }
  /// Replaces the records (the kernel tests); the sums are recomputed. std::invalid_argument for a wrong count.
  void set_records(const std::vector<record_type>& records) {
    check_size_match(std::string(function_) + "::set_records", "records", static_cast<Eigen::Index>(records.size()), "n",
                     static_cast<Eigen::Index>(scan_.records().size()));
    scan_.set_records(model_, records);
  }
  /// The current latent records.
  const std::vector<record_type>& records() const noexcept { return scan_.records(); }
  /// T: the sum of the records' statistics (what a conjugate theta | records is conditioned on).
  const auto& statistic() const noexcept requires conjugate { return scan_.statistic(); }
  /// S_r: the sum of the records' contributions to release r (0-based), when every release's sum is a vector_type.
  const vector_type& release_sum(std::size_t r) const requires(detail::release_sum_is<Model, Releases, vector_type>&&...) {
    if (r >= release_count)
      throw_invalid(std::string(function_) + "::release_sum", "r", static_cast<double>(r),
                    "a release index in [0, " + std::to_string(release_count - 1) + "]");
    return scan_.template release_sum<vector_type>(r);
  }
  /// S_r of release r given at compile time (any release's vector type).
  template <std::size_t r>
  const auto& release_sum() const noexcept {
    return scan_.template release_sum<r>();
  }
  /// Accepted / proposed record updates so far (1 before any).
  double record_acceptance() const noexcept {
    return scan_.proposed() == 0 ? 1.0 : static_cast<double>(scan_.accepted()) / static_cast<double>(scan_.proposed());
  }
  /// The smallest log alpha computed so far (0 before any change of contribution was proposed).
  double smallest_log_acceptance() const noexcept { return scan_.smallest_log_acceptance(); }
  /// Transport moves whose shrinkage stopped at its cap (the move then keeps theta): inner_solver_nonconverged.
  const numerical_events& events() const noexcept { return events_; }

 protected:
  /// The checks and the start under the name `function` (the samplers built on the frame use their own).
  template <random_engine G>
  record_frame(const char* function, Model model, double n, G& g, record_init init, Releases... releases)
      : model_(std::move(model)), scan_(std::move(releases)...), n_(n), function_(function) {
    const char* f = function_;
    if (init != record_init::prior && init != record_init::consistent)
      throw_invalid(f, "init", static_cast<double>(static_cast<int>(init)), "record_init::prior or record_init::consistent");
    check_record_count(f, n);
    if (!(std::floor(n) == n && n <= max_records)) throw_invalid(f, "n", n, "a whole number in [1, 1e7]");
    theta_ = model_.draw_prior(g);
    scan_.fill(model_, static_cast<std::size_t>(n), theta_, g);
    scan_.check_releases(f, model_, n);
    scan_.resum(model_);
    if (init == record_init::consistent) {
      scan_.start_consistent(model_, g);
      update_parameter(g);
    }
    scan_.check_densities(f);
  }

  /// The record scan (the samplers built on the frame read their releases' states).
  const detail::record_scan<Model, Releases...>& scan() const noexcept { return scan_; }

 private:
  // (a): the conjugate update on T, or the model's own step.
  template <random_engine G>
  void update_parameter(G& g) {
    if constexpr (requires { model_.draw_given_statistic(scan_.statistic(), n_, g, theta_); })
      model_.draw_given_statistic(scan_.statistic(), n_, g, theta_);  // in place: a sweep allocates nothing
    else if constexpr (conjugate)
      theta_ = model_.draw_given_statistic(scan_.statistic(), n_, g);
    else
      model_.update_parameter(theta_, scan_.records(), g);
  }

  // (t): one slice-sampling update per coordinate of theta given the records' noise (transported_record_model).
  // g(theta') = log p(theta') + sum_r log p_r(z_r | S_r(T(x; theta, theta'))); stepping out by at most 64 widths on
  // each side and shrinking at most 200 times (Neal 2003, Fig. 3 and 5): a shrinkage at its cap keeps theta (an event).
  template <random_engine G>
  void transport_move(G& g) {
    constexpr int max_steps = 64, max_shrinks = 200;
    const auto coordinates = coordinate_count(theta_);
    for (Eigen::Index k = 0; k < coordinates; ++k) {
      const double current = coordinate(theta_, k);
      const double level = transported_log_density(current, k) + std::log(draw_uniform(g));
      double width = 1.0;
      if constexpr (requires { model_.transport_width(); }) width = model_.transport_width();
      double lo = current - width * draw_uniform(g), hi = lo + width;
      for (int s = 0; s < max_steps && transported_log_density(lo, k) > level; ++s) lo -= width;
      for (int s = 0; s < max_steps && transported_log_density(hi, k) > level; ++s) hi += width;
      double proposal = current;
      bool found = false;
      for (int s = 0; s < max_shrinks && !found; ++s) {
        proposal = lo + (hi - lo) * draw_uniform(g);
        if (transported_log_density(proposal, k) > level)
          found = true;
        else if (proposal < current)
          lo = proposal;
        else
          hi = proposal;
      }
      if (!found) {
        ++events_.inner_solver_nonconverged;
        continue;
      }
      parameter_type to = theta_;
      set_coordinate(to, k, proposal);
      scan_.transport(model_, theta_, to);
      theta_ = to;
    }
  }

  // log p(theta') + sum_r log p_r(z_r | S_r) with coordinate k of theta set to value and the records transported.
  double transported_log_density(double value, Eigen::Index k) {
    parameter_type to = theta_;
    set_coordinate(to, k, value);
    const double log_prior = model_.log_prior(to);
    if (!(log_prior > -std::numeric_limits<double>::infinity())) return log_prior;
    const double total = log_prior + scan_.transported_log_density(model_, theta_, to);
    return std::isnan(total) ? -std::numeric_limits<double>::infinity() : total;
  }

  static Eigen::Index coordinate_count(const parameter_type& theta) {
    if constexpr (std::floating_point<parameter_type>)
      return 1;
    else
      return theta.size();
  }
  static double coordinate(const parameter_type& theta, Eigen::Index k) {
    if constexpr (std::floating_point<parameter_type>)
      return theta;
    else
      return theta(k);
  }
  static void set_coordinate(parameter_type& theta, Eigen::Index k, double value) {
    if constexpr (std::floating_point<parameter_type>)
      theta = value;
    else
      theta(k) = value;
  }

  Model model_;
  detail::record_scan<Model, Releases...> scan_;
  double n_;
  parameter_type theta_{};
  const char* function_;
  numerical_events events_;
};

template <record_model M, random_engine G, class... R>
record_frame(M, double, G&, R...) -> record_frame<M, R...>;
template <record_model M, random_engine G, class... R>
record_frame(M, double, G&, record_init, R...) -> record_frame<M, R...>;

}  // namespace privpost
