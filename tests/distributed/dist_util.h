// The process group every test in tests/distributed shares: MPI can be
// initialized once per process, so one group lives until exit. Under
// `mpirun -np 2` it is the MPI group; run alone, the world of one rank.
#pragma once

#include "ember/distributed/mpi.h"

namespace ember_test {

inline const ember::distributed::ProcessGroupPtr& world() {
  static const ember::distributed::ProcessGroupPtr group = ember::distributed::init_process_group("mpi");
  return group;
}

}  // namespace ember_test
