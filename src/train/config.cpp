// Config: typed options from a schema, set from YAML text and overrides.
#include "ember/train/config.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

namespace ember::train {

namespace {

[[noreturn]] void config_error(const std::string& msg) { throw ConfigError(msg); }

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string last_segment(std::string_view key) {
  size_t dot = key.rfind('.');
  return std::string(dot == std::string_view::npos ? key : key.substr(dot + 1));
}

}  // namespace

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  size_t limit = std::max<size_t>(2, word.size() / 3);
  return best_d <= limit ? best : std::string();
}

namespace {

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  return closest_name(word, candidates);
}

// Splits "[a, b]" or "a, b" (or "" / "[]") into trimmed items.
std::vector<std::string> split_list(std::string_view text) {
  std::string t = trim(text);
  if (t.size() >= 2 && t.front() == '[' && t.back() == ']') t = trim(std::string_view(t).substr(1, t.size() - 2));
  std::vector<std::string> items;
  if (t.empty()) return items;
  size_t start = 0;
  while (true) {
    size_t comma = t.find(',', start);
    std::string item = trim(std::string_view(t).substr(start, comma == std::string::npos ? std::string::npos
                                                                                          : comma - start));
    // YAML quoting of list items.
    if (item.size() >= 2 && (item.front() == '"' || item.front() == '\'') && item.back() == item.front())
      item = item.substr(1, item.size() - 2);
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

bool parse_int(const std::string& s, int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data() + (!s.empty() && s[0] == '+'), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

bool parse_float(const std::string& s, double& out) {
  if (s.empty()) return false;
  std::string l = lower(s);
  if (l == ".inf" || l == "inf" || l == "+.inf") return out = INFINITY, true;
  if (l == "-.inf" || l == "-inf") return out = -INFINITY, true;
  if (l == ".nan" || l == "nan") return out = NAN, true;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

bool parse_bool(const std::string& s, bool& out) {
  std::string l = lower(s);
  if (l == "true" || l == "yes" || l == "on" || l == "1") return out = true, true;
  if (l == "false" || l == "no" || l == "off" || l == "0") return out = false, true;
  return false;
}

std::string with_origin(std::string_view origin, const std::string& msg) {
  return origin.empty() ? msg : fmt::format("{}: {}", origin, msg);
}

Value parse_value(const OptionSpec& spec, std::string_view raw, std::string_view origin) {
  std::string text = trim(raw);
  auto bad = [&](const std::string& item) -> std::string {
    return with_origin(origin, fmt::format("config key '{}' expects {}, got '{}'", spec.key,
                                           value_type_name(spec.type), item));
  };
  switch (spec.type) {
    case ValueType::Int: {
      int64_t v;
      if (!parse_int(text, v)) config_error(bad(text));
      return v;
    }
    case ValueType::Float: {
      double v;
      if (!parse_float(text, v)) config_error(bad(text));
      return v;
    }
    case ValueType::Bool: {
      bool v;
      if (!parse_bool(text, v)) config_error(bad(text));
      return v;
    }
    case ValueType::String: {
      if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front())
        text = text.substr(1, text.size() - 2);
      if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end()) {
        std::string hint = nearest(text, spec.choices);
        config_error(with_origin(origin, fmt::format("config key '{}': '{}' is not one of {}{}", spec.key, text,
                                                     fmt::join(spec.choices, ", "),
                                                     hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint))));
      }
      return text;
    }
    case ValueType::IntList: {
      std::vector<int64_t> out;
      for (const std::string& item : split_list(text)) {
        int64_t v;
        if (!parse_int(item, v)) config_error(bad(item));
        out.push_back(v);
      }
      return out;
    }
    case ValueType::FloatList: {
      std::vector<double> out;
      for (const std::string& item : split_list(text)) {
        double v;
        if (!parse_float(item, v)) config_error(bad(item));
        out.push_back(v);
      }
      return out;
    }
    case ValueType::StringList: {
      std::vector<std::string> out = split_list(text);
      for (const std::string& item : out) {
        if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), item) == spec.choices.end())
          config_error(with_origin(origin, fmt::format("config key '{}': '{}' is not one of {}", spec.key, item,
                                                       fmt::join(spec.choices, ", "))));
      }
      return out;
    }
  }
  config_error("unreachable");
}

