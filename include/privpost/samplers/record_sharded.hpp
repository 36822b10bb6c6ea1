// privpost/samplers/record_sharded.hpp
// sharded_record_frame: the record-level frame (samplers/record_frame.hpp) with the n latent records split into K
// shards whose records are updated independently of each other within a sweep: on the processes of an MPI job
// (distributed/mpi.hpp), each holding some shards, or in one process. sharded_record_gibbs (a conjugate family),
// sharded_record_regression (samplers/record_sharded_regression.hpp) and sharded_histogram_gibbs
// (samplers/record_sharded_histogram.hpp) are this frame over their record models and releases.
//
// Why not record_gibbs split over processes: its record updates are sequential, each one's acceptance depends on the
// running sum S after every earlier update, so no two records can move at once without changing the target. The noise
// of an exact scale-mixture mechanism splits instead (Laplace and Gaussian; core/concepts.hpp
// exact_scale_mixture_noise). Write the release as z = S + e with e | w ~ N(0, diag(w)) (w = sigma^2 for the Gaussian,
// w_j ~ Exp(rate 1 / (2 b^2)) for Laplace of scale b), and e = e_1 + ... + e_K with e_k | w iid N(0, diag(w) / K).
// With y_k = s_k + e_k for the sum s_k of shard k's contributions (so y_1 + ... + y_K = z), the augmented target is
//     p(theta) prod_i f(x_i | theta) p(w) prod_k N(y_k - s_k; 0, diag(w) / K)     on the plane sum_k y_k = z,
// whose marginal in (theta, x) is record_gibbs's target: integrating y over the plane gives N(z - S; 0, diag(w)), and w
// then the mechanism's density. A sweep is four Gibbs steps of it:
//   1. theta | records: the conjugate update on the records' exact sum T;
//   2. w | records, z (y integrated out): w_j | z_j - S_j, the scale mixture's redraw (nothing for the Gaussian);
//   3. y | records, w, z: e = y - s is N(0, diag(w) / K) per coordinate conditioned on sum_k e_k = z - S, drawn as
//      e_k = (z - S) / K + xi_k - mean(xi), xi_k iid N(0, w / K) (the projection of an isotropic normal on the plane);
//   4. every record of every shard at fixed y, by Metropolis-Hastings with the model as proposal: x* ~ f(. | theta),
//      alpha = min(1, N(y_k - s_k*; w / K) / N(y_k - s_k; w / K)). Shard k's factor is the only one that involves its
//      records, so the shards' sweeps are independent: the parallel step.
// Step 4 is record_frame's record scan, with the shard's share y_k as its release and N(. ; w / K) as its kernel. The
// shards' sums T and S are then added once (exactly: core/math/exact_sum.hpp) into the global sums of step 1 and 2
// of the next sweep. Step 1 needs sums that add over shards: the conjugate statistic T, or a summary the model writes
// (a regression's Gram matrix; summed_record_model). Steps 1-3 draw from the chain's engine, identically on every process; step 4
// draws from one engine per shard, seeded from the chain's engine at construction. So the chain is a function of the seed and K
// alone: K shards over any number of processes give bit for bit the draws of the same K shards in one process.
//
// The price: K = 1 with Gaussian noise is record_gibbs's kernel; larger K holds each shard to its share y_k of the
// release, which y's redraw moves every sweep, and Laplace noise is sampled through w rather than its exact density
// (no acceptance floor e^-epsilon). The chain targets the same posterior; per sweep it mixes more slowly as K grows
// (tests/samplers/record_sharded_test.cpp measures it). Records start from f(. | theta), theta from the prior.
//
//     sharded_record_gibbs chain(beta_prior(1, 1), laplace_mechanism(1, 0.5), z, 1e6, g, record_sharding{4});
//     infer([&](auto& g) { return sharded_record_gibbs(prior, mechanism, z, n, g, record_sharding{4}); }, options);
//     // over MPI: distributed::sharded_records (distributed/mpi.hpp)
//     sharded_record_frame chain(my_model{...}, n, g, record_sharding{4}, record_release(gaussian_mechanism::published(sd), z));
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/exact_sum.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/mechanisms/noise_views.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/record_releases.hpp"

