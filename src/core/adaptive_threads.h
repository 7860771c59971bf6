// The hooks of the adaptive thread count (Note [adaptive thread count]) for
// the core's parallel primitives and the places where no kernel is running.
#pragma once

namespace ember::detail {

// Samples the other processes' load when due and applies the thread count
// it allows to the calling thread's OpenMP count. Lowering is safe anywhere
// outside a parallel region; raising only at a safe point, where no kernel
// of this thread sits between creating a oneDNN primitive for one count and
// running it (a primitive made for fewer threads may size its scratch
// memory for them). No-op when adaptation is off or a ThreadLimitGuard is
// alive on this thread.
void adapt_thread_count(bool safe_point);

// set_num_threads(n): fixes the count at n unless EMBER_ADAPTIVE_THREADS=1
// asked for adaptation, which then uses n as its ceiling.
void on_chosen_thread_count(int n);

// ThreadLimitGuard's count of guards alive on this thread: adaptation leaves
// such a thread's count alone.
void pin_thread_count(int delta);

}  // namespace ember::detail
