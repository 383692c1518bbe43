// One Python exception class per shardmm error class (include/shardmm/error.hpp), and the
// translator that raises them. The library agrees its errors across ranks before it throws, so
// every rank raises the same class with the same text.
//
//   shardmm.Error(RuntimeError)                     shardmm::Error
//   shardmm.InvalidArgument(Error, ValueError)      shardmm::InvalidArgument
//   shardmm.ParseError(InvalidArgument)             shardmm::ParseError (.position, .text)
//   shardmm.DimensionMismatch(Error, ValueError)    shardmm::DimensionMismatch
//   shardmm.NotSupported(Error, NotImplementedError)  shardmm::NotSupported
//   shardmm.MpiError(Error)                         shardmm::MpiError (.code)
//   shardmm.OutOfMemory(Error, MemoryError)         shardmm::OutOfMemory
//   shardmm.IoError(Error, OSError)                 shardmm::IoError
#include <exception>
#include <string>

#include "bindings.hpp"

namespace shardmm::python {
namespace {

struct Classes {
  PyObject* error = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* parse_error = nullptr;
  PyObject* dimension_mismatch = nullptr;
  PyObject* not_supported = nullptr;
  PyObject* mpi_error = nullptr;
  PyObject* out_of_memory = nullptr;
  PyObject* io_error = nullptr;
};

// The classes live as long as the interpreter: their references are never released.
Classes& classes() {
  static Classes c;
  return c;
}

PyObject* new_class(py::module_& m, const char* name, const py::tuple& bases, const char* doc) {
  const std::string qualified = std::string("shardmm.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(cls));
  return cls;
}

py::handle builtin(PyObject* cls) { return {cls}; }

// Raises `cls(message)` with extra attributes set on the instance.
void raise(PyObject* cls, const char* message, const py::dict& attributes = py::dict()) {
  py::object instance = py::reinterpret_borrow<py::object>(cls)(message);
  for (const auto& [key, value] : attributes) py::setattr(instance, key, value);
  PyErr_SetObject(cls, instance.ptr());
}

// By value: pybind11's translator type is void (*)(std::exception_ptr).
void translate(std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
  const Classes& c = classes();
  try {
    if (p) std::rethrow_exception(p);
  } catch (const ParseError& e) {
    py::dict attributes;
    attributes["position"] = e.position();
    attributes["text"] = e.text();
    raise(c.parse_error, e.what(), attributes);
  } catch (const InvalidArgument& e) {
    raise(c.invalid_argument, e.what());
  } catch (const DimensionMismatch& e) {
    raise(c.dimension_mismatch, e.what());
  } catch (const NotSupported& e) {
    raise(c.not_supported, e.what());
  } catch (const MpiError& e) {
    py::dict attributes;
    attributes["code"] = e.code();
    raise(c.mpi_error, e.what(), attributes);
  } catch (const OutOfMemory& e) {
    raise(c.out_of_memory, e.what());
  } catch (const IoError& e) {
    raise(c.io_error, e.what());
  } catch (const Error& e) {
    raise(c.error, e.what());
  }
}

}  // namespace

void bind_errors(py::module_& m) {
  Classes& c = classes();
  c.error = new_class(m, "Error", py::make_tuple(builtin(PyExc_RuntimeError)),
                      "Base of every shardmm error.");
  const py::handle error(c.error);
  c.invalid_argument =
      new_class(m, "InvalidArgument", py::make_tuple(error, builtin(PyExc_ValueError)),
                "A parameter is out of range (size, block size, unknown axis, dtype, ...).");
  c.parse_error = new_class(m, "ParseError", py::make_tuple(py::handle(c.invalid_argument)),
                            "A malformed layout; .position is the offending character's index "
                            "in .text.");
  c.dimension_mismatch =
      new_class(m, "DimensionMismatch", py::make_tuple(error, builtin(PyExc_ValueError)),
                "Operand shapes or layouts do not fit together.");
  c.not_supported =
      new_class(m, "NotSupported", py::make_tuple(error, builtin(PyExc_NotImplementedError)),
                "Valid, but this algorithm or configuration cannot run it (the text says why).");
  c.mpi_error = new_class(m, "MpiError", py::make_tuple(error),
                          "An MPI call returned an error; .code is its error code.");
  c.out_of_memory =
      new_class(m, "OutOfMemory", py::make_tuple(error, builtin(PyExc_MemoryError)),
                "A rank could not get the memory it needs (allocation or memory limit).");
  c.io_error = new_class(m, "IoError", py::make_tuple(error, builtin(PyExc_OSError)),
                         "File input/output failed (missing, truncated, malformed, unwritable).");
  py::register_exception_translator(&translate);
}

}  // namespace shardmm::python