namespace privpost {

/// How the records of a sharded chain are split: into `shards` shards (K, a setting of the chain: the same K gives
/// the same chain however the shards are placed), of which this process holds shard k when k mod processes ==
/// process. One process holding every shard is {K} (process 0 of 1).
struct record_sharding {
  /// K, the number of shards (in [1, min(n, 2^20)]).
  int shards = 1;
  /// This process's index in [0, processes).
  int process = 0;
  /// The number of processes that hold shards (>= 1).
  int processes = 1;
};

/// The combine step of the sharded samplers: called once a sweep with this process's exact sums, it replaces each by
/// its total over every process holding shards of the chain (exact sums, so the totals and the draws do not depend on
/// how the shards are placed). local_shards in one process; distributed::shard_sums over MPI.
template <class C>
concept shard_combine = std::invocable<C&, std::span<exact_sum>>;

/// The combine step of a chain whose shards are all held in this process: the local sums are the totals already.
struct local_shards {
  /// Leaves the sums as they are.
  void operator()(std::span<exact_sum>) const noexcept {}
};
static_assert(shard_combine<local_shards>);

namespace detail {
// Shard k of K holds records [k n / K, (k + 1) n / K): sizes differ by at most one.
inline std::size_t shard_size(int k, double n, int shards) {
  const auto count = static_cast<std::uint64_t>(n), index = static_cast<std::uint64_t>(k),
             total = static_cast<std::uint64_t>(shards);
  return static_cast<std::size_t>((index + 1) * count / total - index * count / total);
}

// Two seeds drawn once from the chain's engine at construction; shard k's engine is seeded from them and k, the same
// on every process.
struct shard_seeds {
  std::uint64_t a = 0, b = 0;
  template <random_engine G>
  explicit shard_seeds(G& g) : a(static_cast<std::uint64_t>(g())), b(static_cast<std::uint64_t>(g())) {}
  void seed(std::mt19937_64& engine, int k) const {
    const auto index = static_cast<std::uint64_t>(k);
    std::seed_seq seq{static_cast<std::uint32_t>(a),     static_cast<std::uint32_t>(a >> 32),
                      static_cast<std::uint32_t>(b),     static_cast<std::uint32_t>(b >> 32),
                      static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32)};
    engine.seed(seq);
  }
};

// The members every shard has: its global index and its engine (seeded from the chain's engine and the index, the
// same on every process).
struct shard_base {
  int index = 0;
  std::mt19937_64 engine;
};

// std::invalid_argument naming the value unless n is a whole number in [1, 1e9], K in [1, min(n, 2^20)] and the
// process index in [0, processes).
inline void check_sharding(const char* who, const record_sharding& sharding, double n) {
  check_record_count(who, n);
  if (!(std::floor(n) == n && n <= 1e9)) throw_invalid(who, "n", n, "a whole number in [1, 1e9]");
  const double shard_cap = std::min(n, static_cast<double>(1 << 20));
  if (!(sharding.shards >= 1 && sharding.shards <= shard_cap))
    throw_invalid(who, "shards", sharding.shards, "a whole number in [1, min(n, 2^20)] = [1, " + format_value(shard_cap) + "]");
  if (!(sharding.processes >= 1)) throw_invalid(who, "processes", sharding.processes, "at least 1");
  if (!(sharding.process >= 0 && sharding.process < sharding.processes))
    throw_invalid(who, "process", sharding.process,
                  "an index in [0, processes - 1] = [0, " + std::to_string(sharding.processes - 1) + "]");
}

// Where a sharded chain's records live, written once for every sharded sampler: the sharding, the shards this process
// holds (shard k when k mod processes == process), their seeding, the noise shares' delivery to them and the exact
// combine of their sums. Shard derives from shard_base.
template <class Shard, shard_combine Combine>
class shard_placement {
 public:
  // The most records a sharded chain holds over all its shards.
  static constexpr double max_records = 1e9;

