// privpost-infer, linear regression: Gibbs-SS-Update (default), -Prior or -Noisy covariate moments, or the record-level
// sampler (--method records, with the NIW or fixed normal covariate law); releases made on the declared box's [-1, 1]
// scale are sampled there and reported on the data's scale.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "infer.hpp"

namespace privpost::tools::infer_tool {

namespace {

// Draws of (theta, sigma^2) for records mapped to [-1, 1] by the declared box (x'_j = (x_j - c_j) / h_j,
// y' = (y - c_y) / h_y) turned into the data's scale: slope_j = h_y theta'_j / h_j, intercept = c_y + h_y theta'_0 -
// sum_j slope_j c_j, sigma^2 = h_y^2 sigma'^2. Without an intercept the slopes and sigma^2 are mapped alike (the scaled
// model then passes through the box's centre).
void to_data_scale(std::span<double> draw, const privpost::tools::release_record& rec) {
  const auto& declared = rec.regression();
  const int d = static_cast<int>(declared.covariates.size());
  const int off = declared.intercept ? 1 : 0;
  const double yc = 0.5 * (declared.response_bounds.first + declared.response_bounds.second);
  const double yh = 0.5 * (declared.response_bounds.second - declared.response_bounds.first);
  const auto at = [](int i) { return static_cast<std::size_t>(i); };
  double shift = 0.0;
  for (int k = 0; k < d; ++k) {
    const auto& b = declared.covariate_bounds[at(k)];
    const double xc = 0.5 * (b.first + b.second), xh = 0.5 * (b.second - b.first);
    draw[at(off + k)] = yh * draw[at(off + k)] / xh;
    shift += draw[at(off + k)] * xc;
  }
  if (declared.intercept) draw[0] = yc + yh * draw[0] - shift;
  draw[at(off + d)] = yh * yh * draw[at(off + d)];
}

// Every draw on the data's scale (to_data_scale above).
privpost::posterior to_data_scale(const privpost::posterior& scaled, const privpost::tools::release_record& rec) {
  return map_draws(scaled, scaled.dimension(), [&](std::span<const double> in, std::span<double> out) {
    std::copy(in.begin(), in.end(), out.begin());
    to_data_scale(out, rec);
  });
}

template <class Mechanism>
int run_regression_with(const privpost::tools::release_record& rec, const options& o, const Mechanism& mechanism) {
  const auto& declared = rec.regression();
  using namespace privpost;
  const int d = static_cast<int>(declared.covariates.size());
  const regression_layout layout(d, declared.intercept);
  const int p = layout.columns();
  const Eigen::VectorXd z =
      Eigen::Map<const Eigen::VectorXd>(rec.noisy_statistics.data(), static_cast<Eigen::Index>(rec.noisy_statistics.size()));
  if (z.size() != layout.size())
    throw std::invalid_argument("release record: " + std::to_string(z.size()) + " noisy statistics; linreg with " +
                                std::to_string(d) + " covariate(s) has " + std::to_string(layout.size()));
  std::string defaults;
  for (int k = 0; k < p; ++k) defaults += "0,";
  for (int k = 0; k < p; ++k) defaults += std::to_string(regression_prior_precision) + ",";
  defaults += "2,1";
  const nig_regression_prior prior =
      prior_from(o.prior.empty() ? defaults : o.prior, static_cast<std::size_t>(2 * p + 2),
                 "mu_0..mu_{p-1}, diagonal precision lambda_0..lambda_{p-1}, a, b", [p](const std::vector<double>& v) {
                   Eigen::VectorXd mu(p), lambda(p);
                   for (int k = 0; k < p; ++k) {
                     mu(k) = v[static_cast<std::size_t>(k)];
                     lambda(k) = v[static_cast<std::size_t>(p + k)];
                   }
                   return nig_regression_prior(mu, lambda.asDiagonal(), v[static_cast<std::size_t>(2 * p)],
                                               v[static_cast<std::size_t>(2 * p + 1)]);
                 });
  // Covariate model defaults from the declared bounds: centre m, spread (width / 4)^2 per covariate (on [-1, 1]
  // when the release was made on the box's unit scale: centre 0, spread 1/4).
  Eigen::VectorXd centre(d), spread(d);
  for (int k = 0; k < d; ++k) {
    const auto& b = declared.covariate_bounds[static_cast<std::size_t>(k)];
    const double lo = declared.unit_scaled ? -1.0 : b.first, hi = declared.unit_scaled ? 1.0 : b.second;
    centre(k) = 0.5 * (lo + hi);
    spread(k) = (hi - lo) * (hi - lo) / 16.0;
  }
  // privpost-synthesize: the covariates' normal-inverse-Wishart block of Gibbs-SS-Update is the covariate law of the
  // synthetic records, so it is the default there whatever the release holds; the other covariate models are no law
  // the posterior learns (prior: fixed from the bounds; noisy: plug-in moments) and are refused.
  const bool synthesize = o.synthetic_sets > 0;
  const std::string moments =
      o.moments.empty() ? ((declared.noisy_moments.empty() || synthesize) ? "update" : "noisy") : o.moments;
  if (synthesize && (moments != "update" || o.method == "records"))
    throw std::invalid_argument(
        "privpost-synthesize: linreg synthetic records need the covariate law Gibbs-SS-Update learns "
        "(--moments update, --method gibbs); got --moments " +
        moments + " --method " + o.method);
  double moment_shrinkage = 0.0;  // --moments noisy: the weight valid_covariate_moments gave the normal reference
  const inference_options io = driver_options(o);
  const std::optional<convergence_target> until = until_warning_thresholds(o, io, regression_until_rounds);
  tools::progress_line progress(std::string(tool_name(o)) + ": sweeps");
  auto tick = [&](const inference_progress& pr) { progress(static_cast<long>(pr.done), static_cast<long>(pr.total)); };
  std::vector<std::string> names;
  for (int k = 0; k < p; ++k)
    names.push_back((declared.intercept && k == 0)
                        ? std::string("intercept")
                        : declared.covariates[static_cast<std::size_t>(k - (declared.intercept ? 1 : 0))]);
  names.push_back("sigma^2");
  // --output-dir's files get the reported draws as they are made: (theta, sigma^2), on the data's scale.
  auto stream_of = [&](const std::string& method) {
    stream_as s{method, names};
    if (declared.unit_scaled || synthesize)
      s.transform = [&rec, p, unit_scaled = declared.unit_scaled](std::span<const double> sampled, std::span<double> out) {
        std::copy_n(sampled.begin(), p + 1, out.begin());
        if (unit_scaled) to_data_scale(out, rec);
      };
    return s;
  };
  std::vector<std::pair<std::string, inference_result>> results;
  const bool records = o.method == "records";
  if (records) {
    // The record-level sampler (samplers/record_regression.hpp): the records latent, clamped into the declared box
    // exactly as privpost-release clamped them (on the unit scale when the release was made there). It needs a
    // covariate law: the NIW model of --moments update, or the fixed normal of --moments prior; noisy moments are none.
    // Every chain starts with its records moved towards the release (record_init::consistent; same target).
    if (moments != "update" && moments != "prior")
      throw std::invalid_argument("--method records needs a covariate law: --moments update or prior (the moments '" + moments +
                                  "' are no distribution)");
    std::vector<interval> box;
    for (int k = 0; k < d; ++k) {
      const auto& b = declared.covariate_bounds[static_cast<std::size_t>(k)];
      box.push_back(declared.unit_scaled ? interval(-1.0, 1.0) : interval(b.first, b.second));
    }
    const interval ybox =
        declared.unit_scaled ? interval(-1.0, 1.0) : interval(declared.response_bounds.first, declared.response_bounds.second);
    if (moments == "update") {
      const double nu = d + 3.0;
      const niw_hyperprior h{centre, 1.0, Eigen::MatrixXd(spread.asDiagonal()) * (nu - d - 1.0), nu};
      results.emplace_back("records", run_chains(
                                          [&](auto& g) {
                                            return record_regression(layout, prior, h, box, ybox, mechanism, z, rec.n, g,
                                                                     record_init::consistent);
                                          },
                                          o, io, tick, until, stream_of("records")));
    } else {
      const normal_covariate_law law{centre, Eigen::MatrixXd(spread.asDiagonal())};
      results.emplace_back("records", run_chains(
                                          [&](auto& g) {
                                            return record_regression(layout, prior, law, box, ybox, mechanism, z, rec.n, g,
                                                                     record_init::consistent);
                                          },
                                          o, io, tick, until, stream_of("records")));
    }
  } else if (moments == "update") {
    const double nu = d + 3.0;
    const niw_hyperprior h{centre, 1.0, Eigen::MatrixXd(spread.asDiagonal()) * (nu - d - 1.0), nu};
    auto chain = [&](auto& g) {
      return gibbs_ss(linear_regression_model(layout, hierarchical_normal_covariates(layout, h, g)), prior, mechanism, z, rec.n,
                      g);
    };
    if (synthesize) {
      // The covariate law rides along with (theta, sigma^2): synthetic records need a joint draw of both
      // (privpost/inference/synthetic_regression.hpp). Its columns are split off once the sets are written.
      results.emplace_back(
          "gibbs", run_chains([&](auto& g) { return with_covariate_law(chain(g)); }, o, io, tick, until, stream_of("gibbs")));
    } else {
      results.emplace_back("gibbs", run_chains(chain, o, io, tick, until, stream_of("gibbs")));
    }
  } else if (moments == "prior") {
    const auto cm = normal_covariate_moments(layout, centre, Eigen::MatrixXd(spread.asDiagonal()));
    results.emplace_back("gibbs", run_chains(
                                      [&](auto& g) {
                                        return gibbs_ss(linear_regression_model(layout, fixed_covariates(cm)), prior, mechanism,
                                                        z, rec.n, g);
                                      },
                                      o, io, tick, until, stream_of("gibbs")));
  } else if (moments == "noisy") {
    if (declared.noisy_moments.empty())
      throw std::invalid_argument("--moments noisy: the release record holds no noisy_moments (release with --noisy-moments)");
    const moment_release_layout ml(layout);
    const Eigen::VectorXd zm = Eigen::Map<const Eigen::VectorXd>(declared.noisy_moments.data(),
                                                                 static_cast<Eigen::Index>(declared.noisy_moments.size()));
    const auto cm = ml.moments_from_release(zm, nullptr, &moment_shrinkage);
    results.emplace_back("gibbs", run_chains(
                                      [&](auto& g) {
                                        return gibbs_ss(linear_regression_model(layout, fixed_covariates(cm)), prior, mechanism,
                                                        z, rec.n, g);
                                      },
                                      o, io, tick, until, stream_of("gibbs")));
  } else {
    throw std::invalid_argument("--moments is '" + moments + "'; accepted: update, prior, noisy");
  }
  if (o.compare_naive && !interrupt_requested())
    results.emplace_back("naive",
                         privpost::run<chain_engine_type>(
                             [&](auto& g) { return conjugate_sampler(linear_regression_statistic(layout), prior, z, rec.n, g); },
                             run_options{.inference = io})
                             .result);
  // privpost-synthesize: the joint draws are kept for the sets (written after the summary); the summary is of
  // (theta, sigma^2) alone.
  std::optional<inference_result> joint;
  if (synthesize) {
    joint = results.front().second;
    std::vector<Eigen::MatrixXd> head;
    for (const auto& m : results.front().second.draws.chains()) head.emplace_back(m.leftCols(p + 1));
    results.front().second.draws = posterior(std::move(head));
  }
  // Diagnostics on the sampled scale (an affine map of each coordinate's draws changes neither R-hat nor ESS).
  if (declared.unit_scaled) {
    for (auto& [method, r] : results) r.draws = to_data_scale(r.draws, rec);
  }
  std::printf("release: model linreg (%d covariate(s)%s), n %.0f, %s mechanism (epsilon %g), privpost %s\n", d,
              declared.intercept ? " + intercept" : "", rec.n, rec.mechanism.c_str(), rec.epsilon, rec.version.c_str());
  std::printf("%d chains x %d draws (burn-in %d, thin %d, seed %llu); covariate moments: %s\n", o.chains, o.draws, o.burnin,
              o.thin, static_cast<unsigned long long>(o.seed), moments.c_str());
  if (declared.unit_scaled)
    std::printf(
        "sampled on [-1, 1] by the declared box (prior on that scale); coefficients and sigma^2 reported on the data's scale\n");
  if (moment_shrinkage > 0.0)
    std::printf(
        "the noisy moments were no distribution's (their moment matrix was indefinite): mixed with a normal of their own "
        "means and variances at weight %.3g, the smallest that makes them valid\n",
        moment_shrinkage);
  std::printf("\n");
  std::size_t total_warnings = 0;
  std::vector<std::string> titles;
  for (const auto& [method, r] : results) {
    const std::string title =
        method == "gibbs" ? "noise-aware Gibbs-SS-" + moments
        : method == "records"
            ? "noise-aware record-level (the records latent and clamped; exact, no CLT; covariates: " + moments + ")"
            : "naive (treats the release as exact; for comparison only)";
    summarise(title.c_str(), r, names);
    titles.push_back(title);
    if (method != "naive") total_warnings += warn("noise-aware", r, names);
  }
  if (!o.draws_csv.empty()) write_draws(o.draws_csv, results, names);
  write_outputs(o, rec, o.thin, results, titles, names);
  if (joint && !interrupt_requested()) write_synthetic_regression_sets(o, rec, *joint, layout);
  return (o.strict && total_warnings > 0) ? strict_exit_status : 0;
}

}  // namespace

int run_regression(const privpost::tools::release_record& rec, const options& o) {
  return run_regression_with(rec, o, mechanism_of(rec));
}

}  // namespace privpost::tools::infer_tool
