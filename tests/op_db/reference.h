// Reading an op_db entry's reference case (tests/data/op_db/<group>.safetensors):
// shared by the generic tests (test_op_db.cpp) and the micro-benchmark
// (bench/bench_op_db.cpp). The data directory is a parameter, since the two
// find it differently.
#pragma once

#include <string>

#include "op_db.h"

namespace ember::op_db {

// Where the <group>.safetensors files are; set once before the first read.
void set_reference_dir(std::string dir);

std::string entry_key(const OpInfo& info);  // "<op>.<variant>": unique per entry
std::string case_key(const OpInfo& info);   // "<op>.<reference or variant>": the case it runs
bool has(const OpInfo& info, const std::string& field);
Tensor ref(const OpInfo& info, const std::string& field);
Tensors inputs_of(const OpInfo& info);
int num_outputs(const OpInfo& info);
const StateDict& reference_file(const std::string& group);

}  // namespace ember::op_db
