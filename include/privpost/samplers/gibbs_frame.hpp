// privpost/samplers/gibbs_frame.hpp
// gibbs_frame: the one Gibbs-SS sweep (dissertation Algorithm 3; 001 Algorithm 1) with pluggable blocks. A sweep is:
// the parameter block, the sum block (s | theta and the release), then the block's noise variances (w | s, z) if it
// keeps any. The parameter block is theta | s by Conjugate-Update, then the model's nuisance block if it has one, then
// the optional collapsed prior-proposal moves on theta with s integrated out; or the model's own draw
// (parameter_drawing_model: glm_collapsed_model's NUTS with s integrated out). The sum blocks:
//   clt_sum (gibbs_ss.hpp)              Gibbs-SS's CLT normal times the release's scale mixture (NormProduct; Matheron's
//                                       rule for a singular covariance), on the model's valid set; any statistic_model;
//   truncated_sum (gibbs_ss_truncated.hpp) the (total, centre) pair of a truncated release, on truncated_model<F>;
//   enumerated_sum (gibbs_ss_exact.hpp) the exact conditional of an integer sum over its whole finite support;
//   window_sum (gibbs_ss_window.hpp)    the exact conditional over the window around its mode (unbounded supports);
//   corrected_sum (gibbs_ss_corrected.hpp) Gibbs-SS's normal draw made exact by a Metropolis-Hastings correction.
// The exact blocks take any integer_sum_model (core/concepts.hpp), so a user's model with a closed-form sum law runs
// under them as the families do. gibbs_ss, gibbs_ss_truncated, gibbs_ss_exact, gibbs_ss_window, gibbs_ss_corrected and
// glm_collapsed_gibbs are this frame with their blocks and the release-taking constructors users know.
//
//     gibbs_frame chain(my_model, prior, enumerated_sum(laplace_mechanism(1.0, epsilon), z), n, g);
#pragma once

#include <Eigen/Core>
#include <concepts>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/samplers/detail/sweep.hpp"

namespace privpost {

/// A sum block of gibbs_frame for Model and Prior: start(m, prior, theta, n, s, events, g) checks the release against
/// the model and n (std::invalid_argument naming the value and the accepted range), sets s's starting point and draws
/// the block's own latent state, once theta has its first draw from the prior (a block may move theta to a better
/// start: truncated_sum resamples prior draws by the release's likelihood); draw_sum(m, theta, n, s, events, g) draws
/// s | theta and the release.
template <class B, class Model, class Prior>
concept sum_block = statistic_model<Model> &&
    requires(B& b, const Model& m, const Prior& prior, typename Model::parameter_type& theta, double n,
             typename Model::vector_type& s, numerical_events& events, std::mt19937_64& g) {
  b.start(m, prior, theta, n, s, events, g);
  b.draw_sum(m, std::as_const(theta), n, s, events, g);
};

/// Optional: a sum block that keeps the mechanism's noise variances (its scale-mixture view) redraws them given s, last
/// in the sweep.
template <class B, class Model>
concept variance_block = requires(B& b, const typename Model::vector_type& s, std::mt19937_64& g) {
  b.draw_variances(s, g);
};

/// Optional: a sum block that can integrate s out, collapsed_log_likelihood(m, theta, n) = log p(z | theta) given the
/// block's other latent state, up to a constant (-infinity where it is zero). The frame's collapsed moves need it.
template <class B, class Model>
concept collapsible_block = requires(B& b, const Model& m, const typename Model::parameter_type& theta, double n) {
  { b.collapsed_log_likelihood(m, theta, n) } -> std::convertible_to<double>;
};

/// Optional: a model that draws its own parameter block instead of the conjugate update (glm_collapsed_model: NUTS on
/// the GLM's parameters with s integrated out, given the sum block's noise variances). m.start_parameter(prior, block,
/// theta, g) sets theta's starting point once the block has started (the frame draws no theta from the prior for it);
/// m.draw_parameter(prior, s, n, block, theta, g) is the sweep's parameter block; m.condition_on(block), called at the
/// end of every sweep that drew s, hands it the block's new latent state (the GLM's NUTS target depends on the noise
/// variances). A model whose draw_parameter never reads s declares `static constexpr bool integrates_sum = true`: the
/// frame then draws no s when the block's noise variances are fixed (a fixed_variance_block), since nothing would read
/// it.
template <class M, class Prior, class Block>
concept parameter_drawing_model = statistic_model<M> &&
    requires(M& m, const Prior& prior, const typename M::vector_type& s, double n, const Block& b,
             typename M::parameter_type& theta, std::mt19937_64& g) {
  m.start_parameter(prior, b, theta, g);
  m.draw_parameter(prior, s, n, b, theta, g);
  m.condition_on(b);
};

/// Optional: a sum block whose noise variances never move (a Gaussian mechanism): `static constexpr bool
/// fixed_variances = true`.
template <class B>
concept fixed_variance_block = requires {
  requires B::fixed_variances;
};

/// The Gibbs-SS sampler over (model, prior, sum block): the prior is conjugate to the model unless the model draws its
/// own parameter (parameter_drawing_model). State: theta, s (the latent exact statistic), the
/// model's nuisance parameters and the block's own state (noise variances, the corrected draw's position). Sweeps of
/// fixed-size models allocate nothing; see the blocks for dynamic-size models.
template <statistic_model Model, class Prior, sum_block<Model, Prior> Block>
requires conjugate_prior_for<Prior, Model> || parameter_drawing_model<Model, Prior, Block>
class gibbs_frame {
  // The parameter block: the conjugate update (with the optional collapsed moves), or the model's own draw.
  static constexpr bool conjugate = !parameter_drawing_model<Model, Prior, Block>;
  // The collapsed moves: a conjugate parameter block with a sum block that integrates s out.
  static constexpr bool collapsible = conjugate && collapsible_block<Block, Model>;
  // The shift moves: a conjugate parameter block, a model with joint moves of (theta, s) and a block that keeps the
  // release and the noise variances.
  static constexpr bool shiftable = conjugate && requires(const Block& b) {
    { b.release() } -> std::convertible_to<const typename Model::vector_type&>;
    requires shift_moving_model<Model, Prior, std::remove_cvref_t<decltype(b.mechanism())>>;
  };

