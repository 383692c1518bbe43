// C API: errors, version, options and meshes (matrices and gemm: c_matrix.cpp).
#include "c_api/c_api.hpp"

#include <new>

#include "shardmm/layout.hpp"
#include "shardmm/options.hpp"
#include "shardmm/version.hpp"

namespace shardmm::c_api {

std::string& last_error() {
  thread_local std::string message;
  return message;
}

namespace {

int fail(int status, const char* what) noexcept {
  try {
    last_error() = what;
  } catch (...) {  // NOLINT(bugprone-empty-catch): on purpose
    // no memory for the message: keep the status
  }
  return status;
}

}  // namespace

int status_of_current_exception() noexcept {
  try {
    throw;
  } catch (const BufferTooSmall& e) {
    return fail(SHARDMM_ERROR_BUFFER_TOO_SMALL, e.what());
  } catch (const ParseError& e) {
    return fail(SHARDMM_ERROR_PARSE, e.what());
  } catch (const InvalidArgument& e) {
    return fail(SHARDMM_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const DimensionMismatch& e) {
    return fail(SHARDMM_ERROR_DIMENSION_MISMATCH, e.what());
  } catch (const NotSupported& e) {
    return fail(SHARDMM_ERROR_NOT_SUPPORTED, e.what());
  } catch (const MpiError& e) {
    return fail(SHARDMM_ERROR_MPI, e.what());
  } catch (const OutOfMemory& e) {
    return fail(SHARDMM_ERROR_OUT_OF_MEMORY, e.what());
  } catch (const std::bad_alloc&) {
    return fail(SHARDMM_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const IoError& e) {
    return fail(SHARDMM_ERROR_IO, e.what());
  } catch (const std::exception& e) {
    return fail(SHARDMM_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(SHARDMM_ERROR_INTERNAL, "unknown exception");
  }
}

}  // namespace shardmm::c_api

using shardmm::c_api::guarded;
using shardmm::c_api::require;

extern "C" {

const char* shardmm_version(void) { return shardmm::version_string; }

const char* shardmm_last_error(void) { return shardmm::c_api::last_error().c_str(); }

void shardmm_options_init(shardmm_options* o) {
  if (o == nullptr) return;
  const shardmm::Options d;
  *o = shardmm_options{};
  o->algorithm = SHARDMM_ALGORITHM_AUTO;
  o->panel = d.panel;
  o->block = d.block;
  o->stationary = SHARDMM_STATIONARY_AUTO;
  o->overlap = d.overlap ? 1 : 0;
  o->ring_axis = nullptr;
  o->ring_form = SHARDMM_RING_AUTO;
  o->bidirectional = d.bidirectional ? 1 : 0;
  o->grid_m = d.grid_m, o->grid_n = d.grid_n, o->grid_k = d.grid_k;
  o->memory_limit = d.memory_limit;
  o->trace = nullptr;
  o->wire = SHARDMM_WIRE_F32;
  o->stationary_chunk = d.stationary_chunk;
  o->ring_chunk = d.ring_chunk;
  o->strassen_step = SHARDMM_STRASSEN_STEP_AUTO;
  o->wait = SHARDMM_WAIT_AUTO;
}

int shardmm_mesh_create(MPI_Comm comm, const char* shape, shardmm_mesh* mesh) {
  return guarded([&] {
    require(mesh, "mesh (output)");
    *mesh = nullptr;
    auto parsed = shardmm::MeshShape::parse(require(shape, "shape"));
    *mesh = new shardmm_mesh_s{shardmm::Mesh(comm, std::move(parsed))};
  });
}

int shardmm_mesh_create_axes(MPI_Comm comm, int ndims, const char* const* names, const int* sizes,
                             int column_major, shardmm_mesh* mesh) {
  return guarded([&] {
    require(mesh, "mesh (output)");
    *mesh = nullptr;
    if (ndims < 1)
      throw shardmm::InvalidArgument("ndims must be >= 1, got " + std::to_string(ndims));
    require(names, "names");
    require(sizes, "sizes");
    std::vector<std::string> n;
    n.reserve(static_cast<std::size_t>(ndims));
    for (int a = 0; a < ndims; ++a) n.emplace_back(require(names[a], "an axis name"));
    const auto order =
        column_major ? shardmm::MeshShape::Order::ColMajor : shardmm::MeshShape::Order::RowMajor;
    shardmm::MeshShape shape(std::move(n), std::vector<int>(sizes, sizes + ndims), order);
    *mesh = new shardmm_mesh_s{shardmm::Mesh(comm, std::move(shape))};
  });
}

int shardmm_mesh_destroy(shardmm_mesh mesh) {
  return guarded([&] { delete mesh; });
}

int shardmm_mesh_info(shardmm_mesh mesh, int* rank, int* size, int* ndims, int* coords) {
  return guarded([&] {
    const shardmm::Mesh& m = require(mesh, "mesh")->mesh;
    if (rank) *rank = m.rank();
    if (size) *size = m.size();
    if (ndims) *ndims = m.shape().ndims();
    if (coords && m.active())
      for (int a = 0; a < m.shape().ndims(); ++a) coords[a] = m.coords()[a];
  });
}

int shardmm_local_shape(shardmm_mesh mesh, int64_t m, int64_t n, const char* layout,
                        int64_t* local_rows, int64_t* local_cols) {
  return guarded([&] {
    const shardmm::Mesh& me = require(mesh, "mesh")->mesh;
    const shardmm::Layout L(me.shape(), m, n, std::string_view(require(layout, "layout")));
    const bool active = me.active();
    if (local_rows) *local_rows = active ? L.local_rows(me.coords()) : 0;
    if (local_cols) *local_cols = active ? L.local_cols(me.coords()) : 0;
  });
}

}  // extern "C"
