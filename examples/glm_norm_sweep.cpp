// glm_norm_sweep: where the moment model's link approximation holds (Kulkarni et al. 2021, Sec. 5: accuracy "decreases
// sharply when ||theta||_2 >= 3", attributed to the Taylor link; docs/design-glm.md Sec. 4.4 item 4). For ||theta|| in
// {0.5, 1, 2, 3, 4} along the direction (0.5, -0.3, 0.2), d = 3, N = 2000 records x ~ N(0, 0.25 Omega) (Omega from
// LKJ(2), fixed seed, no clipping), the moment model is run on the exact sums without noise (the large-epsilon limit,
// "nonprivate_clt") with the exact link and with the paper's Taylor link, and each is compared with the exact
// non-private posterior on the records by the two-sample KS distance (largest over the coordinates). The coefficient
// prior's s_max is 25 here (||theta|| <= 5) so that every norm of the sweep is inside it. NUTS, 4 chains x (1000 + 1000).
//
//   privpost_glm_norm_sweep [--seed S (7)] [--check]
//
// --check (exit 1 when it fails): the exact link's KS is below 0.15 at every norm (the spec's proposed threshold). The
// Taylor link is reported, not asserted, with the share of its draws pointing against the true direction: its
// kappa_1 = 1/2 - q/8 changes sign at q = 4, so a reflected coefficient vector of larger norm fits the sums too.
#include <privpost/core/random/lkj.hpp>
#include <privpost/diagnostics/calibration.hpp>
#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/families/glm/logistic_link.hpp>
#include <privpost/inference/run.hpp>
#include <privpost/samplers/glm/glm_prior.hpp>
#include <privpost/samplers/glm/logistic_moment_model.hpp>
#include <privpost/samplers/glm/logistic_record_model.hpp>
#include <privpost/samplers/nuts.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>

namespace {

constexpr int d = 3;
constexpr Eigen::Index n_records = 2000;

double max_ks(const privpost::posterior& a, const privpost::posterior& b) {
  double out = 0.0;
  for (int j = 0; j < d; ++j) {
    const Eigen::VectorXd x = a.draws(j), y = b.draws(j);
    out = std::max(out, privpost::ks_two_sample(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())),
                                                std::span<const double>(y.data(), static_cast<std::size_t>(y.size())))
                            .statistic);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 7;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0' || v < 0) {
        std::fprintf(stderr, "glm_norm_sweep: --seed is '%s'; expected an integer >= 0\n", argv[i]);
        return 2;
      }
      seed = static_cast<std::uint64_t>(v);
    } else {
      std::fprintf(stderr, "usage: %s [--seed S] [--check]\n", argv[0]);
      return 2;
    }
  }
  try {
    std::mt19937_64 g(seed);
    Eigen::MatrixXd l(d, d);
    privpost::draw_lkj_cholesky(g, 2.0, l);
    const Eigen::MatrixXd sigma = 0.25 * l * l.transpose();
    const Eigen::VectorXd direction = Eigen::Vector3d(0.5, -0.3, 0.2).normalized();
    const privpost::glm_statistic statistic = privpost::glm_statistic::logistic(d, 1e6);  // no record is clipped
    const privpost::glm_prior prior{25.0, 2.5, 2.0};
    privpost::nuts_options nuts;
    privpost::run_options options;
    options.inference.chains = 4;
    options.inference.burnin = nuts.warmup;
    options.inference.draws = 1000;
    options.inference.parallel = true;
    std::printf("d = %d, N = %ld, theta along (0.5, -0.3, 0.2), Sigma = 0.25 Omega, exact sums (no noise), s_max = %g\n\n", d,
                static_cast<long>(n_records), prior.s_max);
    std::printf("%-8s %10s | %-26s | %-26s | %s\n", "||theta||", "sd(eta)", "KS exact link vs records",
                "KS Taylor link vs records", "Taylor draws with theta.direction < 0");
    bool ok = true;
    for (double norm : {0.5, 1.0, 2.0, 3.0, 4.0}) {
      const privpost::glm_parameters truth{norm * direction, sigma};
      const privpost::logistic_records rec = privpost::simulate_logistic_records(g, truth, n_records);
      const Eigen::VectorXd s = statistic.sum(rec.x, rec.y);
      options.inference.seed = g();
      const auto records = privpost::run(
                               [&](std::mt19937_64& cg) {
                                 return privpost::nuts_sampler<privpost::logistic_record_model>(
                                     privpost::logistic_record_model(rec.x, rec.y, prior.s_max), nuts, cg);
                               },
                               options)
                               .result;
      auto moment_posterior = [&]<class Link>(Link) {
        options.inference.seed = g();
        return privpost::run(
                   [&](std::mt19937_64& cg) {
                     return privpost::nuts_sampler<privpost::logistic_moment_model<Link>>(
                         privpost::logistic_moment_model<Link>(s, static_cast<double>(n_records), 0.0, d, prior), nuts, cg);
                   },
                   options)
            .result;
      };
      const auto exact = moment_posterior(privpost::exact_logistic_link{});
      const auto taylor = moment_posterior(privpost::taylor_logistic_link{});
      const double ks_exact = max_ks(exact.draws, records.draws), ks_taylor = max_ks(taylor.draws, records.draws);
      // The Taylor link's kappa_1 = 1/2 - q/8 turns negative beyond q = 4, so a reflected theta of larger norm can
      // match the released sums as well: its posterior can put mass on coefficients of the opposite sign.
      const Eigen::VectorXd along = taylor.draws.draw_matrix() * direction;
      const double flipped = static_cast<double>((along.array() < 0.0).count()) / static_cast<double>(along.size());
      std::printf("%-9.1f %10.3f | %26.3f | %26.3f | %.3f\n", norm, std::sqrt(truth.theta.dot(sigma * truth.theta)), ks_exact,
                  ks_taylor, flipped);
      std::fflush(stdout);
      ok = ok && ks_exact < 0.15;
    }
    if (!check) return 0;
    std::printf("%s: the exact link's KS distance is below 0.15 at every norm\n", ok ? "pass" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glm_norm_sweep: %s\n", e.what());
    return 1;
  }
}
