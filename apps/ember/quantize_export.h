// `ember export RUN --quantize dynamic|static`: the int8 half of export (issue 15).
#pragma once

#include <string>
#include <vector>

#include "ember/jit/model_file.h"
#include "ember/train/config.h"
#include "ember/train/data_setup.h"

namespace ember::cli {

struct QuantizeOptions {
  std::string mode;  // "dynamic" or "static"
  int calibration_batches = 32;  // static: training batches run through the observers
  std::string observer = "minmax";  // static: minmax, moving_average or histogram
  std::vector<std::string> keep_float;  // static: module paths that stay float
  double max_accuracy_drop = 1.0;  // points
};

// Quantizes the float model file's graph (static: after calibrating on the
// run's training split with evaluation transforms), writes it to `output`, evaluates the
// float and int8 graphs on the run's test split (accuracy, time) and prints
// both accuracies, the drop, the layers left in float, the file sizes and the
// speedup. Returns the exit code: 1 when the drop exceeds max_accuracy_drop.
int export_quantized(jit::ModelFile float_model, const train::Config& config, const train::DataBundle& data,
                     const QuantizeOptions& q, const std::string& output);

}  // namespace ember::cli
