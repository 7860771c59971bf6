// `ember bench dist [--simulate] [--steps N]` (issue 18); see the .cpp.
#pragma once

namespace ember::cli {

// Prints the table; returns the exit code.
int run_dist_bench(bool simulate, int steps);

}  // namespace ember::cli
