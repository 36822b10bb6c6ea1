// privpost/samplers/detail/nuts_adaptation.hpp
// The warm-up of samplers/nuts.hpp: dual averaging of the log step size (Hoffman & Gelman 2014, Sec. 3.2, Eq. 6) and
// Stan's windowed estimate of a diagonal or dense inverse metric (doubling windows between an initial and a terminal
// buffer).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>

namespace privpost::detail {

/// Dual averaging of log(step size) towards a target mean acceptance statistic delta.
struct dual_averaging {
  double gamma = 0.05;
  double kappa = 0.75;
  double t0 = 10.0;
  double delta = 0.8;
  double mu = std::log(10.0);  ///< shrinkage point, log(10 * initial step size)
  double counter = 0.0;
  double s_bar = 0.0;
  double x_bar = 0.0;

  void restart() noexcept {
    counter = 0.0;
    s_bar = 0.0;
    x_bar = 0.0;
  }

  /// One update with the transition's acceptance statistic; returns the step size to use next, exp(x).
  double learn(double accept_stat) noexcept {
    counter += 1.0;
    const double a = std::min(1.0, accept_stat);
    const double eta = 1.0 / (counter + t0);
    s_bar = (1.0 - eta) * s_bar + eta * (delta - a);
    const double x = mu - s_bar * std::sqrt(counter) / gamma;
    const double w = std::pow(counter, -kappa);
    x_bar = (1.0 - w) * x_bar + w * x;
    return std::exp(x);
  }

  /// The step size kept after warm-up: exp of the averaged iterate.
  double final_step_size() const noexcept { return std::exp(x_bar); }
};

/// Welford's running mean and sum of squared deviations, per coordinate (Dense = false: the diagonal metric's
/// variances) or as outer products (Dense = true: the dense metric's covariance), in preallocated storage.
template <bool Dense>
struct welford_moments {
  Eigen::VectorXd mean;
  std::conditional_t<Dense, Eigen::MatrixXd, Eigen::VectorXd> m2;
  Eigen::VectorXd delta;
  Eigen::VectorXd after;  ///< x minus the updated mean
  double n = 0.0;

  void resize(Eigen::Index dim) {
    mean.setZero(dim);
    if constexpr (Dense)
      m2.setZero(dim, dim);
    else
      m2.setZero(dim);
    delta.setZero(dim);
    after.setZero(dim);
    n = 0.0;
  }
  void restart() noexcept {
    mean.setZero();
    m2.setZero();
    n = 0.0;
  }
  void add(const Eigen::VectorXd& x) noexcept {
    n += 1.0;
    delta = x - mean;
    mean += delta / n;
    after = x - mean;
    if constexpr (Dense)
      m2.noalias() += after * delta.transpose();
    else
      m2.array() += delta.array() * after.array();
  }
};
using welford_variance = welford_moments<false>;
using welford_covariance = welford_moments<true>;

/// Stan's schedule of metric windows within `warmup` transitions: an initial buffer (step size only), windows of
/// doubling length whose ends update the metric (the last stretched to the terminal buffer), a terminal buffer.
struct metric_windows {
  int warmup = 0;
  int init_buffer = 75;
  int term_buffer = 50;
  int base_window = 25;
  bool enabled = true;
  int window_size = 25;
  int next_window_end = 0;

  /// Stan's rules: no metric adaptation below 20 warm-up transitions; buffers that do not fit become 15% / 75% / 10%.
  void configure(int warmup_transitions, int init, int term, int base, bool adapt) noexcept {
    warmup = warmup_transitions;
    enabled = adapt && warmup >= 20;
    init_buffer = init;
    term_buffer = term;
    base_window = base;
    if (enabled && init_buffer + base_window + term_buffer > warmup) {
      init_buffer = static_cast<int>(0.15 * warmup);
      term_buffer = static_cast<int>(0.1 * warmup);
      base_window = warmup - (init_buffer + term_buffer);
    }
    window_size = base_window;
    next_window_end = init_buffer + window_size - 1;
  }

  /// Transition number c (0-based) is added to the variance estimate.
  bool collects(int c) const noexcept { return enabled && c >= init_buffer && c < warmup - term_buffer && c != warmup; }

  /// Transition number c ends a window: the metric is updated after it.
  bool ends_window(int c) const noexcept { return enabled && c == next_window_end && c != warmup; }

  /// Called at the end of a window: the next window is twice as long, stretched to the terminal buffer when the one
  /// after it would not fit.
  void advance(int c) noexcept {
    const int last = warmup - term_buffer - 1;
    if (next_window_end == last) return;
    window_size *= 2;
    next_window_end = c + window_size;
    if (next_window_end != last && next_window_end + 2 * window_size >= warmup - term_buffer) next_window_end = last;
  }
};

}  // namespace privpost::detail
