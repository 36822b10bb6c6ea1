// glm_pima: noise-aware logistic regression on real data, the Pima Indians Diabetes records (examples/data/pima.csv,
// 768 women; R's mlbench PimaIndiansDiabetes, the DP-GLM paper's "Diabetes" data; docs/design-glm.md Sec. 4.5), released
// with the PASS-GLM order-2 statistics under the analytic Gaussian mechanism and analysed with the intercept and
// covariate-mean model of docs/design-glm.md Sec. 3.7 (the paper's zero-mean model without intercept would force P(diabetes) =
// 1/2).
//
// Data owner's side, with every bound DECLARED from public knowledge below, never computed from the file:
//   - covariates pregnant, glucose, mass, pedigree, age (d = 5), each mapped from its declared range [lo, hi] to
//     [-1, 1] / sqrt(5), values outside clamped, so ||x|| <= R = 1; an intercept column of constant c = 1;
//   - a zero glucose or mass is a missing value in the original study: it is replaced by the midpoint of the declared
//     range (a rule applied to each record alone, so the record count N = 768 stays public and the sensitivity holds;
//     dropping such records would make N depend on the data);
//   - response diabetes: pos -> +1, neg -> -1;
//   - Delta from Lemma 3.3 with the intercept (glm_statistic::l2_sensitivity), sigma from the analytic Gaussian
//     calibration at (epsilon, delta = 1e-5); the noise comes from the operating system's CSPRNG unless --seed is given
//     (for reproducible runs and tests only).
// Analyst's side: NUTS, 4 chains x (1000 warm-up + draws) each, for the noise-aware model, the naive one (the same
// model with the noise ignored) and the non-private posterior on the records (logistic_record_model on (c, x)), all
// with the same coefficient prior (||theta~||^2 < s_max = 100, declared: the scaled covariates span +-0.45, so
// effects of a few units per unit of scaled covariate are plausible), tau ~ half-normal(0.5), mu_x ~ N(0, 0.5^2).
// The table gives each coefficient's posterior mean, sd and 95% interval on the scaled covariates, and "*" where the
// interval excludes 0 (the paper's use case: which risk factors matter).
// Reading it: the paper's coefficient prior is N(0, I) (truncated), so about N(0, 1) per coefficient, while the
// records put glucose near 4.9 on this scale. At epsilon = 1 the noise (sigma about 13 per released entry) leaves the
// sums little to say against that prior: the noise-aware posteriors are wide (sd about 1) and pulled towards 0, and
// none of the non-private "*" survives; the naive posteriors are as narrow as the non-private ones but centred
// elsewhere, some with the wrong sign (measured on three seeded releases). At epsilon = 10 the
// noise-aware posterior is within 2 of its sds of the non-private means, with 5 of the 6 "*"; at epsilon = 100 all
// three agree with the non-private posterior within a fraction of its sd.
//
//   privpost_glm_pima [path/to/pima.csv] [--epsilon E (1)] [--draws D (1000)] [--seed S] [--check] [--synthetic M]
//
// --synthetic M (2 to 200; 20 is usual) adds synthetic data (inference/synthetic_glm.hpp, docs/synthetic-data.md): M
// data sets of 100 N records each from M noise-aware posterior draws (covariates from the model's covariate law,
// clamped into the declared ranges, diabetes given them), logistic regression by maximum likelihood on each
// (logistic_fit), combined by the fully synthetic rules, beside the noise-aware posterior and the maximum-likelihood
// fit to the records themselves (non-private).
//
// --check exits 1 unless the noise-aware chains converged (R-hat <= 1.05 for every coefficient) and, for every
// coefficient, the noise-aware posterior sd is at least the non-private one and larger than the naive one (the noise
// adds uncertainty that the naive method leaves out).
#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/inference/run.hpp>
#include <privpost/inference/synthetic.hpp>
#include <privpost/inference/synthetic_glm.hpp>
#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/samplers/glm/glm_prior.hpp>
#include <privpost/samplers/glm/logistic_moment_model.hpp>
#include <privpost/samplers/glm/logistic_record_model.hpp>
#include <privpost/samplers/nuts.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef PRIVPOST_PIMA_CSV
#define PRIVPOST_PIMA_CSV "examples/data/pima.csv"
#endif

#include "example_plot.hpp"

