// Training your own model with Ember's config and run-directory machinery:
// register it under a name, then `model.name=<name>` selects it, exactly as
// for the zoo's models. Its options (model.*) are type-checked, listed in
// config.yaml and overridable from the command line.
//
//   build/examples/example_custom_model [key=value ...]
//   e.g. example_custom_model train.epochs=2 model.width=64
#include <iostream>

#include "ember/ember.h"
#include "ember/train/config.h"
#include "ember/train/trainer.h"
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

int main(int argc, char** argv) {
  std::vector<std::string> overrides = {"model.name=residual_mlp", "train.epochs=3", "data.limit_train=20000",
                                        "log.name=residual_mlp"};
  for (int i = 1; i < argc; ++i) overrides.emplace_back(argv[i]);
  try {
    train::Config config = train::load_config("", overrides);
    train::TrainResult result = train::Trainer(config).fit();
    std::cout << "run directory: " << result.run_dir << "\n";
  } catch (const train::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "run failed: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