std::string float_text(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  std::string s = fmt::format("{}", d);  // shortest text that reads back exactly
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// An interval of OptionSpec::range: "[0, 1)", "(0, inf)".
struct Bounds {
  double lo = -INFINITY, hi = INFINITY;
  bool lo_closed = false, hi_closed = false;
  bool contains(double v) const { return (lo_closed ? v >= lo : v > lo) && (hi_closed ? v <= hi : v < hi); }
};

bool parse_bounds(std::string_view text, Bounds& b) {
  std::string t = trim(text);
  if (t.size() < 5 || (t.front() != '[' && t.front() != '(') || (t.back() != ']' && t.back() != ')')) return false;
  size_t comma = t.find(',');
  if (comma == std::string::npos) return false;
  auto number = [](const std::string& x, double& out) { return parse_float(trim(x), out) && !std::isnan(out); };
  b.lo_closed = t.front() == '[';
  b.hi_closed = t.back() == ']';
  return number(t.substr(1, comma - 1), b.lo) && number(t.substr(comma + 1, t.size() - comma - 2), b.hi) &&
         b.lo <= b.hi;
}

// Numbers (and numeric list items) of `v` lie in the spec's range; floats
// are finite unless the range closes on an infinity. The message names the
// key, the range and the value.
void check_range(const OptionSpec& spec, const Value& v, std::string_view origin) {
  Bounds b;  // no range: any finite number
  if (!spec.range.empty() && !parse_bounds(spec.range, b))
    config_error(fmt::format("Schema: option '{}' has a malformed range '{}'", spec.key, spec.range));
  const bool list = std::holds_alternative<std::vector<int64_t>>(v) || std::holds_alternative<std::vector<double>>(v);
  auto check = [&](double x, const std::string& text) {
    if (b.contains(x)) return;
    std::string what = list ? fmt::format("every item of config key '{}'", spec.key)
                            : fmt::format("config key '{}'", spec.key);
    if (std::isnan(x)) config_error(with_origin(origin, fmt::format("{} must be a number, got {}", what, text)));
    if (spec.range.empty())
      config_error(with_origin(origin, fmt::format("{} must be a finite number, got {}", what, text)));
    config_error(with_origin(origin, fmt::format("{} must be in {}, got {}", what, spec.range, text)));
  };
  if (const auto* i = std::get_if<int64_t>(&v)) check(static_cast<double>(*i), std::to_string(*i));
  if (const auto* d = std::get_if<double>(&v)) check(*d, float_text(*d));
  if (const auto* il = std::get_if<std::vector<int64_t>>(&v))
    for (int64_t x : *il) check(static_cast<double>(x), std::to_string(x));
  if (const auto* dl = std::get_if<std::vector<double>>(&v))
    for (double x : *dl) check(x, float_text(x));
  if (spec.list_size > 0) {
    size_t n = 0;
    if (const auto* il = std::get_if<std::vector<int64_t>>(&v)) n = il->size();
    if (const auto* dl = std::get_if<std::vector<double>>(&v)) n = dl->size();
    if (const auto* sl = std::get_if<std::vector<std::string>>(&v)) n = sl->size();
    if (n != spec.list_size)
      config_error(with_origin(origin, fmt::format("config key '{}' needs {} values, got {} ({})", spec.key,
                                                   spec.list_size, n, value_to_text(v))));
  }
  if (spec.rule) {
    if (std::string why = spec.rule(v); !why.empty())
      config_error(with_origin(origin, fmt::format("config key '{}': {}", spec.key, why)));
  }
}

bool value_matches(ValueType t, const Value& v) {
  switch (t) {
    case ValueType::Int: return std::holds_alternative<int64_t>(v);
    case ValueType::Float: return std::holds_alternative<double>(v);
    case ValueType::Bool: return std::holds_alternative<bool>(v);
    case ValueType::String: return std::holds_alternative<std::string>(v);
    case ValueType::IntList: return std::holds_alternative<std::vector<int64_t>>(v);
    case ValueType::FloatList: return std::holds_alternative<std::vector<double>>(v);
    case ValueType::StringList: return std::holds_alternative<std::vector<std::string>>(v);
  }
  return false;
}

}  // namespace

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::Int: return "an int";
    case ValueType::Float: return "a float";
    case ValueType::Bool: return "a bool (true/false)";
    case ValueType::String: return "a string";
    case ValueType::IntList: return "a list of ints";
    case ValueType::FloatList: return "a list of floats";
    case ValueType::StringList: return "a list of strings";
  }
  return "?";
}