  // The sharding's checks (check_sharding).
  shard_placement(const char* who, const record_sharding& sharding, double n, Combine combine)
      : sharding_(sharding), combine_(std::move(combine)), n_(n) {
    check_sharding(who, sharding, n);
  }

  // Seeds the shards from two words of the chain's engine g, then makes this process's in order of their index:
  // fill(sh, size) sizes shard sh and draws its records from sh.engine.
  template <random_engine G, class Fill>
  void place(G& g, Fill&& fill) {
    const shard_seeds seeds(g);
    for (int k = sharding_.process; k < sharding_.shards; k += sharding_.processes) {
      Shard sh;
      sh.index = k;
      seeds.seed(sh.engine, k);
      fill(sh, shard_size(k, n_, sharding_.shards));
      shards_.push_back(std::move(sh));
    }
  }

  // split.redraw (noise_split) of the release z given the records' sum, every shard's share drawn from g on every
  // process and written into share_of(h)(j) of the held ones (h: the shard's position among this process's).
  template <class Split, class Z, class S, random_engine G, class ShareOf>
  void redraw_shares(Split& split, const Z& z, const S& sum, G& g, ShareOf&& share_of) {
    split.redraw(
        z, sum, g, [&](int k) { return k % sharding_.processes == sharding_.process; },
        [&](int k, Eigen::Index j, double share) { share_of(static_cast<std::size_t>(k / sharding_.processes))(j) = share; });
  }

  // The exact totals over every shard of every process: add(sh, put) passes shard sh's values to put in a fixed order
  // (put(v) adds v to the next of `sums`); then combine totals them over the processes.
  template <class Add>
  void combine(std::span<exact_sum> sums, Add&& add) {
    for (auto& x : sums) x = exact_sum();
    for (const Shard& sh : shards_) {
      std::size_t at = 0;
      add(sh, [&](double v) { sums[at++].add(v); });
    }
    combine_(sums);
  }

  std::vector<Shard>& shards() noexcept { return shards_; }
  const std::vector<Shard>& shards() const noexcept { return shards_; }
  const Shard& held(std::size_t h) const { return shards_.at(h); }
  const record_sharding& sharding() const noexcept { return sharding_; }

 private:
  record_sharding sharding_;
  Combine combine_;
  double n_;
  std::vector<Shard> shards_;
};

// Steps 2 and 3 of the split (the file comment) and the shards' kernel, for a release of `dimension` coordinates
// split into K shares: w_j | z_j - S_j, then every shard's share e_k = (z - S) / K + xi_k - mean(xi) of the residual.
// Mechanism is noise that is exactly a Gaussian scale mixture on the real line (an exact_scale_mixture_noise
// mechanism, or a coordinate_noise view whose exact_split() the caller checked): only redraw_variance is used.
template <class Mechanism>
requires requires(const Mechanism& m, double residual, std::mt19937_64& g) {
  { m.redraw_variance(residual, g) } -> std::convertible_to<double>;
}
class noise_split {
 public:
  noise_split(const Mechanism& mechanism, int shards, Eigen::Index dimension)
      : mechanism_(mechanism),
        shards_(static_cast<double>(shards)),
        w_(Eigen::VectorXd::Zero(dimension)),
        half_precision_(Eigen::VectorXd::Zero(dimension)),
        xi_(static_cast<std::size_t>(shards)) {}

