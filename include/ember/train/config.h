// Experiment configuration: a schema of typed, documented options (dotted
// keys such as "optim.lr"), a YAML file that sets some of them, and
// command-line overrides ("optim.lr=3e-4") applied on top. Every key is
// checked against the schema; unknown keys name the closest valid one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/core/error.h"

namespace ember::train {

// A usage or configuration mistake (the `ember` command exits with 2).
class ConfigError : public Error {
 public:
  using Error::Error;
};

enum class ValueType { Int, Float, Bool, String, IntList, FloatList, StringList };
const char* value_type_name(ValueType t);  // "int", "float", "bool", "string", "list of int", ...

using Value = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>,
                           std::vector<std::string>>;

// One option. Strings with non-empty `choices` only accept those. Numbers
// (and each item of a numeric list) must lie in `range`, an interval in
// mathematical notation: "[0, 1)", "(0, inf)", "[1, 1024]". Floats must be
// finite unless the range closes on inf ("[0, inf]"); NaN is never accepted.
// A list with a non-zero `list_size` must have exactly that many items.
struct OptionSpec {
  std::string key;  // dotted: "optim.lr"
  ValueType type;
  Value default_value;
  std::string help;
  std::vector<std::string> choices = {};
  std::string range = {};
  size_t list_size = 0;
  // A rule the range cannot say (ResNet's 18, 34 or 6n + 2): the reason a
  // value is refused, or "" when it is accepted; checked with the range.
  std::string (*rule)(const Value& value) = nullptr;
};

class Schema {
 public:
  Schema() = default;
  Schema(std::initializer_list<OptionSpec> options);
  // Adds an option; a key added twice replaces the first (a model may
  // override a base default, e.g. model.dropout).
  void add(OptionSpec spec);
  void add(const Schema& other);
  const OptionSpec* find(std::string_view key) const;
  const std::vector<OptionSpec>& options() const { return options_; }
  // The valid key nearest to `key` (edit distance), or "" when nothing is close.
  std::string closest(std::string_view key) const;

 private:
  std::vector<OptionSpec> options_;
};

// Resolved configuration: every option of the schema has a value (its
// default unless the file or an override set it).
class Config {
 public:
  Config() = default;
  explicit Config(Schema schema);  // all defaults

  const Schema& schema() const { return schema_; }

  // Sets `key` from YAML/command-line text ("3e-4", "true", "[1, 2]", "a,b").
  // Errors name the key, the expected type and the text; unknown keys
  // suggest the closest valid key. `origin` ("file.yaml:3:5" or
  // "command line") is added to the message.
  void set_text(std::string_view key, std::string_view text, std::string_view origin = "");
  void set(std::string_view key, Value value);
  // "key=value" from the command line.
  void apply_override(std::string_view assignment);

  bool is_set(std::string_view key) const;  // set by file/override (not default)
  const Value& value(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;  // ints widen
  bool get_bool(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  std::vector<int64_t> get_int_list(std::string_view key) const;
  std::vector<double> get_float_list(std::string_view key) const;
  std::vector<std::string> get_string_list(std::string_view key) const;

  // Nested YAML of every option, in schema order, with comments from help
  // text when `with_help`. Reading it back gives an equal Config.
  std::string to_yaml(bool with_help = false) const;
  // Re-checks this config against a (wider) schema, keeping set values.
  Config rebased(Schema schema) const;

 private:
  Schema schema_;
  std::map<std::string, Value, std::less<>> values_;
  std::set<std::string, std::less<>> set_;  // keys set by a file or an override
};

// Text of a value as it would appear in YAML ("0.001", "true", "[1, 2]").
std::string value_to_text(const Value& v);

// The flat "a.b.c" -> scalar/list text of a YAML document, with each
// key's "line:col" position. Throws ConfigError naming the file, line and
// column for malformed YAML, a document that is not a mapping, a key given
// twice (with both lines), a key that is not a plain scalar, and a document
// beyond the limits below (checked while parsing, before anything is
// expanded: an alias bomb or a deep nest costs no more than its bytes).
constexpr size_t kMaxConfigBytes = size_t{1} << 20;  // a config is a few KiB
constexpr int kMaxConfigDepth = 32;                  // nested collections
constexpr size_t kMaxConfigAliases = 100;            // *alias references
constexpr size_t kMaxConfigNodes = 10000;            // nodes after expanding aliases
struct YamlEntry {
  std::string key;
  std::string text;      // scalar text, or "[a, b]" for a sequence of scalars
  bool is_list = false;
  std::string position;  // "line:col", 1-based
};
// With `defaults` non-null, a top-level `defaults:` list (Hydra's: items
// "- group: choice" and "- _self_") goes there as {group, choice} entries
// ({"_self_", ""} for _self_) instead of being a key.
std::vector<YamlEntry> flatten_yaml(const std::string& yaml_text, const std::string& source_name,
                                    std::vector<YamlEntry>* defaults = nullptr);

// The valid name nearest to `word` (edit distance), or "" when none is close.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

// One assignment and where it came from ("configs/x.yaml:3:5", "command line").
struct Setting {
  std::string key, text, origin;
};
// The config of these settings applied in order (a later one wins), with the
// options of the model the last model.name names.
Config resolve_settings(const std::vector<Setting>& settings);

// The whole experiment schema: the base sections (data, optim, schedule,
// train, log) plus model.name and the options of the chosen zoo model.
Schema experiment_schema(const std::string& model_name);
// Loads CONFIG.yaml (or the empty config when path is ""), applies the
// overrides, and resolves the model's options. Throws ConfigError.
//
// Config groups, as Hydra has them: an override with a bare name, such as
// `model=resnet`, or an entry of the config's `defaults:` list
// (`- model: resnet`) reads the group file <dir>/model/resnet.yaml, where
// <dir> is the config file's folder (configs/ when path is ""); its keys are
// relative to the group (`depth: 18` sets model.depth). The order, later
// winning: the defaults list (a command-line choice replaces the entry of
// its group), the config's own keys (where `- _self_` stands, else after the
// list), groups chosen on the command line that the list does not name,
// then key=value overrides in command-line order. An unknown group or choice
// names the files that exist.
Config load_config(const std::string& path, const std::vector<std::string>& overrides);
// The choices of config group `group` next to the config at `path`
// (the names of <dir>/<group>/*.yaml, sorted).
std::vector<std::string> config_group_choices(const std::string& path, const std::string& group);
// A config read back from a run directory or checkpoint (YAML text).
Config config_from_yaml(const std::string& yaml_text, const std::string& source_name);

}  // namespace ember::train
