// privpost-infer: the analyst's tool. Reads a JSON release record and a prior, runs noise-aware Gibbs-SS (and, on
// request, the naive method for comparison), prints a posterior summary (mean, sd, 5/50/95% quantiles, R-hat, bulk and
// tail ESS, numerical repairs) and optionally writes the draws to CSV. It warns, in plain words, when a parameter has
// R-hat above 1.01, bulk or tail ESS below 100 per chain, or numerical repairs in more than 1% of sweeps (--strict:
// exit status 3 then); --target-ess N extends the chains until every parameter reaches R-hat <= 1.01 and ESS >= N.
// Regression releases made on the [-1, 1] scale of the declared box are sampled there and reported on the data's scale.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "release_record.hpp"
#include "tool_support.hpp"

namespace {

struct options {
  std::string release, prior, draws_csv, moments;
  bool compare_naive = false, parallel = false, strict = false;
  int chains = 4, burnin = 1000, draws = 1000;
  int thin = 0;  ///< 0: the model's default (default_thin, regression_default_thin)
  std::uint64_t seed = 1;
  double target_ess = 0;             ///< > 0: extend the chains until R-hat <= 1.01 and bulk and tail ESS >= this
  std::int64_t max_sweeps = 200000;  ///< per chain, with --target-ess
};

/// Default thinning of the families' chains.
constexpr int default_thin = 2;
/// Default thinning of regression chains: their coefficients mix more slowly (bulk ESS ~ 600 of 4 x 1000 draws at thin
/// 2 on the cirrhosis release, where R-hat crossed 1.01 in ~1 of 10 fresh releases; 0 of 40 at thin 5).
constexpr int regression_default_thin = 5;

/// Exit status when --strict and the diagnostics warned.
constexpr int strict_exit_status = 3;

// Runs the noise-aware sampler: infer, or infer_until with --target-ess (saying what it did on stderr).
template <class Make, class Tick>
privpost::inference_result run_chains(Make make, const options& o, const privpost::inference_options& io, Tick tick) {
  if (!(o.target_ess > 0.0)) return privpost::infer(make, io, tick);
  privpost::convergence_target t;
  t.min_ess = o.target_ess;
  t.max_sweeps = o.max_sweeps;
  auto e = privpost::infer_until(make, io, t, tick);
  std::fprintf(
      stderr, "privpost-infer: --target-ess %g: %s after %lld sweeps per chain (%d round%s; %lld draws per chain kept)\n",
      o.target_ess, e.reached ? "reached" : "NOT reached (raise --max-sweeps)", static_cast<long long>(e.sweeps_per_chain),
      e.rounds, e.rounds == 1 ? "" : "s", static_cast<long long>(e.result.draws.draws_per_chain()));
  return std::move(e.result);
}

// Prints the diagnostics' warnings; returns how many there were.
std::size_t warn(const char* method, const privpost::inference_result& r, const std::vector<std::string>& names) {
  const auto w = privpost::convergence_warnings(r.draws, r.events, r.sweeps, {}, names);
  for (const auto& line : w) std::printf("  WARNING (%s): %s\n", method, line.c_str());
  if (!w.empty())
    std::printf(
        "  (thresholds: R-hat <= 1.01, bulk and tail ESS >= 100 per chain, repairs <= 1%% of sweeps; --target-ess N "
        "extends the chains until they hold, --strict turns warnings into exit status %d)\n",
        strict_exit_status);
  return w.size();
}

privpost::inference_options driver_options(const options& o) {
  privpost::inference_options io;
  io.chains = o.chains;
  io.burnin = o.burnin;
  io.draws = o.draws;
  io.thin = o.thin;
  io.seed = o.seed;
  io.parallel = o.parallel;
  return io;
}

std::vector<double> prior_values(const std::string& text, std::size_t count, const std::string& meaning) {
  std::vector<double> v;
  for (const auto& item : privpost::tools::split_list(text)) {
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size()) throw std::invalid_argument("--prior: '" + item + "' is not a number");
    v.push_back(x);
  }
  if (v.size() != count)
    throw std::invalid_argument("--prior has " + std::to_string(v.size()) + " values; accepted: " + std::to_string(count) + " (" +
                                meaning + ")");
  return v;
}

