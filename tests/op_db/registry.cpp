#include "op_db.h"

namespace ember::op_db {

std::vector<OpInfo>& registry() {
  static std::vector<OpInfo> ops;
  return ops;
}

Registrar::Registrar(std::vector<OpInfo> ops) {
  for (OpInfo& op : ops) registry().push_back(std::move(op));
}

}  // namespace ember::op_db