std::string value_to_text(const Value& v) {
  struct Visitor {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return float_text(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const { return x; }
    std::string operator()(const std::vector<int64_t>& x) const { return fmt::format("[{}]", fmt::join(x, ", ")); }
    std::string operator()(const std::vector<double>& x) const {
      std::vector<std::string> parts;
      for (double d : x) parts.push_back(float_text(d));
      return fmt::format("[{}]", fmt::join(parts, ", "));
    }
    std::string operator()(const std::vector<std::string>& x) const {
      return fmt::format("[{}]", fmt::join(x, ", "));
    }
  };
  return std::visit(Visitor{}, v);
}

// ---- Schema ----

Schema::Schema(std::initializer_list<OptionSpec> options) {
  for (const OptionSpec& o : options) add(o);
}

void Schema::add(OptionSpec spec) {
  EMBER_CHECK(value_matches(spec.type, spec.default_value), "Schema: default of '{}' is not {}", spec.key,
              value_type_name(spec.type));
  Bounds bounds;
  EMBER_CHECK(spec.range.empty() || parse_bounds(spec.range, bounds),
              "Schema: range of '{}' must read like \"[0, 1)\" or \"(0, inf)\", got '{}'", spec.key, spec.range);
  check_range(spec, spec.default_value, "Schema: the default");
  for (OptionSpec& o : options_) {
    if (o.key == spec.key) {
      o = std::move(spec);
      return;
    }
  }
  options_.push_back(std::move(spec));
}

void Schema::add(const Schema& other) {
  for (const OptionSpec& o : other.options()) add(o);
}

const OptionSpec* Schema::find(std::string_view key) const {
  for (const OptionSpec& o : options_)
    if (o.key == key) return &o;
  return nullptr;
}

std::string Schema::closest(std::string_view key) const {
  // A key of a known section ("model.foo") is matched within that section
  // only: a near key of another one ("log.root") would mislead.
  const size_t dot = key.find('.');
  const std::string_view prefix = dot == std::string_view::npos ? "" : key.substr(0, dot + 1);
  std::vector<std::string> keys, same_section;
  for (const OptionSpec& o : options_) {
    keys.push_back(o.key);
    if (!prefix.empty() && o.key.starts_with(prefix)) same_section.push_back(o.key);
  }
  const std::vector<std::string>& pool = same_section.empty() ? keys : same_section;
  std::string best = nearest(key, pool);
  if (!best.empty()) return best;
  // "lr" -> "optim.lr": the same last segment in another section.
  std::string tail = last_segment(key);
  for (const OptionSpec& o : options_)
    if (last_segment(o.key) == tail) return o.key;
  std::vector<std::string> tails;
  for (const std::string& k : pool) tails.push_back(last_segment(k));
  std::string near_tail = nearest(tail, tails);
  if (near_tail.empty()) return {};
  for (const std::string& k : pool)
    if (last_segment(k) == near_tail) return k;
  return {};
}

// ---- Config ----

Config::Config(Schema schema) : schema_(std::move(schema)) {
  for (const OptionSpec& o : schema_.options()) values_[o.key] = o.default_value;
}

namespace {
const OptionSpec& require_key(const Schema& schema, std::string_view key, std::string_view origin) {
  if (const OptionSpec* spec = schema.find(key)) return *spec;
  // Hydra's `+key=value` adds a key; every Ember key is in the schema, so
  // there is none to add: name the key without the '+', or the nearest one.
  const std::string_view bare = key.starts_with('+') ? key.substr(1) : key;
  if (bare != key && schema.find(bare))
    config_error(with_origin(origin, fmt::format("'{}': the key exists already (every key is in the schema; '+' "
                                                 "adds keys in Hydra only): write '{}=...'", key, bare)));
  std::string hint = schema.closest(bare);
  std::string section =
      bare.find('.') == std::string_view::npos ? "" : std::string(bare.substr(0, bare.find('.') + 1));
  std::vector<std::string> same_section;
  for (const OptionSpec& o : schema.options())
    if (!section.empty() && o.key.rfind(section, 0) == 0) same_section.push_back(o.key);
  std::string msg = fmt::format("unknown config key '{}'", key);
  if (!hint.empty()) msg += fmt::format("; did you mean '{}'?", hint);
  if (!same_section.empty()) msg += fmt::format(" (valid keys: {})", fmt::join(same_section, ", "));
  else msg += " (`ember train --help` lists every key)";
  config_error(with_origin(origin, msg));
}
}  // namespace

void Config::set_text(std::string_view key, std::string_view text, std::string_view origin) {
  const OptionSpec& spec = require_key(schema_, key, origin);
  Value v = parse_value(spec, text, origin);
  check_range(spec, v, origin);
  values_[spec.key] = std::move(v);
  set_.insert(spec.key);
}

void Config::set(std::string_view key, Value value) {
  const OptionSpec& spec = require_key(schema_, key, "");
  if (!value_matches(spec.type, value))
    config_error(fmt::format("config key '{}' expects {}, got '{}'", key, value_type_name(spec.type),
                             value_to_text(value)));
  check_range(spec, value, "");
  values_[spec.key] = std::move(value);
  set_.insert(spec.key);
}

void Config::apply_override(std::string_view assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    config_error(fmt::format("override '{}' must be key=value (e.g. optim.lr=3e-4)", assignment));
  set_text(trim(assignment.substr(0, eq)), assignment.substr(eq + 1), "command line");
}

bool Config::is_set(std::string_view key) const {
  return set_.find(key) != set_.end();
}

const Value& Config::value(std::string_view key) const {
  auto it = values_.find(key);
  EMBER_CHECK(it != values_.end(), "Config: no option '{}' in the schema", key);
  return it->second;
}

namespace {
template <typename T>
const T& get_as(const Value& v, std::string_view key, const char* want) {
  const T* p = std::get_if<T>(&v);
  EMBER_CHECK(p != nullptr, "Config: option '{}' is not {}", key, want);
  return *p;
}
}  // namespace

int64_t Config::get_int(std::string_view key) const { return get_as<int64_t>(value(key), key, "an int"); }
double Config::get_float(std::string_view key) const {
  const Value& v = value(key);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return get_as<double>(v, key, "a float");
}
bool Config::get_bool(std::string_view key) const { return get_as<bool>(value(key), key, "a bool"); }
const std::string& Config::get_string(std::string_view key) const {
  return get_as<std::string>(value(key), key, "a string");
}
std::vector<int64_t> Config::get_int_list(std::string_view key) const {
  return get_as<std::vector<int64_t>>(value(key), key, "a list of ints");
}
std::vector<double> Config::get_float_list(std::string_view key) const {
  const Value& v = value(key);
  if (const auto* i = std::get_if<std::vector<int64_t>>(&v)) return {i->begin(), i->end()};
  return get_as<std::vector<double>>(v, key, "a list of floats");
}
std::vector<std::string> Config::get_string_list(std::string_view key) const {
  return get_as<std::vector<std::string>>(value(key), key, "a list of strings");
}

namespace {
void emit_value(YAML::Emitter& out, const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    out << YAML::DoubleQuoted << *s;
  } else if (const auto* l = std::get_if<std::vector<std::string>>(&v)) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const std::string& x : *l) out << YAML::DoubleQuoted << x;
    out << YAML::EndSeq;
  } else {
    // Numbers, bools and numeric lists: our own exact text.
    out << YAML::Flow;
    std::string text = value_to_text(v);
    if (text.front() == '[') {
      out << YAML::BeginSeq;
      for (const std::string& item : split_list(text)) out << item;
      out << YAML::EndSeq;
    } else {
      out << text;
    }
  }
}
}  // namespace

