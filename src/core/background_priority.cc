#include "core/background_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace anchorage::core {

void lower_this_thread_priority(int nice) {
  (void)setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), nice);
}

}  // namespace anchorage::core