 public:
  /// The statistic model.
  using model_type = Model;
  /// The sum block.
  using block_type = Block;
  /// The model's parameter type.
  using parameter_type = typename Model::parameter_type;
  /// Type of the statistic.
  using vector_type = typename Model::vector_type;
  /// Type of its covariance.
  using matrix_type = typename Model::matrix_type;
  /// Compile-time length of the statistic (Eigen::Dynamic when known at run time only).
  static constexpr int dimension = Model::static_size;

  /// n: the public number of records (the block checks it with its release). theta starts from the prior; the block
  /// then sets s and its own state (Block::start). A parameter_drawing_model sets theta after the block has started.
  template <random_engine G>
  gibbs_frame(Model model, const Prior& prior, Block block, double n, G& g)
      : model_(std::move(model)), prior_(prior), posterior_(prior), block_(std::move(block)), n_(n) {
    start(g);
  }

  /// The same with the block built in place by make_block() (no copy or move of its workspace).
  // clang-format off
  template <class MakeBlock, random_engine G>
    requires std::same_as<std::invoke_result_t<MakeBlock&>, Block>
  gibbs_frame(Model model, const Prior& prior, MakeBlock make_block, double n, G& g)
      : model_(std::move(model)), prior_(prior), posterior_(prior), block_(make_block()), n_(n) {
    // clang-format on
    start(g);
  }

  /// One sweep: theta | s; nuisance | s; [collapsed moves on theta]; s | theta and the release; [shift moves of (theta,
  /// s)]; [noise variances | s].
  /// For a parameter_drawing_model the first three are its draw_parameter.
  template <random_engine G>
  void step(G& g) {
    if constexpr (conjugate) {
      if constexpr (in_place_update<Model, Prior>) {
        model_.update(prior_, s_, n_, posterior_);
      } else {
        posterior_ = model_.update(prior_, s_, n_);
      }
      if constexpr (in_place_draw<Prior, parameter_type>) {
        posterior_.draw(g, theta_);
      } else {
        theta_ = posterior_.draw(g);
      }
      if constexpr (has_nuisance<Model>) model_.update_nuisance(s_, n_, g);
      if constexpr (collapsible) {
        if (collapsed_moves_ > 0) collapsed_theta_moves(g);
      }
    } else {
      model_.draw_parameter(prior_, s_, n_, block_, theta_, g);
      if constexpr (requires { requires Model::integrates_sum; } && fixed_variance_block<Block>) return;
    }
    block_.draw_sum(model_, theta_, n_, s_, events_, g);
    if constexpr (shiftable) {
      for (int k = 0; k < shift_moves_; ++k) {
        const move_tally tally = model_.shift_move(prior_, theta_, s_, block_.release(), block_.mechanism(), n_, g);
        shift_proposals_ += static_cast<std::uint64_t>(tally.proposed);
        shift_accepted_ += static_cast<std::uint64_t>(tally.accepted);
      }
    }
    if constexpr (variance_block<Block, Model>) block_.draw_variances(s_, g);
    if constexpr (!conjugate) model_.condition_on(std::as_const(block_));
  }

