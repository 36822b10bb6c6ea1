// housevotes_cgm: private learning of a discrete graphical model from real data (docs/design-cgm.md Sec. 4.5).
// The 1984 House votes (435 representatives: party and 16 votes, y / n / missing) are modelled by the star centred on
// the party, a structure declared in advance (never chosen from these data). Missing votes are a third state, so all
// records are used and N = 435 is public. One fixed, seeded 75/25 split: only the 326 training records' 16 edge tables
// are released, with Laplace noise at b = 2|E| / epsilon = 32 / epsilon (replace-one neighbours); the test records serve
// the non-private evaluation only. For each epsilon, `--releases` simulated releases (seeded, for a reproducible study:
// a real release draws its noise from the operating system's CSPRNG, as privpost-release does) are fitted by
//   - CGM (MAP-EM, pseudo-count 10, box-dual E-step),
//   - naive MLE on the simplex-projected tables at lambda 1e-4, 1e-3, 1e-2 (all reported: choosing lambda on the
//     private data would itself need privacy accounting),
//   - with --posterior, the Bayesian CGM (docs/design-cgm.md Sec. 6): Gibbs-SS over tree_cgm_model with the hyper-Dirichlet prior
//     (alpha_0 = 10, MAP-EM's pseudo-count), one chain of 1000 burn-in sweeps and 500 draws thinned by 10 per release,
//     fitted through its posterior mean, and how often the posterior's 90% interval of P(Class = democrat) covers the
//     non-private fit's value,
// and compared with the non-private fit (pseudo-moment MLE of the true training tables with pseudo-count 10) by
// KL(p_nonprivate || p_private), exact by tree BP, and by the holdout log-likelihood per test record.
// --encoding drop-incomplete (docs/design-cgm.md Sec. 4.5's second encoding) keeps the complete records only (every vote K = 2)
// and splits those. One replacement among the 435 records still changes each complete-case table by at most 2 in L1, so b = 2|E|
// / epsilon stands; but the complete-case N is then data-dependent and is not published: every private fit uses N-hat, the mean
// of the released tables' totals (post-processing of the release, no further budget), rounded and at least 1. The non-private
// reference uses the true N.
//
// Usage: privpost_housevotes_cgm [--csv FILE] [--releases R] [--posterior] [--check]
//                                [--encoding missing-as-state|drop-incomplete]
// (defaults: the bundled copy, R = 25, missing-as-state; --posterior adds about 1 s per release and epsilon). The
// program first prints the loader's counts: records, complete records, and the two votes with the most missing values.
//   --check exits non-zero unless the behaviour the first run confirmed holds: CGM's median KL decreases as epsilon
//   grows, and is at most naive's at lambda 1e-4 and 1e-3 for every epsilon <= 5. The first run (R = 25) did not confirm
//   two of the spec's expectations, which the program prints but does not check: naive at lambda 1e-2 has the lower
//   median KL at epsilon 1, 2 and 5 (2.67, 0.90, 0.29 against CGM's 2.85, 1.32, 0.34), and at epsilon 20 the naive fits
//   at lambda 1e-4 and 1e-2 stay 0.08 and 0.15 away (lambda's bias), while CGM is at 0.040.
//   With --posterior (first run, R = 10): the Bayesian CGM's posterior mean had median KL 4.50, 2.81, 0.98, 0.23, 0.063,
//   0.023 at epsilon 0.5 ... 20 (MAP-EM 4.43, 2.94, 1.30, 0.37, 0.13, 0.045): the lowest of all methods from epsilon 5
//   on, and its 90% intervals of P(Class = democrat) covered the non-private value in 10 of 10 releases at every epsilon.
#include <privpost/families/graphical/contingency_tables.hpp>
#include <privpost/families/graphical/hyper_dirichlet.hpp>
#include <privpost/families/graphical/moments.hpp>
#include <privpost/families/graphical/pairwise_graph.hpp>
#include <privpost/families/graphical/tree_bp.hpp>
#include <privpost/families/graphical/tree_cgm_model.hpp>
#include <privpost/inference/fit.hpp>
#include <privpost/inference/run.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/samplers/cgm/cgm_em.hpp>
#include <privpost/samplers/cgm/cgm_noise.hpp>
#include <privpost/samplers/cgm/naive_mle.hpp>
#include <privpost/samplers/gibbs_ss.hpp>