  // Redraws w and the shares from the chain's engine (all K drawn on every process, so that engine stays in step);
  // share(k, j, value) receives held shard k's share of coordinate j (k_held(k) says whether k is held).
  template <class Z, class S, random_engine G, class Held, class Share>
  void redraw(const Z& z, const S& sum, G& g, Held&& held, Share&& share) {
    for (Eigen::Index j = 0; j < w_.size(); ++j) {
      const double residual = z(j) - sum(j);
      w_(j) = mechanism_.redraw_variance(residual, g);  // the Gaussian's sigma^2 without a draw
      half_precision_(j) = 0.5 * shards_ / w_(j);
      const double sd = std::sqrt(w_(j) / shards_);
      double mean = 0.0;
      for (double& x : xi_) mean += (x = sd * draw_normal(g));
      mean /= shards_;
      for (std::size_t k = 0; k < xi_.size(); ++k)
        if (held(static_cast<int>(k))) share(static_cast<int>(k), j, residual / shards_ + (xi_[k] - mean));
    }
  }

  // log N(e - delta; 0, w / K) - log N(e; 0, w / K) summed over the coordinates: the shard kernel's log alpha.
  template <class E, class D>
  double log_alpha(const E& share, const D& delta) const {
    double l = 0.0;
    for (Eigen::Index j = 0; j < w_.size(); ++j) l += half_precision_(j) * delta(j) * (2.0 * share(j) - delta(j));
    return l;
  }

  const Eigen::VectorXd& variances() const noexcept { return w_; }
  // K / (2 w_j): the kernel's weight of coordinate j (a change delta of it adds half_precision(j) delta (2 e_j - delta)).
  double half_precision(Eigen::Index j) const noexcept { return half_precision_(j); }

 private:
  Mechanism mechanism_;
  double shards_;
  Eigen::VectorXd w_, half_precision_;
  std::vector<double> xi_;
};
}  // namespace detail

namespace detail {
// Step 4's kernel for one shard: N(y_k - s_k; 0, diag(w) / K) up to its constant, as a release_kernel of the shard's
// record_scan whose released value is y_k; the weights K / (2 w_j) are set every sweep from the split.
struct share_kernel {
  Eigen::VectorXd half_precision;
  template <class Y, class S>
  double log_likelihood(const Y& y, const S& s) const {
    double l = 0.0;
    for (Eigen::Index j = 0; j < half_precision.size(); ++j) l -= half_precision(j) * (y(j) - s(j)) * (y(j) - s(j));
    return l;
  }
  // e^2 - (e - delta)^2 = delta (2 e - delta) per coordinate, e = y - s, delta = s_new - s.
  template <class Y, class S>
  double log_density_change(const Y& y, const S& s, const S& s_new) const {
    double l = 0.0;
    for (Eigen::Index j = 0; j < half_precision.size(); ++j) {
      const double delta = s_new(j) - s(j);
      l += half_precision(j) * delta * (2.0 * (y(j) - s(j)) - delta);
    }
    return l;
  }
};

// How a sharded chain's release is split over its shards (steps 2 and 3 of the file comment) and delivered to their
// record scans, one specialisation per kind of release: a record_release through exact scale-mixture noise here,
// linear_query_releases in samplers/record_sharded_histogram.hpp. Each gives the release a shard's scan reads
// (shard_release), its checks, the exact sums it adds to the sweep's combine (sum_count, put, take) and redraw.
template <class Model, class Release>
class release_split;

// The noise a record_release's mechanism splits by: its own scale mixture where it declares one exactly (Laplace,
// Gaussian, a variant of them), else its coordinate view (a mechanism the user adapts through noise_traits), whose
// exact_split() the split checks.
template <class M>
using split_noise_t = std::conditional_t<exact_scale_mixture_noise<M>, M, coordinate_noise>;
template <class M>
split_noise_t<M> split_noise(const M& m) {
  if constexpr (exact_scale_mixture_noise<M>)
    return m;
  else
    return coordinate_view(m);
}

// A record_release of summed contributions: the shard's release is its share y_k under share_kernel; the combine
// adds the released sum S.
template <class Model, class Mechanism, class Contribution>
requires exact_scale_mixture_noise<Mechanism> || coordinatewise_mechanism<Mechanism>
class release_split<Model, record_release<Mechanism, Contribution>> {
 public:
  using shard_release = record_release<share_kernel, Contribution>;
  using vector_type = release_vector_t<Model, shard_release>;