  /// Told by infer before the first sweep when the model's parameter block adapts (a NUTS block): it adapts over the
  /// driver's burn-in.
  void begin_warmup(int transitions) requires warmup_planned<Model> { model_.begin_warmup(transitions); }
  /// Told by infer after burn-in, for a model whose parameter block adapts.
  void end_warmup() requires warmup_aware<Model> { model_.end_warmup(); }
  /// The parameter block's sampler columns (a NUTS block's), for a model that has them.
  static std::vector<std::string> draw_diagnostic_names() requires reports_draw_diagnostics<Model> {
    return Model::draw_diagnostic_names();
  }
  /// The parameter block's diagnostics of the sweep (draw_diagnostic_names()).
  Eigen::VectorXd draw_diagnostics() const requires reports_draw_diagnostics<Model> { return model_.draw_diagnostics(); }

  /// Collapsed moves per sweep (0, the default, is Algorithm 3 as published; at most 1000), for a block that can
  /// integrate s out (collapsible_block: clt_sum). After theta | s and the nuisance block, each move proposes theta' from
  /// the prior (for a blocked_prior such as hyper_dirichlet: one block after the other from its prior, each accepted or
  /// not, a sweep over the blocks per move) and accepts it with probability min(1, L(theta') / L(theta)), L the
  /// block's collapsed likelihood (clt_sum: N(z; n m(theta), n Sigma(theta) + W), the statistic's CLT law with s
  /// integrated out, given the current noise variances W). s | theta is drawn right after, so (theta, s) is one block
  /// update. Where the noise dominates (for example n = 1000, epsilon = 0.01), theta | s is far narrower than theta's
  /// posterior and Gibbs-SS moves theta by small steps; these moves jump at once. Where the data dominate, the prior
  /// proposals are mostly rejected and the move only costs time (clt_sum: one moments() call and one Cholesky
  /// factorisation of a d x d matrix per move). clt_sum's integrated law ignores the valid set of s, which matters only
  /// where the CLT normal puts visible mass outside it (small n, theta near the boundary): use it where the noise
  /// dominates. Checked by simulation-based calibration for the binomial and the multinomial (n = 1000,
  /// epsilon = 0.01) and the tree CGM (epsilon 0.1 and 0.01); the tools offer it for those models (--collapsed-moves).
  void set_collapsed_moves(int moves) requires collapsible {
    if (moves < 0 || moves > 1000) throw_invalid("gibbs_ss::set_collapsed_moves", "moves", moves, "an integer in [0, 1000]");
    collapsed_moves_ = moves;
  }
  /// Collapsed moves per sweep (0: none).
  int collapsed_moves() const noexcept { return collapsed_moves_; }
  /// Collapsed proposals made so far.
  std::uint64_t collapsed_proposals() const noexcept { return collapsed_proposals_; }
  /// Collapsed proposals accepted so far (over collapsed_proposals(): the move's acceptance rate).
  std::uint64_t collapsed_accepted() const noexcept { return collapsed_accepted_; }

  /// Shift moves per sweep (0, the default, is Algorithm 3 as published; at most 1000), for a model with joint moves of
  /// (theta, s) (shift_moving_model: tree_cgm_model). They come after s | theta and before the noise variances: each
  /// move is the model's pass of random-walk proposals over theta's blocks with s translated along (s - n m(theta)
  /// kept), accepted by the joint density of (theta, s) given the release with the noise variances integrated out
  /// (they are redrawn right after), whose theta | s is the conjugate update. Where the noise dominates, theta | s is far
  /// narrower than theta's posterior and plain Gibbs-SS moves theta and s together by small steps; a shift takes them together by
  /// a step of the posterior's width, at the cost of one pass over the tables per block (no factorisation: cheaper than a
  /// collapsed move).
  void set_shift_moves(int moves) requires shiftable {
    if (moves < 0 || moves > 1000) throw_invalid("gibbs_ss::set_shift_moves", "moves", moves, "an integer in [0, 1000]");
    shift_moves_ = moves;
  }
  /// Shift moves per sweep (0: none).
  int shift_moves() const noexcept { return shift_moves_; }
  /// Shift proposals made so far.
  std::uint64_t shift_proposals() const noexcept { return shift_proposals_; }
  /// Shift proposals accepted so far.
  std::uint64_t shift_accepted() const noexcept { return shift_accepted_; }

  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return model_.parameter_vector(theta_); }
  /// The current latent exact statistic s.
  const vector_type& statistic() const noexcept { return s_; }
  /// The statistic model.
  const Model& model() const noexcept { return model_; }
  /// The sum block (its own state and kernels).
  const Block& block() const noexcept { return block_; }
  /// The public number of records.
  double records() const noexcept { return n_; }
  /// The numerical events so far (repairs and retries of the blocks).
  const numerical_events& events() const noexcept { return events_; }

