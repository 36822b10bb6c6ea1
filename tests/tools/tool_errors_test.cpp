// How the tools word an error (examples/tools/tool_support.hpp for_the_user): a message from inside the library names
// a function, so it follows a sentence naming the user's inputs; the tools' own messages already name an option or
// field and pass unchanged.
#include <catch2/catch.hpp>

#include <new>
#include <stdexcept>
#include <string>

#include "../../examples/tools/tool_support.hpp"

TEST_CASE("tool errors: library messages come after the user's inputs, the tools' own pass unchanged", "[errors]") {
  using privpost::tools::for_the_user;
  const std::string context = "--prior and the release";
  CHECK(for_the_user(std::domain_error("beta_prior::update: s is -nan"), context) ==
        "the computation failed for these inputs: --prior and the release (detail: beta_prior::update: s is -nan)");
  CHECK(for_the_user(std::domain_error("robust_cholesky: matrix has a non-finite entry"), context) ==
        "the computation failed for these inputs: --prior and the release (detail: robust_cholesky: matrix has a "
        "non-finite entry)");
  CHECK_THAT(for_the_user(std::domain_error("posterior: chain draws(0, 0) is -nan"), context),
             Catch::StartsWith("the computation failed for these inputs"));
  CHECK_THAT(for_the_user(std::bad_alloc(), context), Catch::StartsWith("out of memory: this model and run need more memory"));
  for (const char* own : {"release record: n is 0; accepted: a whole number", "--prior is 'x'", "CSV line 3: 'a' in column 'x'",
                          "cannot open CSV file 'a.csv'", "the run is estimated at 2 h"}) {
    CHECK(for_the_user(std::invalid_argument(own), context) == own);
  }
}
