// How the tools word an error (examples/tools/tool_support.hpp for_the_user): a message from inside the library starts
// with a function, so its cause leads and the function and the user's inputs it depends on follow; the tools' own
// messages already name an option or field and pass unchanged.
#include <catch2/catch.hpp>

#include <new>
#include <stdexcept>
#include <string>

#include "../../examples/tools/tool_support.hpp"

TEST_CASE("tool errors: a library message's cause leads, then the user's inputs; the tools' own pass unchanged", "[errors]") {
  using privpost::tools::for_the_user;
  const std::string context = "--prior and the release";
  CHECK(for_the_user(std::domain_error("beta_prior::update: s is -nan"), context) ==
        "s is -nan (raised by beta_prior::update; it depends on --prior and the release)");
  CHECK(for_the_user(std::domain_error("robust_cholesky: matrix has a non-finite entry"), context) ==
        "matrix has a non-finite entry (raised by robust_cholesky; it depends on --prior and the release)");
  CHECK(for_the_user(std::domain_error("partition_plan: partitions is 100000; accepted: at most 500"), context) ==
        "partitions is 100000; accepted: at most 500 (raised by partition_plan; it depends on --prior and the release)");
  CHECK_THAT(for_the_user(std::domain_error("posterior: chain draws(0, 0) is -nan"), context),
             Catch::StartsWith("chain draws(0, 0) is -nan (raised by posterior;"));
  CHECK_THAT(for_the_user(std::bad_alloc(), context), Catch::StartsWith("out of memory: this model and run need more memory"));
  for (const char* own : {"release record: n is 0; accepted: a whole number", "--prior is 'x'", "CSV line 3: 'a' in column 'x'",
                          "cannot open CSV file 'a.csv'", "the run is estimated at 2 h"}) {
    CHECK(for_the_user(std::invalid_argument(own), context) == own);
  }
}