void summarise(const char* method, const privpost::inference_result& r, const std::vector<std::string>& names) {
  std::printf("%s\n  %-10s %10s %10s %10s %10s %10s %7s %8s %8s\n", method, "parameter", "mean", "sd", "q5", "q50", "q95",
              "R-hat", "ESS bulk", "ESS tail");
  for (Eigen::Index j = 0; j < r.draws.dimension(); ++j) {
    std::printf("  %-10s %10.4g %10.4g %10.4g %10.4g %10.4g %7.3f %8.0f %8.0f\n", names[static_cast<std::size_t>(j)].c_str(),
                r.draws.mean(j), r.draws.sd(j), r.draws.quantile(0.05, j), r.draws.quantile(0.5, j), r.draws.quantile(0.95, j),
                r.draws.rhat(j), r.draws.ess_bulk(j), r.draws.ess_tail(j));
  }
  const auto& e = r.events;
  std::printf("  numerical repairs: %llu projections, %llu jitter, %llu PSD repairs, %llu rejected draws\n",
              static_cast<unsigned long long>(e.projections), static_cast<unsigned long long>(e.jitter),
              static_cast<unsigned long long>(e.psd_repairs), static_cast<unsigned long long>(e.rejected_draws));
}

void write_draws(const std::string& path, const std::vector<std::pair<std::string, privpost::inference_result>>& results,
                 const std::vector<std::string>& names) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot open --draws-csv file '" + path + "'");
  f << "method,chain,draw";
  for (const auto& n : names) f << ',' << n;
  f << '\n';
  f.precision(17);
  for (const auto& [method, r] : results) {
    for (std::size_t c = 0; c < r.draws.chains().size(); ++c) {
      const auto& m = r.draws.chains()[c];
      for (Eigen::Index i = 0; i < m.rows(); ++i) {
        f << method << ',' << c << ',' << i;
        for (Eigen::Index j = 0; j < m.cols(); ++j) f << ',' << m(i, j);
        f << '\n';
      }
    }
  }
  if (!f) throw std::runtime_error("error writing '" + path + "'");
}

template <class Prior, class Mechanism>
int run(const Prior& prior, const Mechanism& mechanism, const privpost::tools::release_record& rec, const options& o,
        const std::vector<std::string>& names) {
  using family = typename Prior::family;
  const Eigen::VectorXd z =
      Eigen::Map<const Eigen::VectorXd>(rec.noisy_statistics.data(), static_cast<Eigen::Index>(rec.noisy_statistics.size()));
  if (z.size() != family::dimension)
    throw std::invalid_argument("release record: " + std::to_string(z.size()) + " noisy statistics; the " + rec.model +
                                " model has " + std::to_string(family::dimension));
  const privpost::inference_options io = driver_options(o);
  privpost::tools::progress_line progress("privpost-infer: sweeps");
  auto tick = [&](const privpost::inference_progress& p) { progress(static_cast<long>(p.done), static_cast<long>(p.total)); };
  std::vector<std::pair<std::string, privpost::inference_result>> results;
  if constexpr (privpost::truncatable_family<family>) {
    if (!rec.has_bounds) throw std::invalid_argument("release record: the " + rec.model + " model needs bounds");
    if (rec.policy != "drop")
      throw std::invalid_argument("release record: truncation_policy '" + rec.policy + "'; accepted: drop");
    results.emplace_back(
        "gibbs",
        run_chains([&](auto& g) { return privpost::gibbs_ss_truncated(prior, mechanism, z, rec.n, rec.lower, rec.upper, g); }, o,
                   io, tick));
  } else {
    results.emplace_back("gibbs",
                         run_chains([&](auto& g) { return privpost::gibbs_ss(prior, mechanism, z, rec.n, g); }, o, io, tick));
  }
  if (o.compare_naive)
    results.emplace_back("naive", privpost::infer([&](auto& g) { return privpost::conjugate_sampler(prior, z, rec.n, g); }, io));
  std::printf("release: model %s, n %.0f, %s mechanism (epsilon %g%s), privpost %s\n", rec.model.c_str(), rec.n,
              rec.mechanism.c_str(), rec.epsilon,
              rec.mechanism == "gaussian" ? (", delta " + std::to_string(rec.delta)).c_str() : "", rec.version.c_str());
  std::printf("%d chains x %d draws (burn-in %d, thin %d, seed %llu)\n\n", o.chains, o.draws, o.burnin, o.thin,
              static_cast<unsigned long long>(o.seed));
  std::size_t warnings = 0;
  for (const auto& [method, r] : results) {
    summarise(method == "gibbs"
                  ? (privpost::truncatable_family<family> ? "noise-aware Gibbs-SS (truncated release)" : "noise-aware Gibbs-SS")
                  : "naive (treats the release as exact; for comparison only)",
              r, names);
    if (method == "gibbs") warnings += warn("noise-aware", r, names);
  }
  if (!o.draws_csv.empty()) write_draws(o.draws_csv, results, names);
  return (o.strict && warnings > 0) ? strict_exit_status : 0;
}