#include "housevotes_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef PRIVPOST_HOUSEVOTES_CSV
#define PRIVPOST_HOUSEVOTES_CSV "housevotes84.csv"
#endif

namespace {
using privpost::pairwise_graph;

// Mean log-likelihood of records under theta: <theta, t(x)> - A(theta), t(x) the record's node and edge indicators.
double holdout_loglik(privpost::tree_bp& bp, const Eigen::VectorXd& theta, const Eigen::MatrixXi& test) {
  Eigen::VectorXd mu;
  bp.marginals(theta, mu);
  const Eigen::VectorXd counts = privpost::contingency_tables(bp.graph(), test);
  return counts.dot(theta) / static_cast<double>(test.rows()) - bp.log_partition();
}

struct summary {
  double q1, median, q3;
};
summary quartiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double p) {
    const double h = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(h);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
  };
  return {at(0.25), at(0.5), at(0.75)};
}
}  // namespace

int main(int argc, char** argv) {
  std::string csv = PRIVPOST_HOUSEVOTES_CSV;
  int releases = 25;
  bool check = false, posterior = false, drop_incomplete = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--csv" && i + 1 < argc) {
      csv = argv[++i];
    } else if (a == "--encoding" && i + 1 < argc) {
      const std::string e = argv[++i];
      if (e != "missing-as-state" && e != "drop-incomplete") {
        std::fprintf(stderr, "error: --encoding %s: expected missing-as-state or drop-incomplete\n", e.c_str());
        return 2;
      }
      drop_incomplete = e == "drop-incomplete";
    } else if (a == "--check") {
      check = true;
    } else if (a == "--posterior") {
      posterior = true;
    } else if (a == "--releases" && i + 1 < argc) {
      releases = std::atoi(argv[++i]);
      if (releases < 1 || releases > 10000) {
        std::fprintf(stderr, "error: --releases %s: expected an integer in [1, 10000]\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--csv FILE] [--releases R] [--posterior] [--check] [--encoding "
                   "missing-as-state|drop-incomplete]\n",
                   argv[0]);
      return 2;
    }
  }
  Eigen::MatrixXi votes;
  try {
    votes = privpost::examples::read_votes(csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }

  if (check && drop_incomplete) {
    std::fprintf(stderr, "error: --check tests the behaviour confirmed with the default encoding (missing-as-state)\n");
    return 2;
  }
  // The loader's counts (docs/design-cgm.md Sec. 4.5 gives them for this test only; no private computation uses them).
  {
    std::vector<std::pair<long, int>> missing;
    for (int j = 1; j < 17; ++j) missing.emplace_back(static_cast<long>((votes.col(j).array() == 2).count()), j);
    std::sort(missing.begin(), missing.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const long complete = static_cast<long>((votes.rightCols(16).array() != 2).rowwise().all().count());
    std::printf("loaded %ld records, %ld complete; most missing: V%d %ld, V%d %ld\n", static_cast<long>(votes.rows()), complete,
                missing[0].second, missing[0].first, missing[1].second, missing[1].first);
  }
  if (drop_incomplete) {
    Eigen::MatrixXi complete(votes.rows(), 17);
    Eigen::Index kept = 0;
    for (Eigen::Index r = 0; r < votes.rows(); ++r)
      if ((votes.row(r).tail(16).array() != 2).all()) complete.row(kept++) = votes.row(r);
    votes = complete.topRows(kept);
  }

  // The declared structure: the star centred on Class (node 0), K = 2 for Class and 3 for each vote (2 when the
  // incomplete records are dropped).
  std::vector<int> k(17, drop_incomplete ? 2 : 3);
  k[0] = 2;
  std::vector<std::pair<int, int>> edges;
  for (int j = 1; j < 17; ++j) edges.emplace_back(0, j);
  const pairwise_graph star(k, edges);

  // One fixed 75/25 split.
  std::vector<Eigen::Index> order(static_cast<std::size_t>(votes.rows()));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 split(1984);
  std::shuffle(order.begin(), order.end(), split);
  const auto n_train = static_cast<Eigen::Index>(std::lround(0.75 * static_cast<double>(votes.rows())));
  Eigen::MatrixXi train(n_train, 17), test(votes.rows() - n_train, 17);
  for (Eigen::Index r = 0; r < votes.rows(); ++r)
    (r < n_train ? train.row(r) : test.row(r - n_train)) = votes.row(order[static_cast<std::size_t>(r)]);
  const double n_records = static_cast<double>(n_train);
  std::printf("1984 House votes: %ld records (%ld training, %ld test); star on Class, %s\n", static_cast<long>(votes.rows()),
              static_cast<long>(n_train), static_cast<long>(test.rows()),
              drop_incomplete ? "encoding drop-incomplete (complete records only; the private fits use N-hat, the mean "
                                "of the released tables' totals, not the data-dependent N)"
                              : "encoding missing-as-state (missing votes as a third state; N public)");

  // The non-private reference.
  privpost::tree_bp bp(star);
  const Eigen::VectorXd true_counts = privpost::contingency_tables(star, train);
  const Eigen::VectorXd tables = true_counts.tail(bp.layout().released_size());
  Eigen::VectorXd mu, theta_np;
  privpost::pseudo_count_marginals(star, true_counts, n_records, 10.0, mu);
  privpost::pseudo_moment_parameters(star, mu, theta_np);
  std::printf("non-private fit: holdout log-likelihood %.3f per test record\n\n", holdout_loglik(bp, theta_np, test));
  std::printf("%8s  %-18s  %-28s  %-10s  %s\n", "epsilon", "method", "KL to non-private: median [q1, q3]", "holdout LL",
              "iterations (median)");

  const std::vector<double> epsilons{0.5, 1, 2, 5, 10, 20};
  const std::vector<double> lambdas{1e-4, 1e-3, 1e-2};
  std::vector<double> cgm_median;
  bool cgm_beats_naive = true, cgm_beats_small_lambda = true, all_close_at_20 = true;
  std::mt19937_64 noise(435), chains(84);
  const privpost::tree_cgm_model cgm_model(star);
  const privpost::hyper_dirichlet cgm_prior(star, 10.0);
  const Eigen::Index democrat = bp.layout().node_offset(0);
  std::vector<std::string> coverage_lines;
  for (const double epsilon : epsilons) {
    const privpost::laplace_mechanism mechanism(privpost::contingency_l1_sensitivity(star), epsilon);
    const std::size_t methods = 1 + lambdas.size() + (posterior ? 1 : 0);
    std::vector<std::vector<double>> kl(methods), ll(methods), its(methods);
    int covered = 0;
    for (int r = 0; r < releases; ++r) {
      const Eigen::VectorXd y = mechanism.release(tables, noise);
      // The N of the private fits: public under missing-as-state; else estimated from the release alone.
      const double n_fit = drop_incomplete ? std::max(1.0, std::round(y.sum() / 16.0)) : n_records;
      privpost::cgm_em_options em_options;
      em_options.keep_trace = false;
      privpost::cgm_em em(star, y, n_fit, privpost::make_cgm_noise(mechanism), privpost::tree_bp(star), em_options);
      const privpost::fit_result fitted = privpost::fit(em, privpost::fit_options{2000});
      kl[0].push_back(privpost::exact_kl(bp, theta_np, fitted.parameter));
      ll[0].push_back(holdout_loglik(bp, fitted.parameter, test));
      its[0].push_back(fitted.iterations);
      for (std::size_t l = 0; l < lambdas.size(); ++l) {
        privpost::naive_mle_options options;
        options.lambda = lambdas[l];
        privpost::naive_mle naive(star, y, n_fit, privpost::tree_bp(star), options);
        const privpost::fit_result nf = privpost::fit(naive, privpost::fit_options{5000});
        kl[l + 1].push_back(privpost::exact_kl(bp, theta_np, nf.parameter));
        ll[l + 1].push_back(holdout_loglik(bp, nf.parameter, test));
        its[l + 1].push_back(nf.iterations);
      }
      if (posterior) {
        privpost::run_options o;
        o.inference.chains = 1;
        o.inference.burnin = 1000;
        o.inference.draws = 500;
        o.inference.thin = 10;
        o.inference.seed = chains();
        const auto r =
            privpost::run([&](std::mt19937_64& g) { return privpost::gibbs_ss(cgm_model, cgm_prior, mechanism, y, n_fit, g); }, o)
                .result;
        Eigen::VectorXd theta_post;
        privpost::pseudo_moment_parameters(star, r.draws.draw_matrix().colwise().mean().transpose(), theta_post);
        kl.back().push_back(privpost::exact_kl(bp, theta_np, theta_post));
        ll.back().push_back(holdout_loglik(bp, theta_post, test));
        its.back().push_back(static_cast<double>(r.sweeps));
        const auto interval = r.draws.interval(0.9, democrat);
        if (interval.lower <= mu(democrat) && mu(democrat) <= interval.upper) ++covered;
      }
    }
    std::fprintf(stderr, ".");  // progress: one dot per epsilon
    for (std::size_t m = 0; m < kl.size(); ++m) {
      const summary s = quartiles(kl[m]);
      const std::string name = m == 0                    ? "CGM (MAP-EM)"
                               : m == 1 + lambdas.size() ? "Bayesian CGM"
                                                         : "naive lambda " + std::string(m == 1   ? "1e-4"
                                                                                         : m == 2 ? "1e-3"
                                                                                                  : "1e-2");
      std::printf("%8.1f  %-18s  %8.4f [%.4f, %.4f]%6s  %10.3f  %.0f\n", epsilon, name.c_str(), s.median, s.q1, s.q3, "",
                  quartiles(ll[m]).median, quartiles(its[m]).median);
      if (m > 0 && m <= lambdas.size() && epsilon <= 5.0 && quartiles(kl[0]).median > s.median) {
        cgm_beats_naive = false;
        if (m < 3) cgm_beats_small_lambda = false;
      }
      if (epsilon == 20.0 && m <= lambdas.size() && s.median > 0.05) all_close_at_20 = false;
    }
    cgm_median.push_back(quartiles(kl[0]).median);
    if (posterior)
      coverage_lines.push_back("  epsilon " + std::to_string(epsilon).substr(0, 4) + ": " + std::to_string(covered) + " of " +
                               std::to_string(releases));
  }
  std::fprintf(stderr, "\n");
  bool decreasing = true;
  for (std::size_t i = 1; i < cgm_median.size(); ++i) decreasing = decreasing && cgm_median[i] < cgm_median[i - 1];
  std::printf("\nexpected behaviour (docs/design-cgm.md Sec. 4.5):\n");
  std::printf("  CGM median KL decreases as epsilon grows: %s\n", decreasing ? "yes" : "no");
  std::printf("  CGM median KL at most naive's at every lambda for epsilon <= 5: %s\n", cgm_beats_naive ? "yes" : "no");
  std::printf("  CGM median KL at most naive's at lambda 1e-4 and 1e-3 for epsilon <= 5: %s\n",
              cgm_beats_small_lambda ? "yes" : "no");
  std::printf("  every private fit within median KL 0.05 of the non-private fit at epsilon 20: %s\n",
              all_close_at_20 ? "yes" : "no");
  if (posterior) {
    std::printf(
        "\nBayesian CGM (its iterations column: sweeps): the posterior's 90%% interval of P(Class = democrat) covers "
        "the non-private fit's %.3f in\n",
        mu(democrat));
    for (const auto& line : coverage_lines) std::printf("%s releases\n", line.c_str());
  }
  if (check && !(decreasing && cgm_beats_small_lambda)) {
    std::printf("CHECK FAILED: the behaviour confirmed by the first run does not hold\n");
    return 1;
  }
  return 0;
}