  release_split(record_release<Mechanism, Contribution> release, int shards)
      : split_(split_noise(release.mechanism), shards, release.z.size()),
        scale_(noise_scale(release.mechanism)),
        z_(std::move(release.z)),
        contribution_(std::move(release.contribution)) {
    if constexpr (!exact_scale_mixture_noise<Mechanism>) {
      const coordinate_noise view = coordinate_view(release.mechanism);
      granularity_ = view.granularity();
      scale_ = view.scale();  // the reachability rule's scale from the view, as histogram_measurement's
    }
  }

  // Noise that splits exactly (on the real line); z of the contribution's size (of a record drawn with a scratch
  // engine: the chain's engines are untouched), with finite entries within reach of n records' sums.
  void check(const char* who, const Model& m, const typename Model::parameter_type& theta, double n) const {
    if (granularity_ != 0.0)
      throw_invalid(who, "the mechanism's granularity", granularity_,
                    "0: noise on the real line, Laplace or Gaussian (lattice noise does not split exactly over shards)");
    std::mt19937_64 scratch;
    const auto c = contribute(m, contribution_, m.draw_record(theta, 0, scratch), 0);
    check_summed_release(who, m, contribution_, n, "z", z_, c.size(), scale_);
  }

  shard_release release() const {
    return shard_release(share_kernel{Eigen::VectorXd::Zero(z_.size())}, Eigen::VectorXd::Zero(z_.size()), contribution_);
  }
  // Buffers for the shares of the `held` shards of this process.
  void hold(std::size_t held) { shares_.assign(held, Eigen::VectorXd::Zero(z_.size())); }

  std::size_t sum_count() const noexcept { return static_cast<std::size_t>(z_.size()); }
  template <class Scan, class Put>
  static void put(const Scan& scan, Put& put) {
    const auto& s = scan.template release_sum<0>();
    for (Eigen::Index j = 0; j < s.size(); ++j) put(s(j));
  }
  void take(const exact_sum* sums) {
    sum_.resize(z_.size());
    for (Eigen::Index j = 0; j < z_.size(); ++j) sum_(j) = sums[j].value();
  }

  // w and every shard's share from the chain's engine; each held shard's kernel weights and released y_k = s_k + e_k.
  template <class Place, class Statistic, random_engine G>
  void redraw(Place& place, const Statistic&, G& g) {
    place.redraw_shares(split_, z_, sum_, g, [&](std::size_t h) -> Eigen::VectorXd& { return shares_[h]; });
    for (std::size_t h = 0; h < shares_.size(); ++h) {
      auto& scan = *place.shards()[h].scan;
      auto& weights = scan.template release<0>().mechanism.half_precision;
      for (Eigen::Index j = 0; j < z_.size(); ++j) weights(j) = split_.half_precision(j);
      scan.template set_released<0>(scan.template release_sum<0>() + shares_[h]);
    }
  }

  const vector_type& release_sum() const noexcept { return sum_; }
  const Eigen::VectorXd& variances() const noexcept { return split_.variances(); }

 private:
  noise_split<split_noise_t<Mechanism>> split_;
  double granularity_ = 0.0;  // of a coordinate view: 0 on the real line
  double scale_;
  Eigen::VectorXd z_;
  Contribution contribution_;
  vector_type sum_{};
  std::vector<Eigen::VectorXd> shares_;
};
}  // namespace detail

/// A record model whose parameter given the records is drawn from sums over the records that add across shards: the
/// conjugate statistic T (conjugate_record_update), or a summary the model writes (summarise(records, S), a matrix of
/// sums) and draws from (update_from_summary(theta, S, n, g)), such as a regression's Gram matrix. What a sharded
/// chain combines.
template <class M>
concept summed_record_model = record_model<M> &&
    (conjugate_record_update<M> || requires(M & m, const M& cm, const std::vector<typename M::record_type>& records,
                                            Eigen::MatrixXd& s, typename M::parameter_type& theta, std::mt19937_64& g) {
      cm.summarise(records, s);
      m.update_from_summary(theta, s, 1.0, g);
    });