template <class Prior>
int with_mechanism(const Prior& prior, const privpost::tools::release_record& rec, const options& o,
                   const std::vector<std::string>& names) {
  if (rec.mechanism == "laplace") {
    const privpost::laplace_mechanism m(rec.sensitivity, rec.epsilon);
    if (std::abs(m.scale() - rec.noise) > 1e-9 * rec.noise)
      throw std::invalid_argument("release record: Laplace scale does not equal sensitivity / epsilon");
    return run(prior, m, rec, o, names);
  }
  const auto m = privpost::gaussian_mechanism::analytic(rec.sensitivity, rec.epsilon, rec.delta);
  if (std::abs(m.sigma() - rec.noise) > 1e-9 * rec.noise)
    throw std::invalid_argument(
        "release record: Gaussian sigma does not match the analytic calibration of (epsilon, delta, sensitivity)");
  return run(prior, m, rec, o, names);
}

template <int K>
int multinomial(const privpost::tools::release_record& rec, const options& o) {
  const auto a = prior_values(o.prior.empty() ? std::string() : o.prior, K, "Dirichlet alpha_1..alpha_K");
  Eigen::Matrix<double, K, 1> alpha;
  for (int k = 0; k < K; ++k) alpha(k) = a[static_cast<std::size_t>(k)];
  std::vector<std::string> names;
  for (int k = 0; k < K; ++k) names.push_back("theta_" + std::to_string(k));
  return with_mechanism(privpost::dirichlet_prior<K>(alpha), rec, o, names);
}

// Draws of (theta, sigma^2) for records mapped to [-1, 1] by the declared box (x'_j = (x_j - c_j) / h_j,
// y' = (y - c_y) / h_y) turned into the data's scale: slope_j = h_y theta'_j / h_j, intercept = c_y + h_y theta'_0 -
// sum_j slope_j c_j, sigma^2 = h_y^2 sigma'^2. Without an intercept the slopes and sigma^2 are mapped alike (the scaled
// model then passes through the box's centre).
privpost::posterior to_data_scale(const privpost::posterior& scaled, const privpost::tools::release_record& rec) {
  const int d = static_cast<int>(rec.covariates.size());
  const int off = rec.intercept ? 1 : 0;
  const double yc = 0.5 * (rec.response_bounds.first + rec.response_bounds.second);
  const double yh = 0.5 * (rec.response_bounds.second - rec.response_bounds.first);
  std::vector<Eigen::MatrixXd> chains;
  for (const auto& m : scaled.chains()) {
    Eigen::MatrixXd out = m;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      double shift = 0.0;
      for (int k = 0; k < d; ++k) {
        const auto& b = rec.covariate_bounds[static_cast<std::size_t>(k)];
        const double xc = 0.5 * (b.first + b.second), xh = 0.5 * (b.second - b.first);
        out(i, off + k) = yh * m(i, off + k) / xh;
        shift += out(i, off + k) * xc;
      }
      if (rec.intercept) out(i, 0) = yc + yh * m(i, 0) - shift;
      out(i, off + d) = yh * yh * m(i, off + d);
    }
    chains.push_back(std::move(out));
  }
  return privpost::posterior(std::move(chains));
}

