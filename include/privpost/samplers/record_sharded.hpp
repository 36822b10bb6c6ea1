// privpost/samplers/record_sharded.hpp
// sharded_record_gibbs: the record-level sampler (samplers/record_augmented.hpp) with the n latent records split into
// K shards whose records are updated independently of each other within a sweep: on the processes of an MPI job
// (distributed/mpi.hpp), each holding some shards, or in one process.
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
// The shards' sums T and S are then added once (exactly: core/math/exact_sum.hpp) into the global sums of step 1 and 2
// of the next sweep. Steps 1-3 draw from the chain's engine, identically on every process; step 4 draws from one
// engine per shard, seeded from the chain's engine at construction. So the chain is a function of the seed and K
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
// The regression and histogram relatives: samplers/record_sharded_regression.hpp, samplers/record_sharded_histogram.hpp.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/exact_sum.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"
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

// The members every shard has: its global index, its engine (seeded from the chain's engine and the index, the same
// on every process) and its record proposals made and accepted.
struct shard_base {
  int index = 0;
  std::mt19937_64 engine;
  std::uint64_t proposed = 0, accepted = 0;
};

// Where a sharded chain's records live, written once for every sharded sampler: the sharding, the shards this process
// holds (shard k when k mod processes == process), their seeding, the noise shares' delivery to them and the exact
// combine of their sums. Shard derives from shard_base.
template <class Shard, shard_combine Combine>
class shard_placement {
 public:
  // The most records a sharded chain holds over all its shards.
  static constexpr double max_records = 1e9;

