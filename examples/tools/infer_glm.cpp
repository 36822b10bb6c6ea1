// privpost-infer, DP-GLM (docs/design-glm.md): the noise-aware posterior of a release made by privpost-release
// --model logistic|poisson-glm, by NUTS (Stan's multinomial NUTS with its windowed adaptation; warm-up = --burnin) on
// logistic_moment_model with the exact link (default) or the paper's Taylor link, or on poisson_moment_model (exact
// tilted moments); a Laplace release by glm_collapsed_gibbs (NUTS given the noise's latent variances, docs/design-glm.md
// Sec. 5.10). With an intercept the covariate mean is inferred too (docs/design-glm.md Sec. 3.7). Releases on the declared
// ranges' unit-ball scale are sampled there and reported on the data's scale. The summary gives mean, sd, 95% central interval
// and "*" where the interval excludes 0.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "infer.hpp"

namespace privpost::tools::infer_tool {

namespace {

// The reported coordinates of a parameter_vector draw (theta~, tau, Omega lower, mu_x): the coefficients, the
// covariate sds and, with a covariate mean, the means; on the data's scale when the release was made on the unit ball
// of the declared ranges (x'_j = (x_j - centre_j) / (h_j sqrt d), h_j the half-width):
//   slope_j = theta'_j / (h_j sqrt d), intercept = c theta'_0 - sum_j slope_j centre_j (log-odds at x = 0),
//   sd_j = tau'_j h_j sqrt d, mean_j = centre_j + h_j sqrt d mu'_j.
void report_draw(std::span<const double> m, std::span<double> out, const release_record& rec, int p, bool mean) {
  const auto& declared = rec.glm();
  const int d = static_cast<int>(declared.covariates.size());
  const int off = p - d;
  const std::size_t corr = static_cast<std::size_t>(d) * static_cast<std::size_t>(d - 1) / 2;
  const bool data_scale = declared.glm_scale == "unit_ball";
  const auto at = [](int i) { return static_cast<std::size_t>(i); };
  double shift = 0.0;
  for (int k = 0; k < d; ++k) {
    double scale = 1.0, centre = 0.0;
    if (data_scale) {
      const auto& b = declared.covariate_bounds[at(k)];
      scale = 0.5 * (b.second - b.first) * std::sqrt(static_cast<double>(d));
      centre = 0.5 * (b.first + b.second);
    }
    out[at(off + k)] = m[at(off + k)] / scale;
    shift += out[at(off + k)] * centre;
    out[at(p + k)] = m[at(p + k)] * scale;
    if (mean) out[at(p + d + k)] = centre + scale * m[corr + at(p + d + k)];
  }
  if (off == 1) out[0] = declared.intercept_value * m[0] - shift;
}

// The reported columns of every draw (report_draw).
privpost::posterior reported(const privpost::posterior& sampled, const release_record& rec, int p, bool mean) {
  const int d = static_cast<int>(rec.glm().covariates.size());
  return map_draws(sampled, p + d + (mean ? d : 0),
                   [&](std::span<const double> in, std::span<double> out) { report_draw(in, out, rec, p, mean); });
}

std::string format_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

// seconds as "12 s", "3.5 min" or "2.1 h".
std::string format_duration(double seconds) {
  char buffer[48];
  if (seconds < 90.0)
    std::snprintf(buffer, sizeof buffer, "%.2g s", seconds);
  else if (seconds < 5400.0)
    std::snprintf(buffer, sizeof buffer, "%.2g min", seconds / 60.0);
  else
    std::snprintf(buffer, sizeof buffer, "%.3g h", seconds / 3600.0);
  return buffer;
}

// The GLM's table: the 95% interval, a "*" on each coefficient whose interval excludes 0, NUTS's events.
void summarise_glm(const std::string& title, const privpost::inference_result& r, const std::vector<std::string>& names,
                   int coefficients) {
  privpost::summary_layout layout;
  layout.name_width = 18;
  layout.quantiles = {{0.5 * (1.0 - 0.95), "2.5%"}, {0.5 * (1.0 + 0.95), "97.5%"}};  // the bounds of interval(0.95)
  layout.flagged = coefficients;
  layout.last_line = privpost::summary_layout::footer::nuts;
  std::fflush(stdout);
  privpost::summary_writer(std::cout, layout).write(table_header(title, names), r);
  std::cout.flush();
}

// The cost of a GLM run, measured before it starts and said at once: a large model (64 covariates: some 2000
// parameters) takes seconds a transition, and a user must not wait minutes in silence. One gradient of the model is timed at a
// random start, times the planned transitions (chains x (warm-up + draws x thin), plus the naive run) and 2^6
// leapfrog steps a transition (a typical NUTS tree; the maximum tree depth would be 2^max_depth). A run estimated
// above --max-minutes is refused with the estimate. For the Laplace mechanism the Gaussian model at the Laplace scale
// stands in for the collapsed Gibbs sampler's NUTS step (the same parameters and cost per gradient).
template <class Model>
void glm_cost_estimate(const Eigen::VectorXd& z, const release_record& rec, int d, const privpost::glm_prior& prior,
                       const privpost::glm_model_options& design, const options& o, int max_depth, double sigma) {
  Model probe(z, rec.n, sigma, d, prior, design);
  std::mt19937_64 g(o.seed);
  Eigen::VectorXd u, grad;
  probe.initial_point(g, 2.0, u);
  grad.resize(u.size());
  const auto start = std::chrono::steady_clock::now();
  double seconds = 0.0;
  int evaluations = 0;
  while (evaluations < 1 || (seconds < 0.05 && evaluations < 1000)) {
    (void)probe.log_density_gradient(u, grad);
    ++evaluations;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double per_gradient = seconds / evaluations;
  const double transitions = static_cast<double>(o.chains) *
                             (static_cast<double>(o.burnin) + static_cast<double>(o.draws) * static_cast<double>(o.thin)) *
                             (o.compare_naive ? 2.0 : 1.0);
  const double typical = per_gradient * transitions * 64.0 / (o.parallel ? std::min(2.0, static_cast<double>(o.chains)) : 1.0);
  const double worst = typical * std::ldexp(1.0, max_depth) / 64.0;
  std::fprintf(stderr,
               "%s: %s with %d covariate(s): %lld parameters; one gradient takes %.3g ms; %.0f transitions: "
               "about %s (up to %s at the maximum tree depth)\n",
               tool_name(o), rec.model.c_str(), d, static_cast<long long>(u.size()), 1e3 * per_gradient, transitions,
               format_duration(typical).c_str(), format_duration(worst).c_str());
  if (typical > 60.0 * o.max_minutes)
    throw std::invalid_argument("the run is estimated at " + format_duration(typical) + " (" + std::to_string(u.size()) +
                                " parameters, " + format_number(1e3 * per_gradient) + " ms a gradient), over --max-minutes " +
                                format_number(o.max_minutes) +
                                ": fewer --draws/--burnin/--chains, or raise --max-minutes to run it");
}

// Model: the moment model the GLM model M samples (M::with_moment_model).
template <class M, class Model>
int run_glm_with(const release_record& rec, const options& o, const std::string& link_name) {
  const auto& declared = rec.glm();
  using namespace privpost;
  constexpr bool counts = M::kind == glm_kind::poisson;  // responses: counts with a declared bound, or labels
  const int d = static_cast<int>(declared.covariates.size());
  const std::optional<double> c = declared.intercept ? std::optional<double>(declared.intercept_value) : std::nullopt;
  const auto statistic = M::statistic(d, declared.radius, declared.y_bound, c);
  const Eigen::VectorXd z =
      Eigen::Map<const Eigen::VectorXd>(rec.noisy_statistics.data(), static_cast<Eigen::Index>(rec.noisy_statistics.size()));
  if (z.size() != statistic.size())
    throw std::invalid_argument("release record: " + std::to_string(z.size()) + " noisy statistics; " + rec.model + " with " +
                                std::to_string(d) + " covariate(s)" + (c ? " and an intercept" : "") + " has " +
                                std::to_string(statistic.size()));
  const bool laplace = rec.mechanism == "laplace";
  if (rec.mechanism != "gaussian" && !laplace)
    throw std::invalid_argument("release record: mechanism '" + rec.mechanism + "'; the " + rec.model +
                                " model accepts: gaussian, laplace");
  // The sensitivity was checked against the declared bounds when the record was read (from_json), the noise scale
  // against the calibration by mechanism_of, as for every model.
  const tool_mechanism mechanism = mechanism_of(rec);
  double gaussian_sigma = 0.0;
  std::optional<laplace_mechanism> laplace_noise;
  if (const auto* l = mechanism.get_if<laplace_mechanism>())
    laplace_noise = *l;
  else
    gaussian_sigma = mechanism.get_if<gaussian_mechanism>()->sigma();
  // Defaults: the paper's prior (||theta~||^2 < 9, tau ~ half-normal(2.5), LKJ(2)). On the unit-ball scale every
  // |x_j| <= 1 / sqrt(d): the covariate sds and means get that scale instead of 2.5 and 1, and s_max = 100, since a
  // change of a in the log-odds across a covariate's declared range takes a coefficient of a sqrt(d) / 2 there (the
  // Pima records put glucose's near 5 at d = 5, outside ||theta~||^2 < 9; examples/glm_pima.cpp); for Poisson the
  // intercept is the log rate at the ranges' centres (log 28 = 3.3 for warpbreaks, examples/glm_warpbreaks.cpp).
  glm_prior prior;
  if (declared.glm_scale == "unit_ball") {
    prior.s_max = 100.0;
    prior.tau_scale = prior.mean_scale = 1.0 / std::sqrt(static_cast<double>(d));
  }
  // The Taylor link's moments are valid near the origin only (docs/design-glm.md Sec. 4.4 item 4: it breaks down near ||theta|| =
  // 3), and NUTS starts near ||theta~||^2 = s_max / 2: with it the default s_max stays the paper's 9.
  if constexpr (std::is_same_v<Model, logistic_moment_model<taylor_logistic_link>>) prior.s_max = 9.0;
  if (!o.prior.empty()) {
    prior = prior_from(o.prior, 4, "s_max, tau_scale, lkj_eta, mean_scale", [](const std::vector<double>& v) {
      // Checked here: the GLM samplers check these only once they run, under their own names.
      const char* names[] = {"s_max", "tau_scale", "lkj_eta", "mean_scale"};
      for (std::size_t k = 0; k < 4; ++k) check_positive_finite("glm_prior", names[k], v[k]);
      return glm_prior{v[0], v[1], v[2], v[3]};
    });
  }
  const glm_model_options design{c, declared.intercept};
  nuts_options nuts;
  if (!(o.target_accept > 0.0 && o.target_accept < 1.0))
    throw std::invalid_argument("--target-accept is " + std::to_string(o.target_accept) + "; accepted: a number in (0, 1)");
  nuts.target_accept = o.target_accept;
  nuts.dense_metric = o.metric == "dense";
  nuts.curvature_start = true;  // the GLM models start near the bulk (moment start): see nuts_options
  const inference_options io = driver_options(o);
  glm_cost_estimate<Model>(z, rec, d, prior, design, o, nuts.max_depth, laplace ? rec.noise : gaussian_sigma);
  tools::progress_line progress(std::string(tool_name(o)) + ": transitions");
  auto tick = [&](const inference_progress& pr) { progress(static_cast<long>(pr.done), static_cast<long>(pr.total)); };
  auto make = [&](double model_sigma) {
    return [&, model_sigma](auto& g) { return nuts_sampler<Model>(Model(z, rec.n, model_sigma, d, prior, design), nuts, g); };
  };
  const int p = statistic.augmented();
  std::vector<std::string> names;
  if (c) names.emplace_back("intercept");
  for (const auto& n : declared.covariates) names.push_back(n);
  for (const auto& n : declared.covariates) names.push_back("sd(" + n + ")");
  if (declared.intercept)
    for (const auto& n : declared.covariates) names.push_back("mean(" + n + ")");
  // --output-dir's files get the reported draws as they are made.
  const stream_as stream{"nuts", names, [&](std::span<const double> sampled, std::span<double> out) {
                           report_draw(sampled, out, rec, p, declared.intercept);
                         }};
  std::vector<std::pair<std::string, inference_result>> results;
  if (laplace) {
    // Partially collapsed Gibbs (docs/design-glm.md Sec. 5.10): NUTS given the Laplace noise's latent variances, then the
    // exact sums, then the variances.
    using sampler = glm_collapsed_gibbs<typename Model::map_type, laplace_mechanism>;
    results.emplace_back("nuts", run_chains([&](auto& g) { return sampler(z, rec.n, *laplace_noise, d, prior, design, nuts, g); },
                                            o, io, tick, std::nullopt, stream));
  } else {
    results.emplace_back("nuts", run_chains(make(gaussian_sigma), o, io, tick, std::nullopt, stream));
  }
  if (o.compare_naive && !interrupt_requested()) {
    // The naive posterior can take longer than the noise-aware one (its geometry is narrower): it has its own progress.
    tools::progress_line naive_progress(std::string(tool_name(o)) + ": naive (comparison) transitions");
    auto naive_tick = [&](const inference_progress& pr) {
      naive_progress(static_cast<long>(pr.done), static_cast<long>(pr.total));
    };
    results.emplace_back("naive", run(make(0.0), run_options{.inference = io}, progress_writer{naive_tick}).result);
  }
  // privpost-synthesize: the sets are drawn from the sampled scale's draws (the covariate law lives there), after the
  // summary.
  std::optional<inference_result> sampled;
  if (o.synthetic_sets > 0) sampled = results.front().second;
  for (auto& [method, r] : results) r.draws = reported(r.draws, rec, p, declared.intercept);
  const std::string noise =
      laplace ? "laplace mechanism (epsilon " + format_number(rec.epsilon) + ", scale " + format_number(rec.noise) + ")"
              : "gaussian mechanism (epsilon " + format_number(rec.epsilon) + ", delta " + format_number(rec.delta) + ", sigma " +
                    format_number(rec.noise) + ")";
  std::printf("release: model %s (%d covariate(s)%s%s), n %.0f, %s, privpost %s\n", rec.model.c_str(), d, c ? " + intercept" : "",
              counts ? (", y-bound " + format_number(declared.y_bound)).c_str() : "", rec.n, noise.c_str(), rec.version.c_str());
  std::printf(
      "NUTS: %d chains x %d draws (warm-up %d, thin %d, target acceptance %g, %s metric, seed %llu); link %s; prior "
      "s_max %g, tau_scale %g, lkj_eta %g%s\n",
      o.chains, o.draws, o.burnin, o.thin, o.target_accept, o.metric == "dense" ? "dense" : "diagonal",
      static_cast<unsigned long long>(o.seed), link_name.c_str(), prior.s_max, prior.tau_scale, prior.lkj_eta,
      declared.intercept ? (", mean_scale " + std::to_string(prior.mean_scale)).c_str() : "");
  if (declared.glm_scale == "unit_ball")
    std::printf("sampled on the declared ranges' unit-ball scale (prior on that scale); reported on the data's scale\n");
  std::printf("\n");
  std::size_t warnings = 0;
  std::vector<std::string> titles;
  for (const auto& [method, r] : results) {
    const std::string how = laplace ? "collapsed Gibbs: NUTS given the Laplace noise variances" : "NUTS";
    titles.push_back(method == "nuts" ? M::title(how, link_name)
                                      : std::string("naive (treats the release as exact; for comparison only)"));
    summarise_glm(titles.back(), r, names, p);
    if (method == "nuts") {
      warnings += warn("noise-aware", r, names);
      if (r.events.divergences > 0) {
        std::printf(
            "  WARNING (noise-aware): %llu divergent transitions after warm-up: the posterior may be biased where the "
            "sampler could not go; a higher --target-accept (e.g. 0.95: smaller steps) usually removes them\n",
            static_cast<unsigned long long>(r.events.divergences));
        ++warnings;
      }
    }
  }
  std::printf("* the 95%% interval of a coefficient excludes 0\n");
  if (!o.draws_csv.empty()) write_draws(o.draws_csv, results, names);
  write_outputs(o, rec, o.thin, results, titles, names);
  if (sampled && !interrupt_requested()) write_synthetic_glm_sets(o, rec, *sampled, M::kind, c);
  return (o.strict && warnings > 0) ? strict_exit_status : 0;
}

}  // namespace

int run_glm(const release_record& rec, const options& o) {
  // The model's moment model (and --link where it has links; the model table refused --link for the others).
  return privpost::tools::visit_glm(rec.model, [&]<class M>(std::type_identity<M>) {
    return M::with_moment_model(o.link, [&]<class Model>(std::type_identity<Model>, const std::string& link) {
      return run_glm_with<M, Model>(rec, o, link);
    });
  });
}

}  // namespace privpost::tools::infer_tool
