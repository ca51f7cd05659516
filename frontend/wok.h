// wok: eager-style tensor code, fused generated kernels underneath.
// Include this one header.
#pragma once

#include "wok/frontend/cache_api.h"
#include "wok/frontend/compile.h"
#include "wok/frontend/conv.h"
#include "wok/frontend/creation.h"
#include "wok/frontend/dist.h"
#include "wok/frontend/cuda_api.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/nn.h"
#include "wok/frontend/observe_api.h"
#include "wok/frontend/op_info_api.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/pooling.h"
#include "wok/frontend/runtime_api.h"
#include "wok/frontend/tensor.h"
#include "wok/runtime/device.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/error.h"
#include "wok/runtime/op_def.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/thread_pool.h"
