// Config: typed options from a schema, set from YAML text and overrides.
#include "ember/train/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
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

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  size_t limit = std::max<size_t>(2, word.size() / 3);
  return best_d <= limit ? best : std::string();
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

std::string float_text(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  std::string s = fmt::format("{}", d);  // shortest text that reads back exactly
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
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
  std::vector<std::string> keys;
  for (const OptionSpec& o : options_) keys.push_back(o.key);
  std::string best = nearest(key, keys);
  if (!best.empty()) return best;
  // "lr" -> "optim.lr": the same last segment in another section.
  std::string tail = last_segment(key);
  for (const OptionSpec& o : options_)
    if (last_segment(o.key) == tail) return o.key;
  std::vector<std::string> tails;
  for (const OptionSpec& o : options_) tails.push_back(last_segment(o.key));
  std::string near_tail = nearest(tail, tails);
  if (near_tail.empty()) return {};
  std::string section = key.find('.') == std::string_view::npos ? "" : std::string(key.substr(0, key.find('.')));
  for (const OptionSpec& o : options_)  // prefer the same section
    if (last_segment(o.key) == near_tail && o.key.rfind(section + ".", 0) == 0) return o.key;
  for (const OptionSpec& o : options_)
    if (last_segment(o.key) == near_tail) return o.key;
  return {};
}

// ---- Config ----

Config::Config(Schema schema) : schema_(std::move(schema)) {
  for (const OptionSpec& o : schema_.options()) values_[o.key] = o.default_value;
}

namespace {
const OptionSpec& require_key(const Schema& schema, std::string_view key, std::string_view origin) {
  if (const OptionSpec* spec = schema.find(key)) return *spec;
  std::string hint = schema.closest(key);
  std::string section = key.find('.') == std::string_view::npos ? "" : std::string(key.substr(0, key.find('.') + 1));
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
  values_[spec.key] = parse_value(spec, text, origin);
  set_.insert(spec.key);
}

void Config::set(std::string_view key, Value value) {
  const OptionSpec& spec = require_key(schema_, key, "");
  if (!value_matches(spec.type, value))
    config_error(fmt::format("config key '{}' expects {}, got '{}'", key, value_type_name(spec.type),
                             value_to_text(value)));
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

void flatten_node(const YAML::Node& node, const std::string& prefix, const std::string& source,
                  std::vector<YamlEntry>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      std::string key = kv.first.as<std::string>();
      std::string full = prefix.empty() ? key : prefix + "." + key;
      const YAML::Node& v = kv.second;
      if (v.IsMap()) {
        flatten_node(v, full, source, out);
      } else if (v.IsSequence()) {
        std::vector<std::string> items;
        for (const auto& item : v) {
          if (!item.IsScalar())
            config_error(fmt::format("{}:{}: config key '{}' must be a list of plain values", source,
                                     mark_text(item.Mark()), full));
          items.push_back(item.Scalar());
        }
        out.push_back({full, fmt::format("[{}]", fmt::join(items, ", ")), true, mark_text(kv.first.Mark())});
      } else {
        out.push_back({full, v.IsNull() ? std::string() : v.Scalar(), false, mark_text(kv.first.Mark())});
      }
    }
  } else if (!node.IsNull()) {
    config_error(fmt::format("{}:{}: a config file must be a mapping of sections (model:, data:, ...)", source,
                             mark_text(node.Mark())));
  }
}
}  // namespace

std::vector<YamlEntry> flatten_yaml(const std::string& yaml_text, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    config_error(fmt::format("{}:{}: malformed YAML: {}", source_name, mark_text(e.mark), e.msg));
  }
  std::vector<YamlEntry> out;
  flatten_node(root, "", source_name, out);
  return out;
}

namespace {
Config resolve(const std::vector<YamlEntry>& entries, const std::string& source,
               const std::vector<std::string>& overrides) {
  std::string model = "cnn";
  for (const YamlEntry& e : entries)
    if (e.key == "model.name") model = trim(e.text);
  for (const std::string& o : overrides)
    if (o.rfind("model.name=", 0) == 0) model = trim(std::string_view(o).substr(11));
  Config config(experiment_schema(model));
  for (const YamlEntry& e : entries) config.set_text(e.key, e.text, source + ":" + e.position);
  for (const std::string& o : overrides) config.apply_override(o);
  return config;
}
}  // namespace

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::vector<YamlEntry> entries;
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) config_error(fmt::format("cannot read config file '{}': {}", path, std::strerror(errno)));
    std::stringstream ss;
    ss << in.rdbuf();
    entries = flatten_yaml(ss.str(), path);
  }
  return resolve(entries, path, overrides);
}

Config config_from_yaml(const std::string& yaml_text, const std::string& source_name) {
  return resolve(flatten_yaml(yaml_text, source_name), source_name, {});
}

}  // namespace ember::train