namespace {

constexpr int d = 5;
constexpr double intercept = 1.0, radius = 1.0, delta = 1e-5;

// Declared public ranges (the analyst's and data owner's public knowledge, fixed before reading the file): number of
// pregnancies 0-20; 2-hour oral glucose tolerance test, plasma glucose 40-200 mg/dl; body-mass index 15-60 kg/m^2;
// the diabetes pedigree function 0-2.5; age 20-90 years (the study enrolled women of 21 and over).
struct declared_column {
  const char* name;
  int csv_column;
  double lo, hi;
  bool zero_is_missing;
};
constexpr std::array<declared_column, d> columns{{{"pregnant", 0, 0.0, 20.0, false},
                                                  {"glucose", 1, 40.0, 200.0, true},
                                                  {"mass", 5, 15.0, 60.0, true},
                                                  {"pedigree", 6, 0.0, 2.5, false},
                                                  {"age", 7, 20.0, 90.0, false}}};
constexpr int response_column = 8;

struct records {
  Eigen::MatrixXd x;  // scaled covariates (N x d)
  Eigen::VectorXd y;  // +-1
  int missing = 0, clamped = 0;
};

records read_pima(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::array<double, d>> xs;
  std::vector<double> ys;
  records out;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (cells.size() != 9) throw std::runtime_error(path + ":" + std::to_string(line_no) + ": expected 9 columns");
    std::array<double, d> x{};
    for (int j = 0; j < d; ++j) {
      const declared_column& c = columns[static_cast<std::size_t>(j)];
      double v = std::stod(cells[static_cast<std::size_t>(c.csv_column)]);
      if (c.zero_is_missing && v == 0.0) {
        v = 0.5 * (c.lo + c.hi);
        ++out.missing;
      }
      if (v < c.lo || v > c.hi) ++out.clamped;
      x[static_cast<std::size_t>(j)] = privpost::scale_to_declared_range(v, c.lo, c.hi, d);
    }
    const std::string& r = cells[response_column];
    if (r != "pos" && r != "neg")
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": diabetes must be pos or neg");
    xs.push_back(x);
    ys.push_back(r == "pos" ? 1.0 : -1.0);
  }
  out.x.resize(static_cast<Eigen::Index>(xs.size()), d);
  out.y.resize(static_cast<Eigen::Index>(ys.size()));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    for (int j = 0; j < d; ++j) out.x(static_cast<Eigen::Index>(i), j) = xs[i][static_cast<std::size_t>(j)];
    out.y(static_cast<Eigen::Index>(i)) = ys[i];
  }
  return out;
}

