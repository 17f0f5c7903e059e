// Compiled as if it were part of sim/core (linked to vramsim_core only): it must NOT compile,
// because core declares no dependency on serving. tests/layering/CMakeLists.txt runs its build
// and expects the compiler to say it cannot find the header.
#include "sim/core/units.hpp"
#include "sim/serving/request.hpp"

int vramsim_layering_probe() { return 0; }
