// housevotes_marginals: posteriors from noisy marginals of a table, and one joint posterior when a second release of
// the same records arrives (Williams & McSherry 2010; docs/histogram-measurements.md B.8.1, B.10).
// The 1984 House votes (435 representatives) restricted to the party and four votes, V3 (budget resolution), V4
// (physician fee freeze), V8 (aid to the Nicaraguan contras) and V9 (MX missile), each vote y, n or missing (a third
// level, so every record is used and n = 435 is public): a table of 2 x 3^4 = 162 cells.
//   Release 1 (epsilon 1): the five 1-way margins and the party-by-vote tables Class:V3 and Class:V4 (K = 7 tables,
//     Laplace at L1 sensitivity 2K = 14).
//   Release 2, "a year later" (epsilon 0.5): the vote-by-vote table V3:V4 (K = 1, L1 2).
// The analyst's posteriors of the cell probabilities (Dirichlet(10 / 162) prior, the record-level histogram sampler,
// histogram_gibbs, exact) given release 1 alone, release 2 alone and both jointly, summarised by
//   - logOR(V3, V4) = log(P(y, y) P(n, n) / (P(y, n) P(n, y))), the association of the two votes among those who cast
//     both: never released in release 1 (its posterior there comes from the prior and the margins only, so it stays
//     wide), released in release 2;
//   - logOR(Class, V3) among V3 votes cast, released in release 1 only;
//   - P(V3 = y), released by both.
// The noise is seeded so that the printed tables are reproducible (a real release draws its noise from the operating
// system's CSPRNG: release_linear_queries without an engine, or privpost-release --model marginals).
//
// Usage: privpost_housevotes_marginals [--csv FILE] [--check]
//   --check exits non-zero unless the joint posterior's 90% interval of logOR(V3, V4) is at most half as wide as under
//   release 1 alone and at most 10% wider than under release 2 alone (its own table: the margins add little there; the
//   10% allows for Monte Carlo error), and every joint 90% interval covers the non-private value.
// The prior is Dirichlet(10 / 162) per cell: a total pseudo-count of 10 records spread over the table. Dirichlet(1) per
// cell would be a prior of 162 pseudo-records whose margins are sharply uniform (P(V3 = missing) ~ Beta(54, 108), sd
// 0.04), strong enough to pull P(V3 = y) from 0.58 to 0.44; the same default as privpost-infer's.
#include <privpost/inference/run.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/mechanisms/linear_queries.hpp>
#include <privpost/samplers/record_histogram.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "housevotes_data.hpp"

#ifndef PRIVPOST_HOUSEVOTES_CSV
#define PRIVPOST_HOUSEVOTES_CSV "housevotes84.csv"
#endif

