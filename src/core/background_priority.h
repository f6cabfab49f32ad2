// lower_this_thread_priority(): for threads that do work ahead of need (packing weights,
// faulting in state) beside the threads that answer requests, so that those come first.
#pragma once

namespace anchorage::core {

// Sets the calling thread's nice value to `nice` (Linux applies a thread id's priority to that
// thread alone). Best effort: a container may refuse it, and the work then only runs at the
// default priority.
void lower_this_thread_priority(int nice = 10);

}  // namespace anchorage::core
