// privpost/inference/fit.hpp
// fit: the driver of iterative point estimators (CGM MAP-EM, Algorithm 2 of the CGM paper; docs/model-tables.md),
// beside infer for samplers: iterates until the estimator reports convergence or the iteration cap, with an optional
// progress callback, and returns the estimate, the iteration count, whether it converged, and the numerical events
// (counted, never hidden).
#pragma once

#include <Eigen/Core>
#include <cstdint>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/progress.hpp"

namespace privpost {

/// Settings of fit().
struct fit_options {
  int max_iterations = 10000;  ///< iterate() calls at most
};

/// What fit() reports to its progress callback after each iteration.
struct fit_progress {
  int iteration = 0;  ///< iterations done
  /// The iteration cap.
  int max_iterations = 0;
  double change = 0.0;  ///< the estimator's change measure of this iteration
};

/// The result of fit(): the final estimate, iterations run, convergence, and the estimator's numerical events.
struct fit_result {
  /// The final estimate.
  Eigen::VectorXd parameter;
  /// Iterations run.
  int iterations = 0;
  std::int64_t inner_iterations = 0;  ///< the sum of iterate()'s inner iterations (CGM-EM: E-step inference calls)
  /// Whether the estimator's convergence rule held before the cap.
  bool converged = false;
  /// The estimator's numerical events.
  numerical_events events;
};

/// Runs estimator.iterate() until it converges or max_iterations is reached (not converging is reported in the result,
/// not thrown). progress(fit_progress) is called after every iteration when given. std::invalid_argument for
/// max_iterations < 1.
template <iterative_estimator E, class Progress = void (*)(const fit_progress&)>
fit_result fit(E& estimator, const fit_options& options = {}, Progress progress = nullptr) {
  if (options.max_iterations < 1) throw_invalid("fit", "max_iterations", options.max_iterations, "an integer >= 1");
  fit_result out;
  while (out.iterations < options.max_iterations && !estimator.converged()) {
    const auto status = estimator.iterate();
    ++out.iterations;
    out.inner_iterations += status.inner_iterations;
    detail::report_progress(progress, fit_progress{out.iterations, options.max_iterations, static_cast<double>(status.change)});
  }
  out.converged = estimator.converged();
  out.parameter = estimator.parameter_vector();
  out.events = estimator.events();
  return out;
}

}  // namespace privpost