double parse_number(const char* flag, const char* value, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(v >= lo && v <= hi)) {
    std::fprintf(stderr, "glm_pima: %s is '%s'; expected a number in [%g, %g]\n", flag, value, lo, hi);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = PRIVPOST_PIMA_CSV;
  double epsilon = 1.0;
  int draws = 1000;
  std::optional<std::uint64_t> seed;
  bool check = false;
  int synthetic_sets = 0;
  std::string plot;
  try {
    plot = privpost::examples::take_plot_argument(argc, argv);  // --plot FILE.png: the three posteriors' densities
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "glm_pima: %s\n", e.what());
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else if (std::strcmp(argv[i], "--epsilon") == 0 && i + 1 < argc) {
      epsilon = parse_number("--epsilon", argv[++i], 1e-3, 100.0);
    } else if (std::strcmp(argv[i], "--draws") == 0 && i + 1 < argc) {
      draws = static_cast<int>(parse_number("--draws", argv[++i], 10.0, 1e6));
    } else if (std::strcmp(argv[i], "--synthetic") == 0 && i + 1 < argc) {
      synthetic_sets = static_cast<int>(parse_number("--synthetic", argv[++i], 2.0, 200.0));
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = static_cast<std::uint64_t>(parse_number("--seed", argv[++i], 0.0, 1e15));
    } else if (argv[i][0] != '-') {
      path = argv[i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [pima.csv] [--epsilon E] [--draws D] [--seed S] [--check] [--synthetic M] [--plot FILE.png]\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    // ---- the data owner ---------------------------------------------------------------------------------------------
    const records rec = read_pima(path);
    const Eigen::Index n = rec.x.rows();
    const auto statistic = privpost::glm_statistic::logistic(d, radius, intercept);
    const Eigen::VectorXd s = statistic.sum(rec.x, rec.y);
    const auto mechanism = privpost::gaussian_mechanism::analytic(statistic.l2_sensitivity(), epsilon, delta);
    Eigen::VectorXd z;
    if (seed) {
      std::mt19937_64 g(*seed);
      z = mechanism.release(s, g);
    } else {
      z = mechanism.release(s);  // the operating system's CSPRNG
    }
    std::printf(
        "Pima Indians Diabetes: N = %lld records, d = %d covariates + intercept (c = 1), %d missing values set to "
        "their range's midpoint, %d values clamped to a declared range\n",
        static_cast<long long>(n), d, rec.missing, rec.clamped);
    std::printf(
        "release: %lld statistics, L2 sensitivity %.4f (Lemma 3.3 with the intercept), epsilon %g, delta %g, "
        "sigma %.3f; noise from %s\n\n",
        static_cast<long long>(statistic.size()), statistic.l2_sensitivity(), epsilon, delta, mechanism.sigma(),
        seed ? "a seeded engine (--seed: for tests only)" : "the OS CSPRNG");

    // ---- the analyst ------------------------------------------------------------------------------------------------
    const privpost::glm_prior prior{100.0, 0.5, 2.0, 0.5};
    const privpost::glm_model_options design{intercept, true};
    privpost::nuts_options nuts;
    privpost::run_options options;
    options.inference.chains = 4;
    options.inference.burnin = nuts.warmup;
    options.inference.draws = draws;
    options.inference.parallel = true;
    options.inference.seed = seed.value_or(std::random_device{}()) + 1;
    auto moment_posterior = [&](double model_sigma) {
      return privpost::run(
                 [&](std::mt19937_64& g) {
                   return privpost::nuts_sampler<privpost::logistic_moment_model<>>(
                       privpost::logistic_moment_model<>(z, static_cast<double>(n), model_sigma, d, prior, design), nuts, g);
                 },
                 options)
          .result;
    };
    const auto aware = moment_posterior(mechanism.sigma());
    const auto naive = moment_posterior(0.0);
    Eigen::MatrixXd xa(n, d + 1);
    xa.col(0).setConstant(intercept);
    xa.rightCols(d) = rec.x;
    const auto exact = privpost::run(
                           [&](std::mt19937_64& g) {
                             return privpost::nuts_sampler<privpost::logistic_record_model>(
                                 privpost::logistic_record_model(xa, rec.y, prior.s_max), nuts, g);
                           },
                           options)
                           .result;

    std::printf("%-10s | %-33s | %-33s | %-33s\n", "", "non-private (records)", "noise-aware", "naive (noise ignored)");
    std::printf("%-10s | %-33s | %-33s | %-33s\n", "coef", "mean    sd      95% interval", "mean    sd      95% interval",
                "mean    sd      95% interval");
    bool ok = true;
    double max_rhat = 0.0;
    for (int j = 0; j <= d; ++j) {
      const char* name = j == 0 ? "intercept" : columns[static_cast<std::size_t>(j - 1)].name;
      std::printf("%-10s", name);
      for (const privpost::posterior* p : {&exact.draws, &aware.draws, &naive.draws}) {
        const auto ci = p->interval(0.95, j);
        std::printf(" | %7.3f %6.3f [%7.3f, %7.3f] %s", p->mean(j), p->sd(j), ci.lower, ci.upper, ci.contains(0.0) ? " " : "*");
      }
      std::printf("\n");
      max_rhat = std::max(max_rhat, aware.draws.rhat(j));
      if (!(aware.draws.sd(j) >= exact.draws.sd(j) && aware.draws.sd(j) > naive.draws.sd(j))) ok = false;
    }
    std::printf(
        "\n* the 95%% interval excludes 0. Coefficients per unit of the scaled covariate ([-1, 1] / sqrt(5) over "
        "its declared range).\nnoise-aware: max R-hat %.3f over the coefficients, %llu divergent transitions; "
        "naive: %llu\n",
        max_rhat, static_cast<unsigned long long>(aware.events.divergences),
        static_cast<unsigned long long>(naive.events.divergences));
    if (synthetic_sets > 0) {
      // M posterior draws spread over the chains, one synthetic set of 100 N records at each, moved into the release's
      // bounds (every scaled covariate within 1 / sqrt(d)) as the release moved the records. 100 N, not the 10 N that
      // suffices for a family: at epsilon 1 the noisy second moments leave the covariates' sds tau weakly identified,
      // and a draw with a tiny tau_j gives a set whose coefficient j has a huge variance u_l. With 10 N such sets
      // dominated u_m, T_f = (1 + 1/m) b_m - u_m fell near 0 or below, and nu_f near 0 (intervals of +-1e300) or the
      // fallback followed for 4 of the 6 coefficients at seed 7; with 100 N for 1 of 6.
      const std::int64_t size = 100 * static_cast<std::int64_t>(n);
      privpost::glm_record_limits limits;
      limits.coordinate = 1.0 / std::sqrt(static_cast<double>(d));
      std::mt19937_64 g(options.inference.seed + 2);
      std::vector<std::vector<double>> q(d + 1), u(d + 1);
      for (const auto& v : privpost::synthetic_parameter_draws(aware.draws, synthetic_sets)) {
        const auto p = privpost::glm_synthetic_parameter::from_vector(d, intercept, true, v);
        const auto fit =
            privpost::logistic_fit(privpost::synthetic_glm_records(privpost::glm_kind::logistic, p, limits, size, g), intercept);
        for (int j = 0; j <= d; ++j) {
          q[static_cast<std::size_t>(j)].push_back(fit.coefficients(j));
          u[static_cast<std::size_t>(j)].push_back(fit.covariance(j, j));
        }
      }
      Eigen::MatrixXd data(n, d + 1);
      data.leftCols(d) = rec.x;
      data.col(d) = rec.y;
      const auto mle = privpost::logistic_fit(data, intercept);
      std::printf(
          "\nsynthetic data: %d sets of %lld records from the noise-aware posterior, logistic regression on each, "
          "combined (fully synthetic rules)\n",
          synthetic_sets, static_cast<long long>(size));
      std::printf("%-10s | %-43s | %-26s | %-26s\n", "coef", "combined synthetic: est  sd  95% interval  df",
                  "noise-aware: mean  95%", "non-private MLE: est  95%");
      for (int j = 0; j <= d; ++j) {
        const char* name = j == 0 ? "intercept" : columns[static_cast<std::size_t>(j - 1)].name;
        const auto c = privpost::combine_fully_synthetic(q[static_cast<std::size_t>(j)], u[static_cast<std::size_t>(j)],
                                                         static_cast<double>(size), static_cast<double>(n));
        const auto ci = c.central_interval(0.95);
        const auto pi = aware.draws.interval(0.95, j);
        const double se = std::sqrt(mle.covariance(j, j));
        std::printf("%-10s | %7.3f %6.3f [%7.3f, %7.3f] %5.1f%s | %7.3f [%7.3f, %7.3f] | %7.3f [%7.3f, %7.3f]\n", name,
                    c.estimate, std::sqrt(c.variance), ci.lo, ci.hi, c.degrees_of_freedom, c.fallback ? "!" : " ",
                    aware.draws.mean(j), pi.lower, pi.upper, mle.coefficients(j), mle.coefficients(j) - 1.959964 * se,
                    mle.coefficients(j) + 1.959964 * se);
      }
      std::printf("(! marks the conservative fallback for a negative combined variance; df infinite there)\n");
    }
    if (!plot.empty()) {
      std::vector<std::string> coefficient_names{"intercept"};
      for (int j = 1; j <= d; ++j) coefficient_names.emplace_back(columns[static_cast<std::size_t>(j - 1)].name);
      std::ostringstream title;
      title << "Pima: logistic regression coefficients (scaled covariates), epsilon " << epsilon;
      privpost::examples::plot_densities(
          plot, title.str(),
          {{"non-private (records)", &exact.draws}, {"noise-aware", &aware.draws}, {"naive (noise ignored)", &naive.draws}},
          coefficient_names);
    }
    if (check) {
      if (max_rhat > 1.05) ok = false;
      std::printf("check: %s\n", ok ? "passed"
                                    : "FAILED (R-hat > 1.05, or a noise-aware sd below the non-private or "
                                      "naive one)");
      return ok ? 0 : 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glm_pima: %s\n", e.what());
    return 1;
  }
}