template <class Mechanism>
int run_regression_with(const privpost::tools::release_record& rec, const options& o, const Mechanism& mechanism) {
  using namespace privpost;
  const int d = static_cast<int>(rec.covariates.size());
  const regression_layout layout(d, rec.intercept);
  const int p = layout.columns();
  const Eigen::VectorXd z =
      Eigen::Map<const Eigen::VectorXd>(rec.noisy_statistics.data(), static_cast<Eigen::Index>(rec.noisy_statistics.size()));
  if (z.size() != layout.size())
    throw std::invalid_argument("release record: " + std::to_string(z.size()) + " noisy statistics; linreg with " +
                                std::to_string(d) + " covariate(s) has " + std::to_string(layout.size()));
  std::string defaults;
  for (int k = 0; k < p; ++k) defaults += "0,";
  for (int k = 0; k < p; ++k) defaults += "1,";
  defaults += "2,1";
  const auto v = prior_values(o.prior.empty() ? defaults : o.prior, static_cast<std::size_t>(2 * p + 2),
                              "mu_0..mu_{p-1}, diagonal precision lambda_0..lambda_{p-1}, a, b");
  Eigen::VectorXd mu(p), lambda(p);
  for (int k = 0; k < p; ++k) {
    mu(k) = v[static_cast<std::size_t>(k)];
    lambda(k) = v[static_cast<std::size_t>(p + k)];
  }
  const nig_regression_prior prior(mu, lambda.asDiagonal(), v[static_cast<std::size_t>(2 * p)],
                                   v[static_cast<std::size_t>(2 * p + 1)]);
  // Covariate model defaults from the declared bounds: centre m, spread (width / 4)^2 per covariate (on [-1, 1]
  // when the release was made on the box's unit scale: centre 0, spread 1/4).
  Eigen::VectorXd centre(d), spread(d);
  for (int k = 0; k < d; ++k) {
    const auto& b = rec.covariate_bounds[static_cast<std::size_t>(k)];
    const double lo = rec.unit_scaled ? -1.0 : b.first, hi = rec.unit_scaled ? 1.0 : b.second;
    centre(k) = 0.5 * (lo + hi);
    spread(k) = (hi - lo) * (hi - lo) / 16.0;
  }
  const std::string moments = o.moments.empty() ? (rec.noisy_moments.empty() ? "update" : "noisy") : o.moments;
  const inference_options io = driver_options(o);
  tools::progress_line progress("privpost-infer: sweeps");
  auto tick = [&](const inference_progress& pr) { progress(static_cast<long>(pr.done), static_cast<long>(pr.total)); };
  std::vector<std::pair<std::string, inference_result>> results;
  if (moments == "update") {
    const double nu = d + 3.0;
    const niw_hyperprior h{centre, 1.0, Eigen::MatrixXd(spread.asDiagonal()) * (nu - d - 1.0), nu};
    results.emplace_back("gibbs", run_chains(
                                      [&](auto& g) {
                                        return gibbs_ss(
                                            linear_regression_model(layout, hierarchical_normal_covariates(layout, h, g)), prior,
                                            mechanism, z, rec.n, g);
                                      },
                                      o, io, tick));
  } else if (moments == "prior") {
    const auto cm = normal_covariate_moments(layout, centre, Eigen::MatrixXd(spread.asDiagonal()));
    results.emplace_back("gibbs", run_chains(
                                      [&](auto& g) {
                                        return gibbs_ss(linear_regression_model(layout, fixed_covariates(cm)), prior, mechanism,
                                                        z, rec.n, g);
                                      },
                                      o, io, tick));
  } else if (moments == "noisy") {
    if (rec.noisy_moments.empty())
      throw std::invalid_argument("--moments noisy: the release record holds no noisy_moments (release with --noisy-moments)");
    const moment_release_layout ml(layout);
    const Eigen::VectorXd zm =
        Eigen::Map<const Eigen::VectorXd>(rec.noisy_moments.data(), static_cast<Eigen::Index>(rec.noisy_moments.size()));
    const auto cm = ml.moments_from_release(zm);
    results.emplace_back("gibbs", run_chains(
                                      [&](auto& g) {
                                        return gibbs_ss(linear_regression_model(layout, fixed_covariates(cm)), prior, mechanism,
                                                        z, rec.n, g);
                                      },
                                      o, io, tick));
  } else {
    throw std::invalid_argument("--moments is '" + moments + "'; accepted: update, prior, noisy");
  }
  if (o.compare_naive)
    results.emplace_back(
        "naive", infer([&](auto& g) { return conjugate_sampler(linear_regression_statistic(layout), prior, z, rec.n, g); }, io));
  std::vector<std::string> names;
  for (int k = 0; k < p; ++k)
    names.push_back((rec.intercept && k == 0) ? std::string("intercept")
                                              : rec.covariates[static_cast<std::size_t>(k - (rec.intercept ? 1 : 0))]);
  names.push_back("sigma^2");
  // Diagnostics on the sampled scale (an affine map of each coordinate's draws changes neither R-hat nor ESS).
  if (rec.unit_scaled) {
    for (auto& [method, r] : results) r.draws = to_data_scale(r.draws, rec);
  }
  std::printf("release: model linreg (%d covariate(s)%s), n %.0f, %s mechanism (epsilon %g), privpost %s\n", d,
              rec.intercept ? " + intercept" : "", rec.n, rec.mechanism.c_str(), rec.epsilon, rec.version.c_str());
  std::printf("%d chains x %d draws (burn-in %d, thin %d, seed %llu); covariate moments: %s\n", o.chains, o.draws, o.burnin,
              o.thin, static_cast<unsigned long long>(o.seed), moments.c_str());
  if (rec.unit_scaled)
    std::printf(
        "sampled on [-1, 1] by the declared box (prior on that scale); coefficients and sigma^2 reported on the data's scale\n");
  std::printf("\n");
  std::size_t total_warnings = 0;
  for (const auto& [method, r] : results) {
    summarise(method == "gibbs" ? ("noise-aware Gibbs-SS-" + moments).c_str()
                                : "naive (treats the release as exact; for comparison only)",
              r, names);
    if (method == "gibbs") total_warnings += warn("noise-aware", r, names);
  }
  if (!o.draws_csv.empty()) write_draws(o.draws_csv, results, names);
  return (o.strict && total_warnings > 0) ? strict_exit_status : 0;
}

