// Loading a config file with its config groups (Hydra's defaults list and
// `group=choice` overrides) into the ordered settings of one experiment.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ember/train/config.h"

namespace ember::train {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void config_error(const std::string& msg) { throw ConfigError(msg); }

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string read_config_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) config_error(fmt::format("cannot read config file '{}': {}", path, std::strerror(errno)));
  // Read at most one byte past the limit: a data file given by mistake is
  // refused without being read whole.
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) config_error(fmt::format("cannot read config file '{}': {}", path, std::strerror(errno)));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// The folder that holds the groups: the config file's own folder.
fs::path config_dir(const std::string& path) {
  if (path.empty()) return "configs";
  fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// A group or choice is a plain file name: no path separators, no "..".
bool plain_name(std::string_view s) {
  if (s.empty() || s.front() == '.') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

std::vector<std::string> subfolders(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> config_group_choices_in(const fs::path& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct GroupChoice {
  std::string group, choice, origin;  // origin: "configs/x.yaml:2:5" or "command line"
};

// The settings of one group file, keys prefixed with the group.
void add_group(const fs::path& dir, const GroupChoice& g, std::vector<Setting>& out) {
  const std::string what = fmt::format("{}: {}={}", g.origin, g.group, g.choice);
  if (!plain_name(g.group) || !plain_name(g.choice))
    config_error(fmt::format("{}: a config group and its choice are plain names (letters, digits, '_', '-', '.'), "
                             "as in model=resnet{}", what,
                             g.choice.find(',') != std::string::npos ? "; to run each of several choices use "
                                                                       "`ember train -m` (multirun)" : ""));
  const fs::path folder = dir / g.group;
  if (!fs::is_directory(folder)) {
    std::vector<std::string> groups = subfolders(dir);
    std::string msg = fmt::format("{}: there is no config group '{}' (no folder {}/)", what, g.group, folder.string());
    msg += groups.empty() ? fmt::format("; {} has no group folders", dir.string())
                          : fmt::format("; the groups are {}", fmt::join(groups, ", "));
    // "lr=0.1" was meant as an option: name the dotted key.
    std::string key = experiment_schema("cnn").closest(g.group);
    if (!key.empty() && key.substr(key.rfind('.') + 1) == g.group)
      msg += fmt::format("; to set an option use its dotted key, e.g. {}={}", key, g.choice);
    config_error(msg);
  }
  const fs::path file = folder / (g.choice + ".yaml");
  if (!fs::is_regular_file(file)) {
    std::vector<std::string> choices = config_group_choices_in(folder);
    std::string hint = closest_name(g.choice, choices);
    config_error(fmt::format("{}: config group '{}' has no choice '{}' ({} does not exist); the choices are "
                             "{}/{{{}}}.yaml{}",
                             what, g.group, g.choice, file.string(), folder.string(), fmt::join(choices, ","),
                             hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
  }
  const std::string source = file.string();
  std::vector<YamlEntry> nested;
  std::vector<YamlEntry> entries = flatten_yaml(read_config_text(source), source, &nested);
  if (!nested.empty())
    config_error(fmt::format("{}:{}: a group file cannot have a defaults list; list the groups in the experiment's "
                             "config (or on the command line)", source, nested.front().position));
  for (const YamlEntry& e : entries) out.push_back({g.group + "." + e.key, e.text, source + ":" + e.position});
}

}  // namespace

std::vector<std::string> config_group_choices(const std::string& path, const std::string& group) {
  return config_group_choices_in(config_dir(path) / group);
}

namespace {

// Hydra's `~key`: the key goes back to its default, whatever the file or a
// group set (so `~data.val_fraction data.split_file=...` swaps one for the
// other). Deleting a key nothing set is an error, as in Hydra.
void delete_setting(std::vector<Setting>& settings, const std::string& arg) {
  const std::string key = trim(std::string_view(arg).substr(1));
  if (key.empty() || key.find('=') != std::string::npos)
    config_error(fmt::format("'{}': ~ deletes a key the config sets; write '~key' without a value (e.g. "
                             "~data.val_fraction)", arg));
  const size_t before = settings.size();
  std::erase_if(settings, [&](const Setting& s) { return s.key == key; });
  if (settings.size() == before)
    config_error(fmt::format("'{}': the config does not set '{}', so there is nothing to delete (its default "
                             "applies already)", arg, key));
}

// Hydra's `+key=value` adds a key the config does not set (its default
// applied) and refuses one it sets; `++key=value` sets it either way.
void add_setting(std::vector<Setting>& settings, const std::string& arg) {
  const bool force = arg.starts_with("++");
  const std::string_view rest = std::string_view(arg).substr(force ? 2 : 1);
  const size_t eq = rest.find('=');
  if (eq == std::string_view::npos || eq == 0)
    config_error(fmt::format("override '{}' must be {}key=value (e.g. +train.grad_clip_norm=1.0)", arg,
                             force ? "++" : "+"));
  const std::string key = trim(rest.substr(0, eq));
  if (!force)
    for (const Setting& s : settings)
      if (s.key == key)
        config_error(fmt::format("'{}': the config sets '{}' already ({}); '+' adds a key it does not set: write "
                                 "'{}=...' (or '++{}=...') to override it", arg, key, s.origin, key, key));
  settings.push_back({key, std::string(rest.substr(eq + 1)), "command line"});
}

}  // namespace

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::vector<YamlEntry> entries, defaults;
  if (!path.empty()) entries = flatten_yaml(read_config_text(path), path, &defaults);

  // The defaults list, with the place of the file's own keys (_self_).
  std::vector<GroupChoice> groups;
  size_t self = std::string::npos;
  for (const YamlEntry& d : defaults) {
    if (d.key == "_self_") self = groups.size();
    else groups.push_back({d.key, d.text, path + ":" + d.position});
  }
  if (self == std::string::npos) self = groups.size();

  // Command line: a bare name picks a group's choice; dotted keys are options.
  std::vector<GroupChoice> added;  // groups the defaults list does not name
  std::vector<std::string> options;
  for (const std::string& o : overrides) {
    size_t eq = o.find('=');
    std::string key = eq == std::string::npos ? std::string() : trim(std::string_view(o).substr(0, eq));
    if (key.empty() || key.find('.') != std::string::npos) {
      options.push_back(o);  // apply_override reports a malformed one
      continue;
    }
    GroupChoice g{key, trim(std::string_view(o).substr(eq + 1)), "command line"};
    auto it = std::find_if(groups.begin(), groups.end(), [&](const GroupChoice& x) { return x.group == key; });
    if (it != groups.end()) {
      *it = g;
      continue;
    }
    auto again = std::find_if(added.begin(), added.end(), [&](const GroupChoice& x) { return x.group == key; });
    if (again != added.end()) *again = g;  // the later choice wins
    else added.push_back(g);
  }

  const fs::path dir = config_dir(path);
  std::vector<Setting> settings;
  for (size_t i = 0; i < self; ++i) add_group(dir, groups[i], settings);
  for (const YamlEntry& e : entries) settings.push_back({e.key, e.text, path + ":" + e.position});
  for (size_t i = self; i < groups.size(); ++i) add_group(dir, groups[i], settings);
  for (const GroupChoice& g : added) add_group(dir, g, settings);
  for (const std::string& o : options) {
    if (o.starts_with('~')) {
      delete_setting(settings, o);
      continue;
    }
    if (o.starts_with('+')) {
      add_setting(settings, o);
      continue;
    }
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      config_error(fmt::format("override '{}' must be key=value (e.g. optim.lr=3e-4)", o));
    settings.push_back({trim(std::string_view(o).substr(0, eq)), o.substr(eq + 1), "command line"});
  }
  return resolve_settings(settings);
}

}  // namespace ember::train
