// Adaptive thread count: with the default thread count, Ember runs fewer
// threads while other processes hold some of its CPUs, and returns to the
// full count when they are free again. See Note [adaptive thread count].
#pragma once

namespace ember {

// Whether the thread count adapts to the load of other processes. On by
// default when the count is Ember's own choice (OMP_NUM_THREADS unset and no
// set_num_threads call); a count the user chooses is kept exactly, as
// torch.set_num_threads keeps it, because float results can depend on the
// thread count. EMBER_ADAPTIVE_THREADS=1 turns it on with a chosen count as
// the ceiling, =0 turns it off.
bool adaptive_threads();
void set_adaptive_threads(bool on);

}  // namespace ember
