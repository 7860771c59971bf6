// Note [memory plan]: a graph's intermediates, for one binding of its
// symbolic dims, share one arena. Each value lives from the node that
// defines it to its last reader (through views: an as_strided result reads
// its base's storage, so the base lives as long as any view of it is read).
// Values the graph returns, and anything they view, stay out of the arena:
// the caller keeps them past the next run. An elementwise node whose operand
// has the output's dtype and shape, owns its block and dies at that node
// writes its result over it (kernels read and write the same index, so exact
// aliasing is safe). Blocks are then placed largest first at the lowest
// offset that no block alive at the same time occupies (the greedy-by-size
// strategy of TFLite's arena planner), so a steady-state run allocates
// nothing for its intermediates.
#include "ember/jit/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "core/op_registry.h"

namespace ember::jit {

namespace {

constexpr int64_t kAlign = 64;

int64_t align_up(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool is_elementwise(const std::string& kind) {
  if (kind == "as_strided") return false;
  for (int i = 0; i < kNumOps; ++i)
    if (op_name(static_cast<Op>(i)) == kind) return op_family(static_cast<Op>(i)) == OpFamily::Elementwise;
  return false;
}

}  // namespace

bool writes_into_given_outputs(const std::string& kind) {
  if (kind == "as_strided" || kind == "batch_norm_apply" || kind == "layer_norm" || kind == "index_select" ||
      kind == "gather" || kind == "sort" || kind == "topk" || kind == "scatter" || kind == "scatter_add" || kind == "cat")
    return false;
  // A control-flow node's outputs come from a nested run (Note [control flow]).
  if (kind == "cond" || kind == "while_loop") return false;
  // rnn_layer returns the tensors its ops computed (Note [rnn_layer]).
  if (kind == "rnn_layer") return false;
  return true;
}

MemoryPlan plan_memory(const Graph& g, const std::vector<std::vector<int64_t>>& value_sizes) {
  const size_t nv = g.values.size();
  const int end = static_cast<int>(g.nodes.size());  // "read after the last node": the graph's outputs
  MemoryPlan plan;
  plan.block_of.assign(nv, -1);
  plan.dying_after.resize(g.nodes.size());

  // Storage roots (a view's root is its base's) and definitions.
  std::vector<int> root(nv), def(nv, -1);
  std::iota(root.begin(), root.end(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (int o : n.outputs)
      if (o != kNoValue) def[static_cast<size_t>(o)] = static_cast<int>(i);
    if (n.kind == "as_strided" && !n.inputs.empty() && n.inputs[0] != kNoValue && !n.outputs.empty() &&
        n.outputs[0] != kNoValue)
      root[static_cast<size_t>(n.outputs[0])] = root[static_cast<size_t>(n.inputs[0])];
  }
  // Last readers, of each value and of each root.
  std::vector<int> last(nv, -1), root_last(nv, -1);
  auto read = [&](int v, int at) {
    last[static_cast<size_t>(v)] = std::max(last[static_cast<size_t>(v)], at);
    int& r = root_last[static_cast<size_t>(root[static_cast<size_t>(v)])];
    r = std::max(r, at);
  };
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v != kNoValue) read(v, static_cast<int>(i));
  std::vector<bool> returned(nv, false);
  for (const NamedValue& o : g.outputs) {
    read(o.value, end);
    returned[static_cast<size_t>(root[static_cast<size_t>(o.value)])] = true;
  }
  for (size_t v = 0; v < nv; ++v)
    if (last[v] >= 0 && last[v] < end) plan.dying_after[static_cast<size_t>(last[v])].push_back(static_cast<int>(v));

  // Values that get a block: node results the interpreter writes into a given
  // buffer, that own their storage and are not returned.
  auto plannable = [&](int v) {
    const size_t u = static_cast<size_t>(v);
    return def[u] >= 0 && root[u] == v && !returned[u] && writes_into_given_outputs(g.nodes[static_cast<size_t>(def[u])].kind);
  };
  auto bytes_of = [&](int v) {
    int64_t n = static_cast<int64_t>(element_size(g.type(v).dtype));
    for (int64_t s : value_sizes[static_cast<size_t>(v)]) n *= s;
    return align_up(std::max<int64_t>(n, 1));
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (int o : n.outputs) {
      if (o == kNoValue || !plannable(o)) continue;
      const int64_t nbytes = bytes_of(o);
      const int o_last = std::max(root_last[static_cast<size_t>(o)], static_cast<int>(i));
      ++plan.planned_values;
      plan.unshared_bytes += nbytes;
      // In place over an operand that dies here (its last reader, views included).
      int reuse = -1;
      if (is_elementwise(n.kind) && n.outputs.size() == 1)
        for (int v : n.inputs) {
          if (v == kNoValue || plan.block_of[static_cast<size_t>(v)] < 0) continue;
          const bool same = g.type(v).dtype == g.type(o).dtype &&
                            value_sizes[static_cast<size_t>(v)] == value_sizes[static_cast<size_t>(o)];
          if (same && root_last[static_cast<size_t>(v)] == static_cast<int>(i)) {
            reuse = plan.block_of[static_cast<size_t>(v)];
            break;
          }
        }
      if (reuse >= 0) {
        plan.blocks[static_cast<size_t>(reuse)].last = o_last;
        plan.block_of[static_cast<size_t>(o)] = reuse;
        ++plan.in_place_values;
        continue;
      }
      plan.block_of[static_cast<size_t>(o)] = static_cast<int>(plan.blocks.size());
      plan.blocks.push_back({0, nbytes, static_cast<int>(i), o_last});
    }
  }

  // Greedy by size: largest first, lowest free offset among the blocks whose
  // lifetimes overlap.
  std::vector<size_t> order(plan.blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return plan.blocks[a].nbytes > plan.blocks[b].nbytes; });
  std::vector<size_t> placed;
  for (size_t b : order) {
    MemoryPlan::Block& blk = plan.blocks[b];
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of overlapping placed blocks
    for (size_t p : placed) {
      const MemoryPlan::Block& q = plan.blocks[p];
      if (q.first <= blk.last && blk.first <= q.last) busy.push_back({q.offset, q.offset + q.nbytes});
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (lo - offset >= blk.nbytes) break;
      offset = std::max(offset, hi);
    }
    blk.offset = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + blk.nbytes);
    placed.push_back(b);
  }
  return plan;
}

}  // namespace ember::jit