 protected:
  /// For the named samplers' kernels: the block with write access, and theta (set_state of the kernel tests).
  Block& mutable_block() noexcept { return block_; }
  /// @copydoc mutable_block
  parameter_type& mutable_parameter() noexcept { return theta_; }
  /// @copydoc mutable_block
  vector_type& mutable_statistic() noexcept { return s_; }
  /// @copydoc mutable_block
  numerical_events& mutable_events() noexcept { return events_; }

 private:
  template <random_engine G>
  void start(G& g) {
    if constexpr (conjugate) {
      theta_ = prior_.draw(g);
      block_.start(model_, prior_, theta_, n_, s_, events_, g);
    } else {
      block_.start(model_, prior_, theta_, n_, s_, events_, g);
      model_.start_parameter(prior_, std::as_const(block_), theta_, g);
    }
  }

  // Metropolis-Hastings on theta | z (s integrated out) with prior-reversible proposals: the whole parameter from the
  // prior, or, for a blocked_prior, one block at a time from its prior (a sweep over the blocks per move). The prior
  // cancels, so the acceptance ratio is the integrated likelihoods' ratio (detail::accept_collapsed_move).
  template <random_engine G>
  void collapsed_theta_moves(G& g) {
    double current = block_.collapsed_log_likelihood(model_, theta_, n_);
    auto metropolis = [&] {
      const double candidate = block_.collapsed_log_likelihood(model_, proposal_, n_);
      ++collapsed_proposals_;
      if (detail::accept_collapsed_move(current, candidate, g)) {
        std::swap(theta_, proposal_);
        current = candidate;
        ++collapsed_accepted_;
      }
    };
    for (int k = 0; k < collapsed_moves_; ++k) {
      if constexpr (blocked_prior<Prior, parameter_type>) {
        for (int b = 0; b < prior_.blocks(); ++b) {
          proposal_ = theta_;
          prior_.draw_block(g, b, proposal_);
          metropolis();
        }
      } else {
        if constexpr (in_place_draw<Prior, parameter_type>) {
          prior_.draw(g, proposal_);
        } else {
          proposal_ = prior_.draw(g);
        }
        metropolis();
      }
    }
  }

  Model model_;
  Prior prior_;
  Prior posterior_;
  Block block_;
  double n_;
  parameter_type theta_{};
  vector_type s_{};
  numerical_events events_;
  int collapsed_moves_ = 0;
  std::uint64_t collapsed_proposals_ = 0, collapsed_accepted_ = 0;
  int shift_moves_ = 0;
  std::uint64_t shift_proposals_ = 0, shift_accepted_ = 0;
  parameter_type proposal_{};
};

template <statistic_model Model, class Prior, class Block, random_engine G>
gibbs_frame(Model, const Prior&, Block, double, G&) -> gibbs_frame<Model, Prior, Block>;

/// The frame over a static family's integer sum with an exact sum block (enumerated_sum, window_sum), and the block's
/// kernels for tests and users: the base of gibbs_ss_exact and gibbs_ss_window.
template <conjugate_prior Prior, class Block>
class integer_sum_gibbs : public gibbs_frame<family_model<typename Prior::family>, Prior, Block> {
  using frame = gibbs_frame<family_model<typename Prior::family>, Prior, Block>;

 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The family's parameter type.
  using parameter_type = typename family::parameter_type;

  /// s | theta, z by inverse CDF over the block's support points: the exact conditional of the sum. Also the kernel the
  /// tests check.
  template <random_engine G>
  double draw_sum(const parameter_type& theta, G& g) {
    return this->mutable_block().draw(this->model(), theta, this->records(), g);
  }

  /// The normalised conditional law pi(s | theta, z) over the block's support points (the block's sum_weights).
  const std::vector<double>& sum_weights(const parameter_type& theta) {
    return this->mutable_block().sum_weights(this->model(), theta, this->records());
  }

  /// The current sum (a whole number >= 0).
  double statistic() const noexcept { return frame::statistic()(0); }

 protected:
  /// The frame over family_model<family> with the block built in place by make_block().
  template <class MakeBlock, random_engine G>
  integer_sum_gibbs(const Prior& prior, MakeBlock make_block, double n, G& g)
      : frame(family_model<family>{}, prior, std::move(make_block), n, g) {}
};

}  // namespace privpost
