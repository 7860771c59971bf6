#include "ember/runtime/session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "ember/core/parallel.h"
#include "ember/jit/interpreter.h"

namespace ember::runtime {

Session::Session(const std::string& path, SessionOptions options) : Session(jit::load_model(path), options) {}

Session::Session(jit::ModelFile model, SessionOptions options) : model_(std::move(model)) {
  jit::check_graph(model_.graph, "runtime::Session");
  if (options.threads > 0) set_num_threads(options.threads);
}

std::vector<std::string> Session::input_names() const {
  std::vector<std::string> n;
  for (const jit::NamedValue& v : model_.graph.inputs) n.push_back(v.name);
  return n;
}

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> n;
  for (const jit::NamedValue& v : model_.graph.outputs) n.push_back(v.name);
  return n;
}

std::vector<Tensor> Session::run(const std::vector<Tensor>& inputs) const { return jit::run(model_.graph, inputs); }

NamedTensors Session::run(const NamedTensors& inputs) const {
  std::vector<Tensor> ordered;
  std::set<std::string> used;
  for (const jit::NamedValue& v : model_.graph.inputs) {
    auto it = inputs.find(v.name);
    EMBER_CHECK(it != inputs.end(), "Session::run: missing input '{}' (the model takes {})", v.name,
                fmt::join(input_names(), ", "));
    ordered.push_back(it->second);
    used.insert(v.name);
  }
  for (const auto& [name, t] : inputs)
    EMBER_CHECK(used.count(name), "Session::run: unknown input '{}' (the model takes {})", name,
                fmt::join(input_names(), ", "));
  std::vector<Tensor> out = run(ordered);
  NamedTensors named;
  for (size_t i = 0; i < out.size(); ++i) named.emplace(model_.graph.outputs[i].name, out[i]);
  return named;
}

}  // namespace ember::runtime
