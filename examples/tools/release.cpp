// privpost-release: the data owner's tool. Reads records from a CSV column, computes the model's sufficient statistic
// with sensitivity from the declared bounds (never from the data), adds Laplace or Gaussian noise from the OS CSPRNG, and
// writes a JSON release record. Unbounded models refuse to run without bounds; records outside them are dropped.
#include <CLI/CLI.hpp>

#include <array>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "release_record.hpp"

namespace {

struct options {
  std::string input, column, model, mechanism = "laplace", output;
  double epsilon = 0, delta = 1e-6;
  std::optional<double> lower, upper;
  int categories = 0;
};

template <class Mechanism>
void finish(privpost::tools::release_record& r, const Mechanism& m, const Eigen::VectorXd& z) {
  r.epsilon = m.budget().epsilon;
  r.delta = m.budget().delta;
  r.noisy_statistics.assign(z.data(), z.data() + z.size());
}

privpost::tools::release_record make_release(const options& o) {
  using namespace privpost;
  const std::vector<double> x = tools::read_csv_column(o.input, o.column);
  tools::release_record r;
  r.model = o.model;
  r.mechanism = o.mechanism;
  r.n = static_cast<double>(x.size());
  r.version = privpost::version_string;
  Eigen::VectorXd s;
  double l1 = 0, l2 = 0;
  if (o.model == "binomial" || o.model == "multinomial") {
    if (o.lower || o.upper) throw std::invalid_argument("--lower/--upper: the " + o.model + " model has fixed bounds");
    if (o.model == "binomial") {
      s = Eigen::VectorXd::Zero(1);
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (x[i] != 0.0 && x[i] != 1.0) throw std::invalid_argument("record " + std::to_string(i + 1) + " is " + std::to_string(x[i]) + "; accepted: 0 or 1");
        s(0) += x[i];
      }
      l1 = binomial_family::l1_sensitivity;
      l2 = binomial_family::l2_sensitivity;
    } else {
      if (o.categories < 2) throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: an integer >= 2");
      r.categories = o.categories;
      s = Eigen::VectorXd::Zero(o.categories - 1);
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] >= 0 && x[i] < o.categories && std::floor(x[i]) == x[i]))
          throw std::invalid_argument("record " + std::to_string(i + 1) + " is " + std::to_string(x[i]) + "; accepted: a category 0.." +
                                      std::to_string(o.categories - 1));
        if (x[i] < o.categories - 1) s(static_cast<Eigen::Index>(x[i])) += 1.0;
      }
      l1 = 2.0;
      l2 = std::sqrt(2.0);
    }
    r.policy = "none";
  } else {
    if (!o.lower || !o.upper)
      throw std::invalid_argument("the " + o.model + " model is unbounded: declare record bounds with --lower and --upper");
    r.has_bounds = true;
    r.lower = *o.lower;
    r.upper = *o.upper;
    // Records outside the bounds are dropped: that is what the truncated models of privpost-infer assume (Sec. 4.3).
    r.policy = "drop";
    const auto policy = out_of_bounds::drop;
    std::vector<std::array<double, 1>> records(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) records[i][0] = x[i];
    auto compute = [&](auto family_tag) {
      using F = decltype(family_tag);
      const bounded_statistic<1, record_statistic<F>> stat({}, {interval(*o.lower, *o.upper)}, policy);
      s = stat.compute(records).statistic;
      l1 = stat.l1_sensitivity();
      l2 = stat.l2_sensitivity();
    };
    if (o.model == "normal") {
      compute(normal_family{});
    } else {
      compute(exponential_rate_family{});  // t(x) = x for exponential, poisson and normal-known-var alike
    }
  }
  if (o.mechanism == "laplace") {
    const laplace_mechanism m(l1, o.epsilon);
    r.sensitivity = l1;
    r.noise = m.scale();
    finish(r, m, m.release(s));  // OS CSPRNG
  } else {
    const auto m = gaussian_mechanism::analytic(l2, o.epsilon, o.delta);
    r.sensitivity = l2;
    r.noise = m.sigma();
    r.calibration = "analytic";
    finish(r, m, m.release(s));  // OS CSPRNG
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"privpost-release: release a model's sufficient statistics under differential privacy"};
  options o;
  app.add_option("--input", o.input, "CSV file with a header row")->required();
  app.add_option("--column", o.column, "the column holding one value per record")->required();
  app.add_option("--model", o.model, "binomial|multinomial|poisson|exponential|normal-known-var|normal")
      ->required()
      ->check(CLI::IsMember({"binomial", "multinomial", "poisson", "exponential", "normal-known-var", "normal"}));
  app.add_option("--epsilon", o.epsilon, "privacy budget epsilon")->required();
  app.add_option("--mechanism", o.mechanism, "laplace|gaussian (analytic calibration)")->check(CLI::IsMember({"laplace", "gaussian"}));
  app.add_option("--delta", o.delta, "delta of the Gaussian mechanism");
  app.add_option("--lower", o.lower, "declared lower bound of a record (unbounded models)");
  app.add_option("--upper", o.upper, "declared upper bound of a record (unbounded models)");
  app.add_option("--categories", o.categories, "K for the multinomial model (records are categories 0..K-1)");
  app.add_option("--output", o.output, "write the release record here (default: standard output)");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto record = make_release(o);
    const std::string text = privpost::tools::to_json(record).dump(2) + "\n";
    if (o.output.empty()) {
      std::cout << text;
    } else {
      std::ofstream f(o.output);
      if (!(f << text)) throw std::runtime_error("cannot write '" + o.output + "'");
    }
    std::cerr << "privpost-release: released " << record.noisy_statistics.size() << " statistic(s) of n = " << record.n
              << " records with " << record.mechanism << " noise " << record.noise << " (sensitivity " << record.sensitivity
              << ")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "privpost-release: error: " << e.what() << '\n';
    return 1;
  }
}