  // std::invalid_argument naming the value unless n is a whole number in [1, 1e9], K in [1, min(n, 2^20)] and the
  // process index in [0, processes).
  shard_placement(const char* who, const record_sharding& sharding, double n, Combine combine)
      : sharding_(sharding), combine_(std::move(combine)), n_(n) {
    check_record_count(who, n);
    if (!(std::floor(n) == n && n <= max_records)) throw_invalid(who, "n", n, "a whole number in [1, 1e9]");
    const double shard_cap = std::min(n, static_cast<double>(1 << 20));
    if (!(sharding.shards >= 1 && sharding.shards <= shard_cap))
      throw_invalid(who, "shards", sharding.shards, "a whole number in [1, min(n, 2^20)] = [1, " + format_value(shard_cap) + "]");
    if (!(sharding.processes >= 1)) throw_invalid(who, "processes", sharding.processes, "at least 1");
    if (!(sharding.process >= 0 && sharding.process < sharding.processes))
      throw_invalid(who, "process", sharding.process,
                    "an index in [0, processes - 1] = [0, " + std::to_string(sharding.processes - 1) + "]");
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
  // process and written into share_of(sh)(j) of the held ones.
  template <class Split, class Z, class S, random_engine G, class ShareOf>
  void redraw_shares(Split& split, const Z& z, const S& sum, G& g, ShareOf&& share_of) {
    split.redraw(
        z, sum, g, [&](int k) { return k % sharding_.processes == sharding_.process; },
        [&](int k, Eigen::Index j, double share) {
          share_of(shards_[static_cast<std::size_t>(k / sharding_.processes)])(j) = share;
        });
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

  // Accepted / proposed record updates over this process's shards (1 before any).
  double acceptance() const noexcept {
    std::uint64_t proposed = 0, accepted = 0;
    for (const Shard& sh : shards_) {
      proposed += sh.proposed;
      accepted += sh.accepted;
    }
    return proposed == 0 ? 1.0 : static_cast<double>(accepted) / static_cast<double>(proposed);
  }

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

/// The record-level sampler over (theta, x_1..x_n) with the records in K shards (see the file comment for the
/// augmentation and the sweep), for a conjugate prior whose family draws records and a mechanism whose noise is exactly
/// a Gaussian scale mixture. Combine is called once per sweep (and once at construction) with this process's 2 d exact
/// sums (the records' statistic T, then the released sum S, each coordinate) and must replace them by their totals
/// over every process holding shards: local_shards in one process, distributed::shard_sums over MPI. Models
/// privpost::sampler. Sweeps allocate nothing in one process.
template <conjugate_prior Prior, exact_scale_mixture_noise Mechanism,
          class Contribution = statistic_contribution<typename Prior::family>, shard_combine Combine = local_shards>
requires record_generating_family<typename Prior::family> && record_contribution<Contribution, typename Prior::family>
class sharded_record_gibbs {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// A record.
  using record_type = typename family::record_type;
  /// The family's parameter type.
  using parameter_type = typename family::parameter_type;
  /// Type of t(x).
  using vector_type = typename family::vector_type;
  /// The most records a chain holds over all its shards.
  static constexpr double max_records = 1e9;

  /// z: the release (family::dimension finite entries, within reach of the records' sums), n: the public number of
  /// records (a whole number in [1, 1e9]), sharding: K and this process's shards, contribution: what the owner summed
  /// per record, combine: the sums' total over processes. theta starts from the prior and the records from
  /// f(. | theta). std::invalid_argument naming the value for a wrong size, a non-finite or unreachable z, a bad n, K
  /// outside [1, min(n, 2^20)], or a process index outside [0, processes).
  template <random_engine G>
  sharded_record_gibbs(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g,
                       record_sharding sharding, Contribution contribution = {}, Combine combine = {})
      : prior_(prior),
        contribution_(std::move(contribution)),
        n_(n),
        place_("sharded_record_gibbs", sharding, n, std::move(combine)),
        split_(mechanism, place_.sharding().shards, family::dimension) {
    constexpr const char* f = "sharded_record_gibbs";
    check_size_match(f, "z", z.size(), "the family's statistic size", family::dimension);
    check_finite(f, "z", z);
    for (int j = 0; j < family::dimension; ++j) {
      const auto [lo, hi] = detail::contribution_sum_range<family>(contribution_, n, j);
      check_reachable(f, family::dimension == 1 ? std::string("z") : "z(" + std::to_string(j) + ")", z(j), lo, hi, n,
                      noise_scale(mechanism));
    }
    z_ = z;
    theta_ = prior_.draw(g);
    place_.place(g, [&](shard& sh, std::size_t size) {
      sh.records.resize(size);
      sh.statistics.resize(size);
      sh.contributions.resize(size);
      for (auto& x : sh.records) x = family::draw_record(theta_, sh.engine);
      resum(sh);
    });
    combine_sums();
  }

  /// One sweep: theta | records, w | records, y | records (from the chain's engine g, identical on every process),
  /// then every record of this process's shards (from the shards' engines), then the sums' total over processes.
  template <random_engine G>
  void step(G& g) {
    theta_ = prior_.update(total_, n_).draw(g);
    place_.redraw_shares(split_, z_, release_sum_, g, [](shard& sh) -> vector_type& { return sh.share; });
    for (auto& sh : place_.shards()) sweep(sh);
    combine_sums();
  }

  /// log alpha of replacing record i of held shard h (0-based among this process's shards) by x at the current y and
  /// w: sum_j K / (2 w_j) (e_j^2 - (e_j - delta_j)^2), e the shard's share y_k - s_k, delta the change of its
  /// contribution (0 when unchanged). The kernel tests use it.
  double log_acceptance(std::size_t h, std::size_t i, const record_type& x) const {
    const shard& sh = place_.held(h);
    const vector_type delta = contribution_(x) - sh.contributions.at(i);
    return split_.log_alpha(sh.share, delta);
  }

  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return family_model<family>::parameter_vector(theta_); }
  /// T: the sum of every record's statistic (over all shards, after the last combine).
  const vector_type& statistic() const noexcept { return total_; }
  /// S: the sum of every record's contribution (what the mechanism released a noisy copy of).
  const vector_type& release_sum() const noexcept { return release_sum_; }
  /// The noise variances w of the last sweep (sigma^2 for the Gaussian; 0 before any sweep).
  const Eigen::VectorXd& noise_variances() const noexcept { return split_.variances(); }
  /// How the records are split.
  const record_sharding& sharding() const noexcept { return place_.sharding(); }
  /// The number of shards this process holds.
  std::size_t held_shards() const noexcept { return place_.shards().size(); }
  /// The global index of held shard h (0-based among this process's shards).
  int shard_index(std::size_t h) const { return place_.held(h).index; }
  /// The records of held shard h.
  const std::vector<record_type>& shard_records(std::size_t h) const { return place_.held(h).records; }
  /// y_k - s_k, held shard h's share of the release noise at the last sweep (0 before any).
  const vector_type& shard_share(std::size_t h) const { return place_.held(h).share; }
  /// Accepted / proposed record updates of this process's shards so far (1 before any).
  double record_acceptance() const noexcept { return place_.acceptance(); }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  struct shard : detail::shard_base {
    std::vector<record_type> records;
    std::vector<vector_type> statistics, contributions;
    vector_type t = vector_type::Zero(), s = vector_type::Zero(), share = vector_type::Zero();
    bool whole = true;  // every statistic and contribution a whole number: the running sums are exact
  };

  // Step 4 for one shard: the records in turn at fixed y (the shard's share y_k - s_k moves with s_k).
  void sweep(shard& sh) {
    for (std::size_t i = 0; i < sh.records.size(); ++i) {
      const record_type x = family::draw_record(theta_, sh.engine);
      ++sh.proposed;
      const vector_type c = contribution_(x);
      const vector_type delta = c - sh.contributions[i];
      if (!(c == sh.contributions[i])) {
        const double l = split_.log_alpha(sh.share, delta);
        if (l < 0.0 && !log_uniform_below(draw_uniform(sh.engine), l)) continue;
        sh.s += delta;
        sh.share -= delta;
        sh.whole = sh.whole && whole(c);
        sh.contributions[i] = c;
      }
      ++sh.accepted;
      const vector_type t = family::statistic(x);
      sh.whole = sh.whole && whole(t);
      sh.t += t - sh.statistics[i];
      sh.statistics[i] = t;
      sh.records[i] = x;
    }
    // Running sums of real-valued statistics drift by rounding: recomputed in record order, so a shard's sums depend
    // on its records alone (not on the order of the updates), as the bit-for-bit rule across processes needs.
    if (!sh.whole) resum(sh);
  }

  void resum(shard& sh) const {
    sh.t.setZero();
    sh.s.setZero();
    sh.whole = true;
    for (std::size_t i = 0; i < sh.records.size(); ++i) {
      sh.statistics[i] = family::statistic(sh.records[i]);
      sh.contributions[i] = contribution_(sh.records[i]);
      sh.t += sh.statistics[i];
      sh.s += sh.contributions[i];
      sh.whole = sh.whole && whole(sh.statistics[i]) && whole(sh.contributions[i]);
    }
  }

  // T and S over every shard: this process's shards added exactly, then the total over processes.
  void combine_sums() {
    constexpr auto d = static_cast<std::size_t>(family::dimension);
    place_.combine(std::span<exact_sum>(sums_), [](const shard& sh, auto put) {
      for (Eigen::Index j = 0; j < family::dimension; ++j) put(sh.t(j));
      for (Eigen::Index j = 0; j < family::dimension; ++j) put(sh.s(j));
    });
    for (std::size_t j = 0; j < d; ++j) {
      total_(static_cast<Eigen::Index>(j)) = sums_[j].value();
      release_sum_(static_cast<Eigen::Index>(j)) = sums_[d + j].value();
    }
  }

  static bool whole(const vector_type& v) {
    for (Eigen::Index j = 0; j < v.size(); ++j)
      if (!(std::floor(v(j)) == v(j) && std::abs(v(j)) < 4.5e15)) return false;
    return true;
  }

  Prior prior_;
  Contribution contribution_;
  double n_;
  detail::shard_placement<shard, Combine> place_;
  detail::noise_split<Mechanism> split_;
  Eigen::VectorXd z_;
  parameter_type theta_{};
  std::array<exact_sum, 2 * static_cast<std::size_t>(family::dimension)> sums_{};
  vector_type total_ = vector_type::Zero(), release_sum_ = vector_type::Zero();
  numerical_events events_;
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
