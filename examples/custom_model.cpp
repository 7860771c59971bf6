// Training your own model with Ember's config and run-directory machinery:
// register it under a name, then `model.name=<name>` selects it, exactly as
// for the zoo's models. Its options (model.*) are type-checked, listed in
// config.yaml and overridable from the command line. main() is the whole
// `ember` command line (ember::cli::main), so every command works on this
// model's runs: train, train --resume, eval, export, infer, serve.
//
//   build/examples/example_custom_model train examples/custom_model.yaml [key=value ...]
//   build/examples/example_custom_model train --resume runs/residual_mlp-<timestamp> train.epochs=5
//   build/examples/example_custom_model eval runs/residual_mlp-<timestamp>
//   build/examples/example_custom_model export runs/residual_mlp-<timestamp> -o residual_mlp.ember
#include "ember/cli/main.h"
#include "ember/ember.h"
#include "ember/train/config.h"
#include "ember/train/zoo.h"

using namespace ember;

namespace {

// A two-layer perceptron with a residual hidden block, written by hand.
class ResidualMLP : public nn::Module {
 public:
  ResidualMLP(int64_t in, int64_t width, int64_t classes) : Module("ResidualMLP") {
    input = register_module("input", std::make_shared<nn::Linear>(in, width));
    hidden = register_module("hidden", std::make_shared<nn::Linear>(width, width));
    output = register_module("output", std::make_shared<nn::Linear>(width, classes));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = input->forward(x.flatten(1)).relu();
    h = h + hidden->forward(h).relu();  // ordinary C++: any control flow works here
    return output->forward(h);
  }
  std::shared_ptr<nn::Linear> input, hidden, output;
};

// Registered at start-up, next to the zoo's models.
const train::ModelRegistration kResidualMLP{{
    "residual_mlp",
    "an MLP with one residual hidden block (examples/custom_model.cpp)",
    train::Schema{{"model.width", train::ValueType::Int, int64_t{128}, "hidden width"}},
    [](const train::Config& c, const train::DataInfo& info) -> nn::ModulePtr {
      int64_t in = 1;
      for (int64_t d : info.input_shape) in *= d;
      return std::make_shared<ResidualMLP>(in, c.get_int("model.width"), info.num_classes);
    }}};

}  // namespace

int main(int argc, char** argv) { return ember::cli::main(argc, argv); }
