// Fixture: diagnostics depends on core only.
#include "privpost/families/binomial.hpp"