/// A release the sharded frame splits over shards for model M: a record_release through a mechanism whose noise is
/// exactly a Gaussian scale mixture (Laplace, Gaussian: exact_scale_mixture_noise) or has a coordinate view on the
/// real line (coordinatewise_mechanism: a user's mechanism through noise_traits; lattice noise is refused when the
/// chain is built), or linear_query_releases of Laplace or Gaussian noise (samplers/record_sharded_histogram.hpp).
template <class R, class M>
concept sharded_release_for = record_model_for<M, R> && requires {
  sizeof(detail::release_split<M, R>);
};

/// The record-level frame with the records in K shards (see the file comment): the placement of record_frame's sweep
/// for a summed_record_model and one release that splits over shards (sharded_release_for). Every shard is a record
/// scan of record_frame's, whose release is its share of the split noise. Combine is called once per sweep (and once
/// at construction) with this process's exact sums (the model's summed statistic, then the release's, each
/// coordinate) and must replace them by their totals over every process holding shards: local_shards in one process,
/// distributed::shard_sums over MPI. Models privpost::sampler.
template <summed_record_model Model, sharded_release_for<Model> Release, shard_combine Combine = local_shards>
class sharded_record_frame {
  using split_type = detail::release_split<Model, Release>;
  using scan_type = detail::record_scan<Model, typename split_type::shard_release>;
  static constexpr bool conjugate = conjugate_record_update<Model>;
  static constexpr bool summed = detail::is_record_release<Release>;

 public:
  /// The model.
  using model_type = Model;
  /// A record.
  using record_type = typename Model::record_type;
  /// The parameter's type.
  using parameter_type = typename Model::parameter_type;
  /// The most records a chain holds over all its shards.
  static constexpr double max_records = 1e9;

  /// The chain of n records in K shards given the release (a record_release through Laplace or Gaussian noise, of what
  /// the data owner summed per record; or linear_query_releases): theta from the prior, each held shard's records
  /// from the model (its own engine), then the sums. std::invalid_argument naming the value unless n is a whole number
  /// in [1, 1e9], K in [1, min(n, 2^20)], the process in [0, processes) and the release's values of the right size,
  /// finite and within reach of the records' sums.
  template <random_engine G>
  sharded_record_frame(Model model, double n, G& g, record_sharding sharding, Release release, Combine combine = {})
      : sharded_record_frame("sharded_record_frame", std::move(model), n, g, sharding, std::move(release), std::move(combine)) {}

  /// One sweep: theta | records, then the release's split given the records (from the chain's engine g, identical on
  /// every process), then every record of this process's shards (from the shards' engines), then the sums' total over
  /// processes.
  template <random_engine G>
  void step(G& g) {
    if constexpr (requires { model_.draw_given_statistic(statistic_, n_, g, theta_); })
      model_.draw_given_statistic(statistic_, n_, g, theta_);  // in place: a sweep allocates nothing
    else if constexpr (conjugate)
      theta_ = model_.draw_given_statistic(statistic_, n_, g);
    else
      model_.update_from_summary(theta_, summary_, n_, g);
    split_.redraw(place_, statistic_, g);
    for (auto& sh : place_.shards()) sh.scan->sweep(model_, theta_, sh.engine);
    combine_sums();
  }

  /// log alpha of replacing record i of held shard h (0-based among this process's shards) by x at the current shares
  /// and weights: sum_j K / (2 w_j) (e_j^2 - (e_j - delta_j)^2), e the shard's share y_k - s_k, delta the change of its
  /// contribution (0 when unchanged). The kernel tests use it.
  double log_acceptance(std::size_t h, std::size_t i, const record_type& x) const {
    return place_.held(h).scan->log_acceptance(model_, i, x);
  }