namespace {

// The table's columns: Class (democrat 0, republican 1) and the votes V3, V4, V8, V9 (n 0, y 1, missing 2) of the data
// file's columns 0, 3, 4, 8 and 9; cells row-major (V9 fastest), as linear_queries::marginals lays them out.
const std::vector<int> data_columns = {0, 3, 4, 8, 9};
const std::vector<std::size_t> levels = {2, 3, 3, 3, 3};

std::size_t cell_of(const std::vector<std::size_t>& state) {
  std::size_t c = 0;
  for (std::size_t v = 0; v < levels.size(); ++v) c = c * levels[v] + state[v];
  return c;
}

// The derived quantities of cell probabilities theta: logOR(V3, V4), logOR(Class, V3), P(V3 = y).
Eigen::Vector3d derived(const Eigen::VectorXd& theta) {
  Eigen::Matrix3d v3v4 = Eigen::Matrix3d::Zero();  // (V3, V4)
  Eigen::Matrix<double, 2, 3> cv3 = Eigen::Matrix<double, 2, 3>::Zero();
  std::vector<std::size_t> st(levels.size(), 0);
  for (Eigen::Index c = 0; c < theta.size(); ++c) {
    v3v4(static_cast<Eigen::Index>(st[1]), static_cast<Eigen::Index>(st[2])) += theta(c);
    cv3(static_cast<Eigen::Index>(st[0]), static_cast<Eigen::Index>(st[1])) += theta(c);
    for (std::size_t v = levels.size(); v-- > 0;) {
      if (++st[v] < levels[v]) break;
      st[v] = 0;
    }
  }
  // votes: n 0, y 1
  return {std::log(v3v4(1, 1) * v3v4(0, 0) / (v3v4(1, 0) * v3v4(0, 1))),
          std::log(cv3(0, 1) * cv3(1, 0) / (cv3(0, 0) * cv3(1, 1))), cv3(0, 1) + cv3(1, 1)};
}

struct interval90 {
  double mean, lo, hi;
};

// The posterior of the three derived quantities: 4 chains x 1000 draws (burn-in 1000, thin 5).
std::vector<interval90> posterior(const std::vector<privpost::histogram_measurement>& releases, std::uint64_t seed) {
  privpost::run_options o;
  o.inference.chains = 4;
  o.inference.burnin = 1000;
  o.inference.draws = 1000;
  o.inference.thin = 5;
  o.inference.seed = seed;
  const auto result = privpost::run(
                          [&](std::mt19937_64& g) {
                            return privpost::histogram_gibbs(Eigen::VectorXd::Constant(162, 10.0 / 162.0), 435.0, releases, g,
                                                             privpost::record_init::consistent);
                          },
                          o)
                          .result;
  const Eigen::MatrixXd theta = result.draws.draw_matrix();
  std::vector<Eigen::VectorXd> q(3, Eigen::VectorXd(theta.rows()));
  for (Eigen::Index i = 0; i < theta.rows(); ++i) {
    const Eigen::Vector3d d = derived(theta.row(i).transpose());
    for (int k = 0; k < 3; ++k) q[static_cast<std::size_t>(k)](i) = d(k);
  }
  std::vector<interval90> out;
  for (auto& v : q) {
    std::sort(v.data(), v.data() + v.size());
    out.push_back({v.mean(), v(static_cast<Eigen::Index>(0.05 * static_cast<double>(v.size() - 1))),
                   v(static_cast<Eigen::Index>(0.95 * static_cast<double>(v.size() - 1)))});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv = PRIVPOST_HOUSEVOTES_CSV;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      csv = argv[++i];
    } else if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else {
      std::fprintf(stderr, "usage: privpost_housevotes_marginals [--csv FILE] [--check]\n");
      return 2;
    }
  }
  try {
    const Eigen::MatrixXi votes = privpost::examples::read_votes(csv);
    if (votes.rows() != 435) throw std::invalid_argument(csv + ": expected the 435 records of the House votes data");
    // The data file codes votes n 0, y 1, missing 2: the table's levels in that order.
    std::vector<std::size_t> cells(static_cast<std::size_t>(votes.rows()));
    Eigen::VectorXd h = Eigen::VectorXd::Zero(162);
    for (Eigen::Index i = 0; i < votes.rows(); ++i) {
      std::vector<std::size_t> st;
      for (int c : data_columns) st.push_back(static_cast<std::size_t>(votes(i, c)));
      cells[static_cast<std::size_t>(i)] = cell_of(st);
      h(static_cast<Eigen::Index>(cell_of(st))) += 1.0;
    }
    const auto first = privpost::linear_queries::marginals(levels, {{0}, {1}, {2}, {3}, {4}, {0, 1}, {0, 2}});
    const auto second = privpost::linear_queries::marginals(levels, {{1, 2}});
    std::mt19937_64 noise(2024);  // seeded: reproducible tables (see the header)
    const privpost::laplace_mechanism m1(first.l1_sensitivity(), 1.0), m2(second.l1_sensitivity(), 0.5);
    const Eigen::VectorXd z1 = privpost::release_linear_queries(first, cells, m1, noise);
    const Eigen::VectorXd z2 = privpost::release_linear_queries(second, cells, m2, noise);
    std::printf("House votes, n = 435, table Class x V3 x V4 x V8 x V9 (162 cells; votes y, n, missing)\n");
    std::printf("release 1: epsilon 1, the 1-way margins and Class:V3, Class:V4 (%zu counts, Laplace scale %g)\n", first.rows(),
                m1.scale());
    std::printf("release 2: epsilon 0.5, V3:V4 (%zu counts, Laplace scale %g)\n\n", second.rows(), m2.scale());
    std::vector<privpost::histogram_measurement> r1, r2, both;
    r1.emplace_back(first, m1, z1);
    r2.emplace_back(second, m2, z2);
    both = r1;
    both.push_back(r2.front());
    const Eigen::Vector3d truth = derived(h / 435.0);
    const char* names[] = {"logOR(V3,V4)", "logOR(Class,V3)", "P(V3=y)"};
    const std::vector<std::pair<const char*, std::vector<interval90>>> rows = {
        {"release 1 alone", posterior(r1, 11)}, {"release 2 alone", posterior(r2, 12)}, {"both, jointly", posterior(both, 13)}};
    std::printf("%-16s", "quantity");
    for (const auto& r : rows) std::printf(" | %-26s", r.first);
    std::printf(" | non-private\n");
    for (int k = 0; k < 3; ++k) {
      std::printf("%-16s", names[k]);
      for (const auto& r : rows) {
        const auto& v = r.second[static_cast<std::size_t>(k)];
        std::printf(" | %7.3f [%7.3f, %7.3f]", v.mean, v.lo, v.hi);
      }
      std::printf(" | %7.3f\n", truth(k));
    }
    std::printf("(posterior mean [90%% interval]; 4 chains x 1000 draws of histogram_gibbs each)\n");
    if (!check) return 0;
    const auto width = [&](std::size_t row) { return rows[row].second[0].hi - rows[row].second[0].lo; };
    bool ok = width(2) <= 0.5 * width(0) && width(2) <= 1.1 * width(1);
    for (int k = 0; k < 3; ++k) {
      const auto& v = rows[2].second[static_cast<std::size_t>(k)];
      ok = ok && v.lo <= truth(k) && truth(k) <= v.hi;
    }
    std::printf("--check: %s\n", ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "privpost_housevotes_marginals: error: %s\n", e.what());
    return 1;
  }
}
