// Fixture: another folder's detail/ header.
#include "privpost/core/detail/anything.hpp"