  /// The model.
  const Model& model() const noexcept { return model_; }
  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  Eigen::VectorXd parameter_vector() const { return model_.parameter_vector(theta_); }
  /// The model's summary of every shard's records (after the last combine), for a model that is not conjugate.
  const Eigen::MatrixXd& summary() const noexcept requires(!conjugate) { return summary_; }
  /// T: the sum of every record's statistic (over all shards, after the last combine), for a conjugate model.
  const auto& statistic() const noexcept requires conjugate { return statistic_; }
  /// S: the sum of every record's contribution (what the mechanism released a noisy copy of), after the last combine.
  const auto& release_sum() const noexcept requires summed { return split_.release_sum(); }
  /// The noise variances w of the last sweep (sigma^2 for the Gaussian; 0 before any sweep).
  const Eigen::VectorXd& noise_variances() const noexcept requires summed { return split_.variances(); }
  /// How the records are split.
  const record_sharding& sharding() const noexcept { return place_.sharding(); }
  /// The number of shards this process holds.
  std::size_t held_shards() const noexcept { return place_.shards().size(); }
  /// The global index of held shard h (0-based among this process's shards).
  int shard_index(std::size_t h) const { return place_.held(h).index; }
  /// The records of held shard h.
  const std::vector<record_type>& shard_records(std::size_t h) const { return place_.held(h).scan->records(); }
  /// y_k - s_k, held shard h's share of the release noise (0 before any sweep).
  auto shard_share(std::size_t h) const requires summed {
    const auto& scan = *place_.held(h).scan;
    return typename split_type::vector_type(scan.template released<0>() - scan.template release_sum<0>());
  }
  /// Accepted / proposed record updates of this process's shards so far (1 before any).
  double record_acceptance() const noexcept {
    std::uint64_t proposed = 0, accepted = 0;
    for (const shard& sh : place_.shards()) {
      proposed += sh.scan->proposed();
      accepted += sh.scan->accepted();
    }
    return proposed == 0 ? 1.0 : static_cast<double>(accepted) / static_cast<double>(proposed);
  }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 protected:
  /// As above, under the name `who` (the samplers built on the frame use their own).
  template <random_engine G>
  sharded_record_frame(const char* who, Model model, double n, G& g, record_sharding sharding, Release release, Combine combine)
      : model_(std::move(model)),
        n_(n),
        place_(who, sharding, n, std::move(combine)),
        split_(std::move(release), place_.sharding().shards) {
    theta_ = model_.draw_prior(g);
    split_.check(who, model_, theta_, n);
    // The summed statistic's shape, from a record of a scratch engine (the chain's engines are untouched) or the
    // model's summary of no records: a process that holds no shard still takes part in every combine.
    std::size_t entries = 0;
    if constexpr (conjugate) {
      std::mt19937_64 scratch;
      statistic_ = model_.statistic(model_.draw_record(theta_, 0, scratch), 0);
      statistic_.setZero();
      entries = static_cast<std::size_t>(statistic_.size());
    } else {
      model_.summarise({}, summary_);
      entries = static_cast<std::size_t>(summary_.size());
    }
    sums_.resize(entries + split_.sum_count());
    const auto release_of_shard = split_.release();
    place_.place(g, [&](shard& sh, std::size_t size) {
      sh.scan.emplace(release_of_shard);
      sh.scan->fill(model_, size, theta_, sh.engine);
      sh.scan->resum(model_);
    });
    split_.hold(place_.shards().size());
    combine_sums();
  }

 private:
  struct shard : detail::shard_base {
    std::optional<scan_type> scan;  // made by place (a contribution rule need not have a default)
  };