int run_regression(const privpost::tools::release_record& rec, const options& o) {
  if (rec.mechanism == "laplace") {
    const privpost::laplace_mechanism m(rec.sensitivity, rec.epsilon);
    if (std::abs(m.scale() - rec.noise) > 1e-9 * rec.noise)
      throw std::invalid_argument("release record: Laplace scale does not equal sensitivity / epsilon");
    return run_regression_with(rec, o, m);
  }
  const auto m = privpost::gaussian_mechanism::analytic(rec.sensitivity, rec.epsilon, rec.delta);
  if (std::abs(m.sigma() - rec.noise) > 1e-9 * rec.noise)
    throw std::invalid_argument(
        "release record: Gaussian sigma does not match the analytic calibration of (epsilon, delta, sensitivity)");
  return run_regression_with(rec, o, m);
}

int dispatch(const privpost::tools::release_record& rec, options o) {
  const std::string& m = rec.model;
  if (o.thin == 0) o.thin = m == "linreg" ? regression_default_thin : default_thin;
  if (m == "linreg") return run_regression(rec, o);
  if (!o.moments.empty()) throw std::invalid_argument("--moments applies to linreg releases only");
  if (m == "binomial") {
    const auto p = prior_values(o.prior.empty() ? "1,1" : o.prior, 2, "Beta a,b");
    return with_mechanism(privpost::beta_prior(p[0], p[1]), rec, o, {"theta"});
  }
  if (m == "multinomial") {
    if (o.prior.empty()) {
      for (int k = 0; k < rec.categories; ++k) o.prior += (k ? ",1" : "1");
    }
    switch (rec.categories) {
      case 2:
        return multinomial<2>(rec, o);
      case 3:
        return multinomial<3>(rec, o);
      case 4:
        return multinomial<4>(rec, o);
      case 5:
        return multinomial<5>(rec, o);
      default:
        throw std::invalid_argument("release record: categories is " + std::to_string(rec.categories) + "; accepted: 2 to 5");
    }
  }
  if (m == "exponential") {
    const auto p = prior_values(o.prior.empty() ? "1,1" : o.prior, 2, "Gamma shape,rate of the rate");
    return with_mechanism(privpost::exponential_gamma_prior(p[0], p[1]), rec, o, {"rate"});
  }
  if (m == "poisson") {
    const auto p = prior_values(o.prior.empty() ? "1,1" : o.prior, 2, "Gamma shape,rate of the rate");
    return with_mechanism(privpost::poisson_gamma_prior(p[0], p[1]), rec, o, {"rate"});
  }
  if (m == "normal-known-var") {
    if (o.prior.empty())
      throw std::invalid_argument("--prior is required for normal-known-var: mean0,sd0,sigma (sigma: the known record sd)");
    const auto p = prior_values(o.prior, 3, "mean0,sd0,sigma");
    return with_mechanism(privpost::normal_mean_prior(p[0], p[1], p[2]), rec, o, {"mean"});
  }
  if (m == "normal") {
    const auto p = prior_values(o.prior.empty() ? "0,1,1,1" : o.prior, 4, "normal-inverse-gamma m,kappa,a,b");
    return with_mechanism(privpost::normal_inverse_gamma_prior(p[0], p[1], p[2], p[3]), rec, o, {"mean", "variance"});
  }
  throw std::invalid_argument("release record: model '" + m +
                              "'; accepted: binomial, multinomial, poisson, exponential, normal-known-var, normal");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"privpost-infer: noise-aware posterior from a privpost release record"};
  options o;
  app.add_option("release", o.release, "the JSON release record written by privpost-release")->required();
  app.add_option(
      "--prior", o.prior,
      "comma list: binomial a,b (default 1,1); multinomial alpha_1..K (default 1s); exponential/poisson Gamma shape,rate "
      "(default 1,1); normal-known-var mean0,sd0,sigma (required); normal m,kappa,a,b (default 0,1,1,1); linreg "
      "mu_0..mu_{p-1},lambda_0..lambda_{p-1} (diagonal precision),a,b of the normal-inverse-gamma prior (default zeros, ones, "
      "2, 1; for releases on the declared box's [-1, 1] scale, the default, the prior is on that scale: intercept first)");
  app.add_flag("--compare-naive", o.compare_naive, "also run the naive method (treats the release as exact)");
  app.add_option(
      "--moments", o.moments,
      "linreg: covariate moments update (hierarchical normal, default), prior (normal from the bounds) or noisy (released)");
  app.add_option("--chains", o.chains, "number of chains")->check(CLI::Range(1, 256));
  app.add_option("--burnin", o.burnin, "burn-in sweeps per chain")->check(CLI::Range(0, 100000000));
  app.add_option("--draws", o.draws, "kept draws per chain")->check(CLI::Range(4, 100000000));
  app.add_option("--thin", o.thin, "keep every thin-th sweep (default 2; linreg 5)")->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "seed (inference is reproducible from it)");
  app.add_flag("--parallel", o.parallel, "run the chains in parallel threads");
  app.add_option("--draws-csv", o.draws_csv, "write every draw to this CSV file");
  app.add_flag("--strict", o.strict,
               "exit with status 3 when the diagnostics warn (R-hat > 1.01, ESS < 100 per chain, repairs > 1%)");
  app.add_option("--target-ess", o.target_ess,
                 "extend the chains (doubling the kept draws) until every parameter has R-hat <= 1.01 and bulk and tail ESS >= N")
      ->check(CLI::Range(1.0, 1e9));
  app.add_option("--max-sweeps", o.max_sweeps, "with --target-ess: at most this many sweeps per chain (burn-in included)")
      ->check(CLI::Range(static_cast<std::int64_t>(1), static_cast<std::int64_t>(1'000'000'000)));
  CLI11_PARSE(app, argc, argv);
  try {
    std::ifstream f(o.release);
    if (!f) throw std::invalid_argument("cannot open release record '" + o.release + "'");
    nlohmann::json j;
    try {
      f >> j;
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(std::string("malformed release record: ") + e.what());
    }
    privpost::tools::release_record rec;
    try {
      rec = privpost::tools::from_json(j);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(std::string("malformed release record: ") + e.what());
    }
    return dispatch(rec, o);
  } catch (const std::exception& e) {
    std::cerr << "privpost-infer: error: " << e.what() << '\n';
    return 1;
  }
}
