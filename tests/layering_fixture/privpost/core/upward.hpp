// Fixture: core must not include samplers (layering test must fail on it).
#include "privpost/samplers/gibbs_ss.hpp"
