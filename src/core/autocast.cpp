#include "ember/core/autocast.h"

#include <cstdlib>
#include <string_view>

namespace ember {
namespace {
thread_local bool autocast_enabled = false;

bool native_from_env() {
  const char* v = std::getenv("EMBER_AUTOCAST_BF16");
  return v == nullptr || std::string_view(v) != "emulated";
}
thread_local bool native_allowed = native_from_env();
}  // namespace

bool Autocast::is_enabled() { return autocast_enabled; }
void Autocast::set_enabled(bool enabled) { autocast_enabled = enabled; }
bool Autocast::native_bf16_allowed() { return native_allowed; }
void Autocast::set_native_bf16(bool allowed) { native_allowed = allowed; }

}  // namespace ember
