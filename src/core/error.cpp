// Exception constructors that need no MPI (MpiError's lives in comm/mpi_check.cpp).
#include "shardmm/error.hpp"

namespace shardmm {

ParseError::ParseError(const std::string& message, std::string text, std::size_t position)
    : InvalidArgument(message + "\n  " + text + "\n  " + std::string(position, ' ') + "^"),
      text_(std::move(text)),
      position_(position) {}

}  // namespace shardmm
