// wok::Error and its subtypes: every failure a user can cause surfaces as one
// of these, with a message that names the op, the shapes and the device.
#pragma once

#include <stdexcept>
#include <string>

namespace wok {

// Base of every error wok raises on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shapes that do not fit together (broadcasting, reshape, matmul, axes).
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A dtype an op does not accept, or a failed promotion.
class DTypeError : public Error {
 public:
  using Error::Error;
};

// Unknown op, duplicate registration, missing kernel.
class RegistryError : public Error {
 public:
  using Error::Error;
};

// A device that is unknown, absent, or lacks a kernel or driver.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// Anything else about a call's arguments (attributes, values out of range).
class ArgumentError : public Error {
 public:
  using Error::Error;
};

// A defect found by a troubleshooting switch (docs/troubleshooting.md):
// WOK_CHECK_STREAMS saw two steps on different streams touch one buffer
// without an event between them, or WOK_VERIFY_KERNELS saw a kernel write
// outside its output or leave part of it unwritten.
class CheckError : public Error {
 public:
  using Error::Error;
};

// A collective that could not complete (wok::dist): MPI or NCCL missing, a
// rank that died or never arrived within WOK_DIST_TIMEOUT, ranks that
// disagree about the call, or a group broken by an earlier failure.
class DistError : public Error {
 public:
  using Error::Error;
};

// A function captured by wok::compile did what a capture cannot replay:
// read tensor data (item, to_vector, data, printing) or evaluate (eval)
// while it was being traced, which would bake one run's values into every
// later call.
class CaptureError : public Error {
 public:
  using Error::Error;
};

}  // namespace wok