std::string Config::to_yaml(bool with_help) const {
  // Group keys into nested mappings, sections in order of first appearance.
  struct NodeT {
    std::string name;
    const OptionSpec* leaf = nullptr;
    std::vector<NodeT> children;
  };
  NodeT root;
  for (const OptionSpec& o : schema_.options()) {
    NodeT* cur = &root;
    std::string_view rest = o.key;
    while (true) {
      size_t dot = rest.find('.');
      std::string part(rest.substr(0, dot));
      auto it = std::find_if(cur->children.begin(), cur->children.end(),
                             [&](const NodeT& n) { return n.name == part && !n.leaf; });
      if (dot == std::string_view::npos) {
        cur->children.push_back(NodeT{part, &o, {}});
        break;
      }
      if (it == cur->children.end()) {
        cur->children.push_back(NodeT{part, nullptr, {}});
        it = cur->children.end() - 1;
      }
      cur = &*it;
      rest = rest.substr(dot + 1);
    }
  }
  YAML::Emitter out;
  std::function<void(const NodeT&)> emit = [&](const NodeT& node) {
    out << YAML::BeginMap;
    for (const NodeT& c : node.children) {
      out << YAML::Key << c.name << YAML::Value;
      if (c.leaf) {
        emit_value(out, values_.at(c.leaf->key));
        if (with_help && !c.leaf->help.empty()) out << YAML::Comment(c.leaf->help);
      } else {
        emit(c);
      }
    }
    out << YAML::EndMap;
  };
  emit(root);
  return std::string(out.c_str()) + "\n";
}

