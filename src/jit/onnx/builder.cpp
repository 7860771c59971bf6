// Note [onnx symbolic dims]: a dim that follows a symbol ("batch") is a
// dim_param in the ONNX signature, and a shape an op needs at run time
// (Reshape, Expand) is computed in the graph from the inputs: each symbol is
// Shape(input)[dim] of the first input dim that is exactly that symbol, and a
// SymExpr is the sum of its terms' products. Shapes with one symbolic dim use
// Reshape's -1 instead, so that fixed-size graphs and the usual dynamic batch
// keep constant shape tensors (which other runtimes such as OpenCV need).
#include "jit/onnx/builder.h"

#include <fmt/format.h>

#include "ember/core/error.h"
#include "ember/ops/factory.h"

namespace ember::jit::onnx_export {

int onnx_dtype(ScalarType t) {
  switch (t) {
    case kFloat32: return onnx::TensorProto::FLOAT;
    case kFloat64: return onnx::TensorProto::DOUBLE;
    case kFloat16: return onnx::TensorProto::FLOAT16;
    case ScalarType::BFloat16: return onnx::TensorProto::BFLOAT16;
    case kInt64: return onnx::TensorProto::INT64;
    case kInt32: return onnx::TensorProto::INT32;
    case kInt16: return onnx::TensorProto::INT16;
    case kInt8: return onnx::TensorProto::INT8;
    case ScalarType::UInt8: return onnx::TensorProto::UINT8;
    case kBool: return onnx::TensorProto::BOOL;
    default: break;
  }
  EMBER_ERROR("export_onnx: dtype {} has no ONNX type", to_string(t));
}

SymExpr constant_expr(int64_t v) {
  SymExpr e;
  e.terms.push_back({v, {}});
  return e;
}

SymbolValues traced_symbols(const Graph& g) {
  SymbolValues v;
  for (const NamedValue& in : g.inputs)
    for (const Dim& d : g.type(in.value).shape) {
      if (!d.is_symbolic()) continue;
      const SymExpr e = SymExpr::parse(d.symbol);
      if (e.terms.size() == 1 && e.terms[0].coef == 1 && e.terms[0].symbols.size() == 1)
        v.emplace(e.terms[0].symbols[0], d.size);
    }
  return v;
}

std::vector<SymExpr> dim_exprs(const TensorType& t) {
  std::vector<SymExpr> out;
  for (const Dim& d : t.shape) out.push_back(d.is_symbolic() ? SymExpr::parse(d.symbol) : constant_expr(d.size));
  return out;
}

std::vector<SymExpr> sym_ints(const Node& n, const std::string& name) {
  const AttrValue* a = n.find(name);
  const int64_t* one = a ? std::get_if<int64_t>(a) : nullptr;
  const std::vector<int64_t> v = one ? std::vector<int64_t>{*one} : n.attr_ints(name);
  for (const Node::SymAttr& sa : n.sym_attrs) {
    if (sa.name != name) continue;
    std::vector<SymExpr> out;
    for (size_t i = 0; i < sa.exprs.size(); ++i)
      out.push_back(sa.exprs[i].empty() ? constant_expr(i < v.size() ? v[i] : 0) : SymExpr::parse(sa.exprs[i]));
    return out;
  }
  std::vector<SymExpr> out;
  for (int64_t x : v) out.push_back(constant_expr(x));
  return out;
}

Builder::Builder(const Graph& g, onnx::GraphProto& out, int opset) : g_(g), out_(out), opset_(opset) {
  for (const NamedValue& in : g.inputs) {
    const TensorType& t = g.type(in.value);
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (!t.shape[d].is_symbolic()) continue;
      const SymExpr e = SymExpr::parse(t.shape[d].symbol);
      if (e.terms.size() == 1 && e.terms[0].coef == 1 && e.terms[0].symbols.size() == 1)
        symbol_source_.emplace(e.terms[0].symbols[0], std::make_pair(in.name, static_cast<int64_t>(d)));
    }
  }
}

std::string Builder::fresh(const std::string& hint) {
  std::string base = prefix_.empty() ? hint : prefix_ + "/" + hint;
  std::string name = base;
  while (used_.count(name)) name = fmt::format("{}_{}", base, ++counters_[base]);
  used_.insert(name);
  return name;
}

onnx::NodeProto& Builder::node(const std::string& op, const std::vector<std::string>& inputs,
                               std::vector<std::string> outputs, size_t n_out) {
  onnx::NodeProto& n = *out_.add_node();
  n.set_op_type(op);
  n.set_name(fresh(op));
  for (const std::string& i : inputs) n.add_input(i);
  if (outputs.empty())
    for (size_t i = 0; i < n_out; ++i) outputs.push_back(fresh(op + "_out"));
  for (const std::string& o : outputs) n.add_output(o);
  return n;
}

