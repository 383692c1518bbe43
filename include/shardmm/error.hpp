// Exceptions thrown by shardmm. Validation uses only global metadata that is identical on
// every rank, so a bad call throws the same error on every rank before any communication.
#pragma once

#include <stdexcept>
#include <string>

namespace shardmm {

/// Base of every shardmm exception.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A parameter is out of range (negative size, block size 0, unknown axis, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// Operand shapes or layouts do not fit together.
class DimensionMismatch : public Error {
 public:
  using Error::Error;
};

/// The request is valid but this algorithm / configuration cannot run it.
class NotSupported : public Error {
 public:
  using Error::Error;
};

/// A malformed layout spec; `position()` is the index of the offending character.
class ParseError : public InvalidArgument {
 public:
  ParseError(const std::string& message, std::string text, std::size_t position);
  [[nodiscard]] std::size_t position() const noexcept { return position_; }
  [[nodiscard]] const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
  std::size_t position_;
};

/// An MPI call returned an error code.
class MpiError : public Error {
 public:
  MpiError(const std::string& call, int code);
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A rank could not get the memory it needs (allocation failure or budget exceeded).
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

/// File input/output failed (missing, truncated, malformed, unwritable).
class IoError : public Error {
 public:
  using Error::Error;
};

}  // namespace shardmm