Config Config::rebased(Schema schema) const {
  Config out(std::move(schema));
  for (const std::string& key : set_) out.set(key, values_.at(key));
  return out;
}

// ---- YAML ----

namespace {
std::string mark_text(const YAML::Mark& m) { return fmt::format("{}:{}", m.line + 1, m.column + 1); }

// Note [bounded YAML]: YAML::Load builds a node graph in which an alias
// shares the anchored node, so loading an alias bomb is cheap and walking
// it is exponential (issue 13: a 563-byte config took 26 s and 689 MB; 9
// lines of 4-way aliases took 118 s in flatten_yaml), and an alias inside
// its own anchor made the walk recurse until the stack overflowed.
// Instead, the parser's events build a tree here in which each node knows
// its size after expansion, so the limits (depth, alias count, expanded
// size) are checked as each event arrives, before any traversal, and an
// alias to a node still open is refused.
struct YNode {
  enum class Kind { Null, Scalar, Seq, Map } kind = Kind::Null;
  YAML::Mark mark;
  std::string scalar;
  std::vector<std::shared_ptr<const YNode>> items;  // Seq: items; Map: key, value, key, value, ...
  size_t expanded = 1;                              // nodes after expanding aliases
};
using YNodePtr = std::shared_ptr<const YNode>;

const char* kind_name(YNode::Kind k) {
  switch (k) {
    case YNode::Kind::Null: return "null (an empty value)";
    case YNode::Kind::Scalar: return "a scalar";
    case YNode::Kind::Seq: return "a sequence";
    case YNode::Kind::Map: return "a mapping";
  }
  return "?";
}

class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(const std::string& source) : source_(source) {}