std::string Builder::op(const std::string& op, const std::vector<std::string>& inputs, const std::string& out) {
  onnx::NodeProto& n = node(op, inputs, out.empty() ? std::vector<std::string>{} : std::vector<std::string>{out});
  return n.output(0);
}

std::string Builder::initializer(const std::string& name, const Tensor& data) {
  const Tensor c = data.contiguous();
  onnx::TensorProto& t = *out_.add_initializer();
  t.set_name(name);
  t.set_data_type(onnx_dtype(c.dtype()));
  for (int64_t s : c.sizes()) t.add_dims(s);
  // raw_data is little-endian, as Ember's memory is on the hosts it supports.
  t.set_raw_data(c.data_ptr(), static_cast<size_t>(c.nbytes()));
  return name;
}

std::string Builder::const_ints(const std::vector<int64_t>& v) {
  auto it = int_consts_.find(v);
  if (it != int_consts_.end()) return it->second;
  const std::string saved = prefix_;
  prefix_.clear();
  std::string name = fresh("const_ints");
  prefix_ = saved;
  initializer(name, tensor(v, {static_cast<int64_t>(v.size())}, TensorOptions(kInt64)));
  int_consts_.emplace(v, name);
  return name;
}

std::string Builder::const_scalar(double v, ScalarType dtype) {
  return initializer(fresh("scalar"), scalar_tensor(Scalar(v), TensorOptions(kFloat64)).to(dtype));
}

std::string Builder::symbol_tensor(const std::string& symbol) {
  auto it = symbol_tensors_.find(symbol);
  if (it != symbol_tensors_.end()) return it->second;
  auto src = symbol_source_.find(symbol);
  EMBER_CHECK(src != symbol_source_.end(),
              "export_onnx: symbolic dim '{}' is not a dim of any graph input, so its size cannot be computed",
              symbol);
  const std::string saved = prefix_;
  prefix_ = "shape";
  std::string shape = op("Shape", {src->second.first});
  std::string dim = op("Gather", {shape, const_ints({src->second.second})}, fresh(symbol));
  prefix_ = saved;
  symbol_tensors_.emplace(symbol, dim);
  return dim;
}

void Builder::finish(const std::string& x, const std::string& out) {
  if (x == out) return;
  const int n = out_.node_size();
  if (n > first_node_ && out_.node(n - 1).output_size() >= 1 && out_.node(n - 1).output(0) == x) {
    out_.mutable_node(n - 1)->set_output(0, out);
    return;
  }
  op("Identity", {x}, out);
}

std::string Builder::dims(const std::vector<SymExpr>& dims, int minus_one_at, bool allow_infer) {
  std::vector<int64_t> fixed;
  int symbolic = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (static_cast<int>(i) == minus_one_at) continue;
    symbolic += !dims[i].is_constant();
  }
  if (symbolic == 0 || (allow_infer && minus_one_at < 0 && symbolic == 1)) {
    for (size_t i = 0; i < dims.size(); ++i) {
      const bool unknown = static_cast<int>(i) == minus_one_at || !dims[i].is_constant();
      fixed.push_back(unknown ? -1 : dims[i].eval({}));
    }
    return const_ints(fixed);
  }
  // Computed: constant runs and symbolic dims concatenated.
  std::vector<std::string> parts;
  std::vector<int64_t> run;
  auto flush = [&] {
    if (!run.empty()) parts.push_back(const_ints(run));
    run.clear();
  };
  for (size_t i = 0; i < dims.size(); ++i) {
    if (static_cast<int>(i) == minus_one_at || dims[i].is_constant()) {
      run.push_back(static_cast<int>(i) == minus_one_at ? -1 : dims[i].eval({}));
      continue;
    }
    flush();
    std::string sum;
    for (const SymExpr::Term& t : dims[i].terms) {
      std::string prod;
      for (const std::string& s : t.symbols) prod = prod.empty() ? symbol_tensor(s) : op("Mul", {prod, symbol_tensor(s)});
      if (prod.empty()) prod = const_ints({t.coef});
      else if (t.coef != 1) prod = op("Mul", {prod, const_ints({t.coef})});
      sum = sum.empty() ? prod : op("Add", {sum, prod});
    }
    parts.push_back(sum);
  }
  flush();
  if (parts.size() == 1) return parts[0];
  onnx::NodeProto& n = node("Concat", parts);
  set_attr(n, "axis", int64_t{0});
  return n.output(0);
}

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
}

void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
}

}  // namespace ember::jit::onnx_export
