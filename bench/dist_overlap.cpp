// The data-parallel benchmark as a standalone program (the code of
// `ember bench dist`, apps/ember/dist_bench_command.cpp):
//   mpirun -np 2 bench/dist_overlap [steps]
//   bench/dist_overlap --simulate [steps]
#include <cstdlib>
#include <cstring>

#include "dist_bench_command.h"

int main(int argc, char** argv) {
  const bool simulate = argc > 1 && std::strcmp(argv[1], "--simulate") == 0;
  const int arg = simulate ? 2 : 1;
  return ember::cli::run_dist_bench(simulate, argc > arg ? std::atoi(argv[arg]) : 10);
}
