#include "reference.h"

#include <map>
#include <mutex>

#include "ember/io/safetensors.h"

namespace ember::op_db {

namespace {

struct Files {
  std::mutex mutex;
  std::string dir;
  std::map<std::string, StateDict> by_group;
};

Files& files() {
  static Files f;
  return f;
}

}  // namespace

void set_reference_dir(std::string dir) {
  std::lock_guard lock(files().mutex);
  files().dir = std::move(dir);
}

const StateDict& reference_file(const std::string& group) {
  Files& f = files();
  std::lock_guard lock(f.mutex);
  auto it = f.by_group.find(group);
  if (it == f.by_group.end()) {
    EMBER_CHECK(!f.dir.empty(), "op_db: set_reference_dir was not called before reading {}", group);
    it = f.by_group.emplace(group, safetensors::load_file(f.dir + "/" + group + ".safetensors")).first;
  }
  return it->second;
}

std::string entry_key(const OpInfo& info) { return info.op + "." + info.variant; }

std::string case_key(const OpInfo& info) {
  return info.op + "." + (info.reference.empty() ? info.variant : info.reference);
}

bool has(const OpInfo& info, const std::string& field) {
  return reference_file(info.group).contains(case_key(info) + "." + field);
}

Tensor ref(const OpInfo& info, const std::string& field) {
  return reference_file(info.group).at(case_key(info) + "." + field);
}

Tensors inputs_of(const OpInfo& info) {
  Tensors xs;
  for (int i = 0; has(info, "x" + std::to_string(i)); ++i) xs.push_back(ref(info, "x" + std::to_string(i)));
  return xs;
}

int num_outputs(const OpInfo& info) {
  int n = 0;
  while (has(info, "y" + std::to_string(n))) ++n;
  return n;
}

}  // namespace ember::op_db
