#include "ember/core/autocast.h"

namespace ember {
namespace {
thread_local bool autocast_enabled = false;
}  // namespace

bool Autocast::is_enabled() { return autocast_enabled; }
void Autocast::set_enabled(bool enabled) { autocast_enabled = enabled; }

}  // namespace ember