  // The summed statistic (T or the model's summary) and the release's sums over every shard: this process's shards
  // added exactly, then the total over processes.
  void combine_sums() {
    place_.combine(std::span<exact_sum>(sums_), [&](const shard& sh, auto put) {
      if constexpr (conjugate) {
        const auto& t = sh.scan->statistic();
        for (Eigen::Index j = 0; j < t.size(); ++j) put(t(j));
      } else {
        const Eigen::MatrixXd& s = summary_of(sh);
        for (Eigen::Index j = 0; j < s.size(); ++j) put(s.data()[j]);
      }
      split_type::put(*sh.scan, put);
    });
    const std::size_t entries = sums_.size() - split_.sum_count();
    for (std::size_t j = 0; j < entries; ++j) {
      if constexpr (conjugate)
        statistic_(static_cast<Eigen::Index>(j)) = sums_[j].value();
      else
        summary_.data()[j] = sums_[j].value();
    }
    split_.take(sums_.data() + entries);
  }

  // The model's summary of shard sh's records.
  const Eigen::MatrixXd& summary_of(const shard& sh) {
    model_.summarise(sh.scan->records(), shard_summary_);
    return shard_summary_;
  }

  Model model_;
  double n_;
  detail::shard_placement<shard, Combine> place_;
  split_type split_;
  parameter_type theta_{};
  std::vector<exact_sum> sums_;
  typename detail::record_statistic<Model>::type statistic_{};
  Eigen::MatrixXd summary_, shard_summary_;
  numerical_events events_;
};

template <record_model M, random_engine G, class R>
sharded_record_frame(M, double, G&, record_sharding, R) -> sharded_record_frame<M, R>;
template <record_model M, random_engine G, class R, class C>
sharded_record_frame(M, double, G&, record_sharding, R, C) -> sharded_record_frame<M, R, C>;

/// The record-level sampler over (theta, x_1..x_n) with the records in K shards (see the file comment), for a
/// conjugate prior whose family draws records and a mechanism whose noise is exactly a Gaussian scale mixture:
/// sharded_record_frame over conjugate_record_model<Prior>. Models privpost::sampler. Sweeps allocate nothing in one
/// process.
template <conjugate_prior Prior, exact_scale_mixture_noise Mechanism,
          class Contribution = statistic_contribution<typename Prior::family>, shard_combine Combine = local_shards>
requires record_generating_family<typename Prior::family> && record_contribution<Contribution, typename Prior::family>
class sharded_record_gibbs
    : public sharded_record_frame<conjugate_record_model<Prior>, record_release<Mechanism, Contribution>, Combine> {
  using base = sharded_record_frame<conjugate_record_model<Prior>, record_release<Mechanism, Contribution>, Combine>;

 public:
  /// The exponential family.
  using family = typename Prior::family;

  /// z: the release (family::dimension finite entries, within reach of the records' sums), n: the public number of
  /// records (a whole number in [1, 1e9]), sharding: K and this process's shards, contribution: what the owner summed
  /// per record, combine: the sums' total over processes. theta starts from the prior and the records from
  /// f(. | theta). std::invalid_argument naming the value for a wrong size, a non-finite or unreachable z, a bad n, K
  /// outside [1, min(n, 2^20)], or a process index outside [0, processes).
  template <random_engine G>
  sharded_record_gibbs(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g,
                       record_sharding sharding, Contribution contribution = {}, Combine combine = {})
      : base("sharded_record_gibbs", {prior}, n, g, sharding,
             record_release<Mechanism, Contribution>(mechanism, z, std::move(contribution)), std::move(combine)) {}
};

template <conjugate_prior Prior, exact_scale_mixture_noise Mechanism, class Z, random_engine G>
sharded_record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&, record_sharding)
    -> sharded_record_gibbs<Prior, Mechanism>;
template <conjugate_prior Prior, exact_scale_mixture_noise Mechanism, class Z, random_engine G, class C>
sharded_record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&, record_sharding, C)
    -> sharded_record_gibbs<Prior, Mechanism, C>;
template <conjugate_prior Prior, exact_scale_mixture_noise Mechanism, class Z, random_engine G, class C, class Combine>
sharded_record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&, record_sharding, C, Combine)
    -> sharded_record_gibbs<Prior, Mechanism, C, Combine>;

}  // namespace privpost
