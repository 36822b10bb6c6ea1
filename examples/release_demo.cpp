// release_demo: what a data owner does with privpost, end to end, in thirty lines.
// Declares bounds for each record, computes the statistic and its sensitivity from the bounds (never from the data),
// and releases it with the Laplace and the analytic Gaussian mechanisms, drawing noise from the OS CSPRNG.
#include <privpost/core/interval.hpp>
#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/mechanisms/published_bounds.hpp>
#include <privpost/mechanisms/ssp.hpp>

#include <array>
#include <iomanip>
#include <iostream>
#include <vector>

int main() {
  // Ages of twelve patients; the owner declares that ages lie in [0, 100] and drops anything outside.
  const std::vector<std::array<double, 1>> ages = {{34}, {51}, {29}, {77}, {45}, {62}, {38}, {55}, {41}, {120}, {68}, {23}};
  const auto mean_and_square = [](const auto& x) { return std::array{x[0], privpost::square(x[0])}; };
  const privpost::bounded_statistic<1, decltype(mean_and_square)> stat(mean_and_square, {privpost::interval(0.0, 100.0)},
                                                                       privpost::out_of_bounds::drop);
  std::cout << std::fixed << std::setprecision(3);
  std::cout << "statistic t(x) = (x, x^2) over " << ages.size() << " records, bounds [0, 100], policy drop\n";
  std::cout << "L1 sensitivity " << stat.l1_sensitivity() << ", L2 sensitivity " << stat.l2_sensitivity()
            << " (dissertation App. B.3 bound " << privpost::dissertation_truncated_sensitivity(stat.image()) << ")\n";

  const privpost::laplace_mechanism laplace(stat.l1_sensitivity(), 1.0);
  const Eigen::VectorXd z1 = privpost::release_statistic(stat, ages, laplace);  // OS CSPRNG
  std::cout << "Laplace, epsilon = 1:             scale " << laplace.scale() << ", released (" << z1(0) << ", " << z1(1) << ")\n";

  const auto gaussian = privpost::gaussian_mechanism::analytic(stat.l2_sensitivity(), 1.0, 1e-6);
  const Eigen::VectorXd z2 = privpost::release_statistic(stat, ages, gaussian);
  std::cout << "Gaussian (analytic), eps 1, 1e-6: sigma " << gaussian.sigma() << ", released (" << z2(0) << ", " << z2(1)
            << ")\n";
  std::cout << "(the exact statistic is never printed: only the releases may leave the data owner)\n";
  return 0;
}
