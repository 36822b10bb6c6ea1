// cgm_chain_study: the dissertation's synthetic study of private graphical-model learning (docs/design-cgm.md
// Sec. 4.1, Fig. 3.2-3.3 of the text, whose figures are missing): chains of T nodes with K states and Dirichlet(1) edge
// potentials, a population of N records per model (exact tables by conditional multinomials, so N = 10^7 costs what
// 10^3 does), Laplace releases of every edge table, and the exact KL(truth || estimate) of
//   - CGM (MAP-EM, pseudo-count 10 or --pseudo-count, box-dual E-step, at most 2000 iterations),
//   - the naive MLE on the simplex-projected tables at lambda 1e-4, 1e-3, 1e-2 and on the raw tables at 1e-3,
//   - the non-private fit (naive MLE of the true tables, lambda 1e-4), the uniform model and the text's random
//     estimator (every edge table ~ Dirichlet(1), fitted by the naive MLE; the text does not say which distribution),
// as medians over models x releases per (N, epsilon) (testing/cgm_study.hpp, cgm_point_study; the tests run the same
// design, tests/samplers/cgm_naive_test.cpp). Releases here are seeded for a reproducible study; a real release draws
// its noise from the operating system's CSPRNG (privpost-release).
//
// The text's noise scale is |E| / epsilon (add/remove neighbours, the default here to reproduce it): under the
// library's replace-one relation that is 2 epsilon-DP, and --neighbours replace gives the 2|E| / epsilon that is
// epsilon-DP under replacement (spec D1).
//
// Usage: privpost_cgm_chain_study [--n 1e3,1e4,1e5] [--epsilon 1,0.1,0.01] [--models 5] [--releases 5] [--nodes 10]
//                                 [--states 3] [--neighbours add-remove|replace|both] [--seed 2017] [--run-on 0]
//                                 [--evidence exact|gaussian|auto] [--pseudo-count 10]
//                                 [--posterior [--burnin 500] [--draws 1000]
//                                 [--rounds 2] [--thin 2] [--collapsed-moves 0] [--shift-moves 4]] [--anchors]
//                                 [--write-releases DIR]
// --run-on K continues every MAP-EM fit still moving at the 2000-iteration cap for up to K more iterations and adds the
// median KL after that and the count still moving (docs/design-cgm.md Sec. 3.6: the value at the cap and at convergence).
// --evidence: MAP-EM's evidence term (samplers/cgm/cgm_noise.hpp): the Laplace density (exact, the text's and the
// default here), the Gaussian of its variance, or auto (privpost-infer's default: the Gaussian where every table's mean
// cell count is at least 2 b).
// --pseudo-count: alpha_0 of MAP-EM and of the posterior's hyper-Dirichlet prior (privpost-infer's --prior).
// --posterior adds the Bayesian CGM's posterior mean (privpost-infer's sampler and defaults: 4 chains of 1000 draws
// after 500 burn-in sweeps, thin 2, 4 shift moves a sweep, two threads, the draws doubled once where some cell's R-hat
// is above 1.01; --rounds 1 keeps the first round; cgm_posterior_settings), with the largest R-hat over the edge cells
// of any of its fits and the median seconds a fit.
// --anchors prints, beside each cell of the grid that has one, the median KL of private-pgm (the widely used Python
// library for graphical models from noisy marginals, the better of its L2 and L1 estimators at their defaults) measured
// outside this repository on releases of the same design (10 releases per cell, this machine type), the ratio of each
// privpost estimator to it, and the anchors' non-private reference (one pseudo-count per cell), to be read against
// this study's nonpriv+1 column (the same estimator on this study's tables: a check that the designs agree). These
// anchor figures are quoted, not computed here: no anchor code is in privpost.
// The comparison the anchors were measured for: --models 10 --releases 1 --neighbours both --posterior --anchors.
// --write-releases DIR writes every release of the run to DIR/releases.csv (one row per released cell: neighbours, n,
// epsilon, the Laplace scale, model, release, edge, its nodes and states, the truth's probability of the cell, the exact
// count and the released value) and privpost's KL of each release to DIR/kl.csv (MAP-EM, and the posterior mean with
// --posterior), so that another system can be run on exactly these releases and compared release by release: medians
// of 10 releases move by tens of percent between sets of releases at the small KLs of N = 10^5, epsilon 1, far more
// than the differences between good estimators. A chain's distribution is the product of its edge marginals over
// its inner nodes' marginals, so the truth's cells give the exact KL of any fit.
#include <privpost/families/graphical/count_sampling.hpp>
#include <privpost/families/graphical/pairwise_graph.hpp>
#include <privpost/families/graphical/tree_bp.hpp>
#include <privpost/testing/cgm_study.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
std::vector<double> parse_list(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end == nullptr || *end != '\0' || !(v > 0.0) || v > 1e12)
      throw std::invalid_argument(flag + " '" + item + "': expected a comma list of numbers in (0, 1e12]");
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument(flag + ": expected at least one number");
  return out;
}