  YNodePtr root() const { return root_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(leaf(mark, YNode::Kind::Null, ""), anchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    add(leaf(mark, YNode::Kind::Scalar, value), anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (++aliases_ > kMaxConfigAliases)
      fail(mark, fmt::format("more than {} YAML aliases (*name); a config needs few, if any", kMaxConfigAliases));
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) fail(mark, "alias to an undefined anchor");
    for (const auto& o : open_)
      if (o == it->second) fail(mark, "alias to a node that contains it (a recursive YAML structure)");
    count(mark, it->second->expanded);
    attach(mark, it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    start(mark, YNode::Kind::Seq, anchor);
  }
  void OnSequenceEnd() override { finish(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    start(mark, YNode::Kind::Map, anchor);
  }
  void OnMapEnd() override { finish(); }

 private:
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    config_error(fmt::format("{}:{}: {}", source_, mark_text(mark), what));
  }

  // Every node, and every alias by the size of what it stands for, counts
  // towards the expanded size of the document.
  void count(const YAML::Mark& mark, size_t nodes) {
    total_ += nodes;
    if (total_ > kMaxConfigNodes)
      fail(mark, fmt::format("the YAML document expands to more than {} nodes (aliases of aliases?); a config "
                             "has a few hundred", kMaxConfigNodes));
  }

  std::shared_ptr<YNode> leaf(const YAML::Mark& mark, YNode::Kind kind, const std::string& text) {
    count(mark, 1);
    auto n = std::make_shared<YNode>();
    n->kind = kind;
    n->mark = mark;
    n->scalar = text;
    return n;
  }

  void add(const std::shared_ptr<YNode>& n, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    attach(n->mark, n);
  }

  void attach(const YAML::Mark& mark, const YNodePtr& n) {
    if (open_.empty()) {
      root_ = n;
      return;
    }
    YNode& parent = *open_.back();
    // Keys are plain names: a collection as a key ("? [a, b]") is refused here.
    if (parent.kind == YNode::Kind::Map && parent.items.size() % 2 == 0 && n->kind != YNode::Kind::Scalar)
      fail(mark, fmt::format("a config key must be a plain name, not {} (YAML complex keys are not supported)",
                             kind_name(n->kind)));
    parent.items.push_back(n);
    parent.expanded += n->expanded;
  }

  void start(const YAML::Mark& mark, YNode::Kind kind, YAML::anchor_t anchor) {
    if (open_.size() >= static_cast<size_t>(kMaxConfigDepth))
      fail(mark, fmt::format("YAML collections nested more than {} deep; a config nests three or four",
                             kMaxConfigDepth));
    auto n = leaf(mark, kind, "");
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    open_.push_back(n);
  }

  void finish() {
    std::shared_ptr<YNode> n = std::move(open_.back());
    open_.pop_back();
    attach(n->mark, n);
  }

  const std::string& source_;
  YNodePtr root_;
  std::vector<std::shared_ptr<YNode>> open_;  // collections not yet ended
  std::map<YAML::anchor_t, YNodePtr> anchors_;
  size_t aliases_ = 0, total_ = 0;
};

YNodePtr parse_bounded(const std::string& yaml_text, const std::string& source) {
  if (yaml_text.size() > kMaxConfigBytes)
    config_error(fmt::format("{}: {} bytes is too large for a config file (at most {} bytes)", source,
                             yaml_text.size(), kMaxConfigBytes));
  std::istringstream in(yaml_text);
  TreeBuilder builder(source);
  try {
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(builder)) return nullptr;  // empty or comments only
    TreeBuilder rest(source);
    if (parser.HandleNextDocument(rest))
      config_error(fmt::format("{}: more than one YAML document ('---'); a config file is one mapping", source));
  } catch (const YAML::Exception& e) {
    config_error(fmt::format("{}:{}: malformed YAML: {}", source, mark_text(e.mark), e.msg));
  }
  return builder.root();
}

void emit_flow(YAML::Emitter& out, const YNode& n) {
  switch (n.kind) {
    case YNode::Kind::Null: out << YAML::Null; break;
    case YNode::Kind::Scalar: out << n.scalar; break;
    case YNode::Kind::Seq:
      out << YAML::BeginSeq;
      for (const YNodePtr& item : n.items) emit_flow(out, *item);
      out << YAML::EndSeq;
      break;
    case YNode::Kind::Map:
      out << YAML::BeginMap;
      for (size_t i = 0; i + 1 < n.items.size(); i += 2) {
        out << YAML::Key;
        emit_flow(out, *n.items[i]);
        out << YAML::Value;
        emit_flow(out, *n.items[i + 1]);
      }
      out << YAML::EndMap;
      break;
  }
}

// A bounded sub-tree as one line of flow YAML (aliases already expanded).
std::string flow_yaml(const YNode& n) {
  YAML::Emitter out;
  out << YAML::Flow;
  emit_flow(out, n);
  return out.c_str();
}

struct Flattener {
  const std::string& source;
  std::vector<YamlEntry>& out;
  std::vector<YamlEntry>* defaults;          // the top-level `defaults:` list goes here (null: a plain key)
  std::map<std::string, std::string> where;  // flat key -> position, to refuse a key set twice

  // Hydra's defaults list: "- group: choice" items and "- _self_".
  void defaults_list(const YNode& v, const YAML::Mark& at) {
    if (v.kind == YNode::Kind::Null) return;
    if (v.kind != YNode::Kind::Seq)
      config_error(fmt::format("{}:{}: 'defaults' must be a list of '- group: choice' items (e.g. '- model: cnn'), "
                               "got {}", source, mark_text(at), kind_name(v.kind)));
    std::map<std::string, std::string> seen;
    for (const YNodePtr& item : v.items) {
      const YAML::Mark& m = item->mark;
      if (item->kind == YNode::Kind::Scalar && item->scalar == "_self_") {
        if (!seen.emplace("_self_", mark_text(m)).second)
          config_error(fmt::format("{}:{}: '_self_' appears twice in the defaults list", source, mark_text(m)));
        defaults->push_back({"_self_", "", false, mark_text(m)});
        continue;
      }
      if (item->kind != YNode::Kind::Map || item->items.size() != 2 || item->items[1]->kind != YNode::Kind::Scalar)
        config_error(fmt::format("{}:{}: a defaults entry is '- group: choice' (e.g. '- model: cnn') or '- _self_', "
                                 "got {}", source, mark_text(m),
                                 item->kind == YNode::Kind::Scalar ? "'" + item->scalar + "'" : kind_name(item->kind)));
      const std::string& group = item->items[0]->scalar;
      auto [it, fresh] = seen.emplace(group, mark_text(m));
      if (!fresh)
        config_error(fmt::format("{}:{}: config group '{}' appears twice in the defaults list (first at {}:{})", source,
                                 mark_text(m), group, source, it->second));
      defaults->push_back({group, trim(item->items[1]->scalar), false, mark_text(m)});
    }
  }

