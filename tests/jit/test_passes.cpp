// Passes: the graph before and after, and the numbers unchanged.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/passes/dead_code.h"

namespace ember::jit {
namespace {

Node node(std::string kind, std::vector<int> in, std::vector<int> out) {
  Node n;
  n.kind = std::move(kind);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

TEST(DeadCode, DropsUnusedNodesAndConstantsAndRenumbers) {
  Graph g;
  TensorType t{kFloat32, {{3, ""}}};
  const int x = g.add_value(t), used = g.add_value(t), unused = g.add_value(t);
  const int a = g.add_value(t), dead = g.add_value(t), b = g.add_value(t);
  g.inputs = {{"x", x}};
  g.constants = {{"c.used", used, Constant::Kind::Inline, ones({3})},
                 {"c.unused", unused, Constant::Kind::Inline, zeros({3})}};
  g.nodes = {node("add", {x, used}, {a}), node("exp", {a}, {dead}), node("neg", {a}, {b})};
  g.outputs = {{"y", b}};
  Graph before = g;
  Graph after = eliminate_dead_code(g);
  EXPECT_EQ(after.str(),
            "input x = %0: float32[3]\n"
            "constant c.used = %1: float32[3]\n"
            "%2: float32[3] = add(%0, %1)\n"
            "%3: float32[3] = neg(%2)\n"
            "output y = %3\n");
  EXPECT_EQ(g.str(), before.str()) << "the input graph is not modified";
  Tensor in = tensor<float>({1, 2, 3}, {3});
  EXPECT_TRUE(equal(run(after, {in})[0], run(before, {in})[0]));
  EXPECT_TRUE(equal(run(after, {in})[0], neg(in + 1)));
}

TEST(DeadCode, KeepsUnusedInputsAndOutputsThatAreInputs) {
  Graph g;
  TensorType t{kFloat32, {{2, ""}}};
  const int x = g.add_value(t), z = g.add_value(t), y = g.add_value(t);
  g.inputs = {{"x", x}, {"z", z}};
  g.nodes = {node("relu", {z}, {y})};
  g.outputs = {{"x_again", x}};
  Graph after = eliminate_dead_code(g);
  EXPECT_EQ(after.inputs.size(), 2u);
  EXPECT_TRUE(after.nodes.empty());
  ASSERT_EQ(after.outputs.size(), 1u);
  EXPECT_EQ(after.outputs[0].value, after.inputs[0].value);
  Tensor in = randn({2});
  EXPECT_TRUE(equal(run(after, {in, randn({2})})[0], in));
}

}  // namespace
}  // namespace ember::jit