int parse_int(const std::string& flag, const char* text, int lo, int hi) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi)
    throw std::invalid_argument(flag + " '" + text + "': expected an integer in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
  return static_cast<int>(v);
}

// private-pgm's median KL(truth || fit) on the chain design (10 nodes, 3 states, Dirichlet(1) edge potentials, 10
// releases per cell), quoted from its measurement outside this repository: not computed here.
struct anchor_figure {
  bool replace_one;
  double n, epsilon, kl;
};
constexpr anchor_figure private_pgm[] = {
    {true, 1e3, 1.0, 0.489},    {true, 1e3, 0.1, 8.60},     {true, 1e3, 0.01, 3.49},    {true, 1e4, 1.0, 0.0106},
    {true, 1e4, 0.1, 0.445},    {true, 1e4, 0.01, 2.27},    {true, 1e5, 1.0, 0.000358}, {true, 1e5, 0.1, 0.0107},
    {true, 1e5, 0.01, 0.210},   {false, 1e3, 1.0, 0.154},   {false, 1e3, 0.1, 4.54},    {false, 1e3, 0.01, 4.54},
    {false, 1e4, 1.0, 0.00497}, {false, 1e4, 0.1, 0.249},   {false, 1e4, 0.01, 1.54},   {false, 1e5, 1.0, 0.000299},
    {false, 1e5, 0.1, 0.00279}, {false, 1e5, 0.01, 0.0843},
};

// The anchors' non-private reference on the same design (one pseudo-count per cell), quoted as above.
constexpr double private_pgm_nonprivate[][2] = {{1e3, 0.0244}, {1e4, 0.00251}, {1e5, 0.000257}};

// The anchor of a grid cell, or a negative number where the anchors have none (another N, epsilon or graph).
double anchor_of(bool replace_one, double n, double epsilon, int nodes, int states) {
  if (nodes != 10 || states != 3) return -1.0;
  for (const anchor_figure& a : private_pgm)
    if (a.replace_one == replace_one && a.n == n && std::abs(a.epsilon - epsilon) <= 1e-12 * a.epsilon) return a.kl;
  return -1.0;
}