  void entry(const std::string& key, std::string text, bool is_list, const YAML::Mark& mark) {
    auto [it, fresh] = where.emplace(key, mark_text(mark));
    if (!fresh)
      config_error(fmt::format("{}:{}: config key '{}' is set twice (first at {}:{}); remove one", source,
                               mark_text(mark), key, source, it->second));
    out.push_back({key, std::move(text), is_list, mark_text(mark)});
  }

  void map(const YNode& node, const std::string& prefix) {
    // Within one mapping a repeated key (or section) is an error, with both lines.
    std::map<std::string, YAML::Mark> seen;
    for (size_t i = 0; i + 1 < node.items.size(); i += 2) {
      const YNode& k = *node.items[i];
      const YNode& v = *node.items[i + 1];
      auto [it, fresh] = seen.emplace(k.scalar, k.mark);
      if (!fresh)
        config_error(fmt::format("{}:{}: duplicate key '{}' (first at line {}); a key may appear once in a mapping, so "
                                 "remove or merge one of them",
                                 source, mark_text(k.mark), k.scalar, it->second.line + 1));
      std::string full = prefix.empty() ? k.scalar : prefix + "." + k.scalar;
      if (prefix.empty() && k.scalar == "defaults" && defaults) {
        defaults_list(v, k.mark);
      } else if (v.kind == YNode::Kind::Map) {
        map(v, full);
      } else if (v.kind == YNode::Kind::Seq && k.scalar == "layers") {
        // Note [layer lists]: model.layers is a list of mappings (one layer
        // each); it stays a YAML sub-tree, kept as flow text for its model.
        entry(full, flow_yaml(v), true, k.mark);
      } else if (v.kind == YNode::Kind::Seq) {
        std::vector<std::string> items;
        for (const YNodePtr& item : v.items) {
          if (item->kind != YNode::Kind::Scalar)
            config_error(fmt::format("{}:{}: config key '{}' must be a list of plain values, got {} as an item",
                                     source, mark_text(item->mark), full, kind_name(item->kind)));
          items.push_back(item->scalar);
        }
        entry(full, fmt::format("[{}]", fmt::join(items, ", ")), true, k.mark);
      } else {
        entry(full, v.kind == YNode::Kind::Null ? std::string() : v.scalar, false, k.mark);
      }
    }
  }
};
}  // namespace

std::vector<YamlEntry> flatten_yaml(const std::string& yaml_text, const std::string& source_name,
                                    std::vector<YamlEntry>* defaults) {
  YNodePtr root = parse_bounded(yaml_text, source_name);
  std::vector<YamlEntry> out;
  if (!root || root->kind == YNode::Kind::Null) return out;
  if (root->kind != YNode::Kind::Map)
    config_error(fmt::format("{}:{}: a config file must be a mapping of sections (model:, data:, ...)", source_name,
                             mark_text(root->mark)));
  Flattener{source_name, out, defaults, {}}.map(*root, "");
  return out;
}

Config resolve_settings(const std::vector<Setting>& settings) {
  // The model's options join the schema: the last model.name decides.
  std::string model = "cnn";
  for (const Setting& st : settings)
    if (st.key == "model.name") model = trim(st.text);
  Config config(experiment_schema(model));
  for (const Setting& st : settings) config.set_text(st.key, st.text, st.origin);
  return config;
}

Config config_from_yaml(const std::string& yaml_text, const std::string& source_name) {
  std::vector<Setting> settings;
  for (const YamlEntry& e : flatten_yaml(yaml_text, source_name))
    settings.push_back({e.key, e.text, source_name + ":" + e.position});
  return resolve_settings(settings);
}

}  // namespace ember::train
