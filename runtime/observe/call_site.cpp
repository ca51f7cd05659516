#include "wok/runtime/observe/call_site.h"

namespace wok::observe {

constinit thread_local ThreadCallSite t_call_site{};

}  // namespace wok::observe