double anchor_nonprivate(double n, int nodes, int states) {
  if (nodes != 10 || states != 3) return -1.0;
  for (const auto& a : private_pgm_nonprivate)
    if (a[0] == n) return a[1];
  return -1.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<double> ns{1e3, 1e4, 1e5}, epsilons{1.0, 0.1, 0.01};
  privpost::cgm_point_study_settings settings;
  int nodes = 10, states = 3;
  std::vector<privpost::neighbour_relation> relations{settings.relation};
  privpost::cgm_posterior_settings posterior;
  bool with_posterior = false, anchors = false, posterior_options = false;
  std::string releases_dir;
  struct posterior_flag {
    const char* name;
    int* field;
    int lo, hi;
  };
  const posterior_flag posterior_flags[] = {{"--burnin", &posterior.burnin, 0, 10000000},
                                            {"--draws", &posterior.draws, 4, 10000000},
                                            {"--rounds", &posterior.rounds, 1, 20},
                                            {"--thin", &posterior.thin, 1, 100000},
                                            {"--collapsed-moves", &posterior.collapsed_moves, 0, 1000},
                                            {"--shift-moves", &posterior.shift_moves, 0, 1000}};
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--posterior" || a == "--anchors") {
        (a == "--posterior" ? with_posterior : anchors) = true;
        continue;
      }
      if (i + 1 >= argc) throw std::invalid_argument("usage: see the header of examples/cgm_chain_study.cpp (" + a + ")");
      const char* v = argv[++i];
      if (a == "--n") {
        ns = parse_list(a, v);
        for (const double n : ns)
          if (n != static_cast<double>(static_cast<long long>(n)))
            throw std::invalid_argument("--n " + std::to_string(n) + ": expected whole numbers");
      } else if (a == "--epsilon") {
        epsilons = parse_list(a, v);
      } else if (a == "--models") {
        settings.models = parse_int(a, v, 1, 10000);
      } else if (a == "--releases") {
        settings.releases = parse_int(a, v, 1, 10000);
      } else if (a == "--nodes") {
        nodes = parse_int(a, v, 2, 1000);
      } else if (a == "--states") {
        states = parse_int(a, v, 2, 20);
      } else if (a == "--run-on") {
        settings.em_run_on = parse_int(a, v, 0, 1000000);
      } else if (a == "--pseudo-count") {
        const std::vector<double> v1 = parse_list(a, v);
        if (v1.size() != 1 || !(v1[0] > 0.0) || !std::isfinite(v1[0]))
          throw std::invalid_argument("--pseudo-count " + std::string(v) + ": expected one number > 0");
        settings.pseudo_count = v1[0];
      } else if (a == "--seed") {
        settings.seed = static_cast<std::uint64_t>(parse_int(a, v, 0, 2000000000));
      } else if (a == "--evidence") {
        const std::string e = v;
        if (e != "exact" && e != "gaussian" && e != "auto")
          throw std::invalid_argument("--evidence '" + e + "': expected exact, gaussian or auto");
        settings.evidence = e == "exact"      ? privpost::map_em_evidence::exact
                            : e == "gaussian" ? privpost::map_em_evidence::gaussian_surrogate
                                              : privpost::map_em_evidence::automatic;
      } else if (a == "--write-releases") {
        releases_dir = v;
        if (releases_dir.empty()) throw std::invalid_argument("--write-releases '': expected a directory");
      } else if (a == "--neighbours") {
        const std::string r = v;
        if (r != "add-remove" && r != "replace" && r != "both")
          throw std::invalid_argument("--neighbours '" + r + "': expected add-remove, replace or both");
        relations.clear();
        if (r != "replace") relations.push_back(privpost::neighbour_relation::add_remove);
        if (r != "add-remove") relations.push_back(privpost::neighbour_relation::replace_one);
      } else if (const auto* flag = std::find_if(std::begin(posterior_flags), std::end(posterior_flags),
                                                 [&](const posterior_flag& f) { return a == f.name; });
                 flag != std::end(posterior_flags)) {
        *flag->field = parse_int(a, v, flag->lo, flag->hi);
        posterior_options = true;
      } else {
        throw std::invalid_argument("unknown option " + a + " (see the header of examples/cgm_chain_study.cpp)");
      }
    }
    if (posterior_options && !with_posterior)
      throw std::invalid_argument(
          "--burnin, --draws, --rounds, --thin, --collapsed-moves and --shift-moves set the posterior's chains: add --posterior");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  if (with_posterior) settings.posterior = posterior;
  const privpost::pairwise_graph chain = privpost::chain_graph(nodes, states);
  const privpost::table_layout layout(chain);
  std::ofstream releases_csv, kl_csv;
  const std::filesystem::path releases_path = std::filesystem::path(releases_dir) / "releases.csv",
                              kl_path = std::filesystem::path(releases_dir) / "kl.csv";
  if (!releases_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(releases_dir, ec);
    if (!ec) {
      releases_csv.open(releases_path);
      kl_csv.open(kl_path);
    }
    if (ec || !releases_csv || !kl_csv) {
      std::fprintf(stderr, "error: --write-releases '%s': cannot create the directory or its files (%s)\n", releases_dir.c_str(),
                   ec ? ec.message().c_str() : "open failed");
      return 2;
    }
    releases_csv << "neighbours,n,epsilon,scale,model,release,edge,node_u,node_v,state_u,state_v,true_probability,"
                    "true_count,released\n";
    kl_csv << "neighbours,n,epsilon,model,release,map_em_kl,posterior_mean_kl\n";
  }
  // One release's rows (the file comment's columns), at full precision.
  auto write_release = [&](const char* relation, double epsilon, const privpost::cgm_point_release& x) {
    char line[512];
    Eigen::Index cell = layout.edges_begin();  // the edge tables are contiguous, each row-major in (x_u, x_v)
    for (int e = 0; e < chain.num_edges(); ++e) {
      const auto [u, v] = chain.edge(e);
      for (int a = 0; a < chain.cardinality(u); ++a) {
        for (int b = 0; b < chain.cardinality(v); ++b, ++cell) {
          const Eigen::Index released = cell - layout.edges_begin();
          std::snprintf(line, sizeof line, "%s,%.0f,%.15g,%.17g,%d,%d,%d,%d,%d,%d,%d,%.17g,%.0f,%.17g\n", relation, x.n, epsilon,
                        x.scale, x.model, x.release, e, u, v, a, b, x.marginals(cell), x.tables(released), x.y(released));
          releases_csv << line;
        }
      }
    }
    std::snprintf(line, sizeof line, "%s,%.0f,%.15g,%d,%d,%.17g,", relation, x.n, epsilon, x.model, x.release, x.cgm_kl);
    kl_csv << line;
    if (!std::isnan(x.posterior_kl)) {
      std::snprintf(line, sizeof line, "%.17g", x.posterior_kl);
      kl_csv << line;
    }
    kl_csv << '\n';
  };
  privpost::tree_bp bp(chain);
  privpost::tree_count_sampler counter(chain);
  Eigen::VectorXd mu, counts;
  auto population = [&](const Eigen::VectorXd& truth, double n, std::mt19937_64& g) {
    bp.marginals(truth, mu);
    counter.sample(g, mu, static_cast<std::int64_t>(n), counts);
    return Eigen::VectorXd(counts.tail(layout.released_size()));
  };
  if (with_posterior)
    std::printf(
        "posterior: Gibbs-SS, hyper-Dirichlet alpha_0 = %g, %d chains x %d draws (burn-in %d, thin %d, at most %d "
        "round%s to R-hat <= 1.01%s%s)\n",
        settings.pseudo_count, posterior.chains, posterior.draws, posterior.burnin, posterior.thin, posterior.rounds,
        posterior.rounds == 1 ? "" : "s",
        posterior.collapsed_moves > 0 ? (", collapsed moves " + std::to_string(posterior.collapsed_moves)).c_str() : "",
        posterior.shift_moves > 0 ? (", shift moves " + std::to_string(posterior.shift_moves)).c_str() : "");
  if (anchors)
    std::printf(
        "anchor: private-pgm's median KL on releases of the same design, quoted (measured outside privpost, not "
        "computed here); ratios are privpost's median over it\n");
  for (const privpost::neighbour_relation relation : relations) {
    settings.relation = relation;
    const bool add_remove = relation == privpost::neighbour_relation::add_remove;
    std::printf("\nchain of %d nodes, %d states; %d models x %d releases per setting; Laplace at %s / epsilon (%s)\n", nodes,
                states, settings.models, settings.releases, add_remove ? "|E|" : "2|E|",
                add_remove ? "the text's add/remove scale: 2 epsilon-DP under replace-one" : "replace-one: epsilon-DP");
    std::printf("median KL(truth || estimate)\n%10s %8s  %9s %9s %9s %9s %9s %9s %9s %9s %9s", "N", "epsilon", "CGM", "naive1e-4",
                "naive1e-3", "naive1e-2", "raw1e-3", "nonpriv", "nonpriv+1", "uniform", "random");
    if (with_posterior) std::printf(" %9s %7s %7s", "posterior", "R-hat", "s/fit");
    if (anchors) std::printf(" %9s %8s%s %9s", "pgm", "CGM/pgm", with_posterior ? " post/pgm" : "", "pgm np+1");
    std::printf("  %s\n", "CGM fits at the cap");
    for (const double n : ns) {
      for (const double epsilon : epsilons) {
        settings.n = n;
        settings.epsilon = epsilon;
        if (!releases_dir.empty())
          settings.on_release = [&, epsilon](const privpost::cgm_point_release& x) {
            write_release(add_remove ? "add-remove" : "replace", epsilon, x);
          };
        const auto r = privpost::cgm_point_study(chain, settings, population, [&](int done, int total) {
          std::fprintf(stderr, "\rN %g, epsilon %g: trial %d of %d", n, epsilon, done, total);
        });
        std::fprintf(stderr, "\r%60s\r", "");
        std::printf("%10.0f %8g  %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g", n, epsilon, median(r.cgm),
                    median(r.naive4), median(r.naive3), median(r.naive2), median(r.raw3), median(r.nonprivate),
                    median(r.nonprivate_pseudo), median(r.uniform), median(r.random));
        if (with_posterior)
          std::printf(" %9.4g %7.3f %7.2f", median(r.posterior_mean),
                      *std::max_element(r.posterior_rhat.begin(), r.posterior_rhat.end()), median(r.posterior_seconds));
        if (anchors) {
          const double pgm = anchor_of(!add_remove, n, epsilon, nodes, states);
          if (pgm > 0.0) {
            std::printf(" %9.4g %8.3f", pgm, median(r.cgm) / pgm);
            if (with_posterior) std::printf(" %8.3f", median(r.posterior_mean) / pgm);
          } else {
            std::printf(" %9s %8s", "-", "-");
            if (with_posterior) std::printf(" %8s", "-");
          }
          const double np = anchor_nonprivate(n, nodes, states);
          if (np > 0.0) {
            std::printf(" %9.4g", np);
          } else {
            std::printf(" %9s", "-");
          }
        }
        std::printf("  %d of %zu", r.cgm_capped, r.cgm.size());
        if (settings.evidence != privpost::map_em_evidence::exact)
          std::printf("; %d through the Gaussian surrogate", r.cgm_surrogate);
        if (settings.em_run_on > 0)
          std::printf("; run on %d more: CGM %.4f, %d still moving", settings.em_run_on, median(r.cgm_run_on),
                      r.cgm_capped_after_run_on);
        std::printf("\n");
      }
    }
  }
  if (!releases_dir.empty()) {
    // A full disk shows only here: every row went through the streams' buffers.
    releases_csv.close();
    kl_csv.close();
    if (!releases_csv || !kl_csv) {
      std::fprintf(stderr, "error: writing %s or %s failed (disk full?)\n", releases_path.c_str(), kl_path.c_str());
      return 1;
    }
    std::printf("\nreleases written to %s, privpost's KL of each to %s\n", releases_path.c_str(), kl_path.c_str());
  }
  return 0;
}
