// `ember export RUN --quantize dynamic`: the int8 half of export (issue 15).
#pragma once

#include <string>
#include <vector>

#include "ember/jit/model_file.h"
#include "ember/train/config.h"
#include "ember/train/data_setup.h"

namespace ember::cli {

struct QuantizeOptions {
  std::string mode;  // "dynamic" ("static" is refused: not implemented yet)
  int calibration_batches = 32;
  double max_accuracy_drop = 1.0;  // points
};

// Quantizes the float model file's graph, writes it to `output`, evaluates the
// float and int8 graphs on the run's test split (accuracy, time) and prints
// both accuracies, the drop, the layers left in float, the file sizes and the
// speedup. Returns the exit code: 1 when the drop exceeds max_accuracy_drop.
int export_quantized(jit::ModelFile float_model, const train::Config& config, const train::DataBundle& data,
                     const QuantizeOptions& q, const std::string& output);

}  // namespace ember::cli
