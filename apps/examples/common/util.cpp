// The examples' helpers; the only example translation unit that includes CLI11 (a heavy header).
#include "common/util.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <sstream>

namespace shardmm::examples {

double hash_uniform(std::uint64_t seed, index_t i, index_t j) {
  // splitmix64 of (seed, i, j): well mixed, cheap, identical on every rank.
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL +
                    static_cast<std::uint64_t>(i) * 0xBF58476D1CE4E5B9ULL +
                    static_cast<std::uint64_t>(j) * 0x94D049BB133111EBULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

MeshShape parse_mesh(const std::string& text, int world) {
  int x = world, y = 1;
  if (!text.empty()) {
    const auto cut = text.find_first_of("xX");
    try {
      x = std::stoi(text.substr(0, cut));
      y = cut == std::string::npos ? 1 : std::stoi(text.substr(cut + 1));
    } catch (const std::exception&) {
      throw InvalidArgument("--mesh '" + text + "': expected DATAxMODEL, e.g. 2x2");
    }
  }
  if (x < 1 || y < 1 || x * y != world)
    throw InvalidArgument("--mesh " + std::to_string(x) + "x" + std::to_string(y) + " needs " +
                          std::to_string(x * y) + " ranks, not " + std::to_string(world));
  return MeshShape({"x", "y"}, {x, y});
}

struct CommandLine::App {
  App(const std::string& description, const std::string& name) : app(description, name) {}
  CLI::App app;
};

namespace {

// CLI11's validator for `check`, applied to an option of `app`.
void apply(CLI::Option* option, Check check) {
  if (check == Check::Positive) option->check(CLI::PositiveNumber);
  if (check == Check::NonNegative) option->check(CLI::NonNegativeNumber);
}

}  // namespace

CommandLine::CommandLine(const std::string& description, const std::string& name)
    : app_(std::make_unique<App>(description, name)) {}

CommandLine::~CommandLine() = default;

void CommandLine::option(const std::string& names, index_t& value, const std::string& help,
                         Check check) {
  apply(app_->app.add_option(names, value, help), check);
}

void CommandLine::option(const std::string& names, int& value, const std::string& help,
                         Check check) {
  apply(app_->app.add_option(names, value, help), check);
}

void CommandLine::option(const std::string& names, double& value, const std::string& help,
                         Check check) {
  apply(app_->app.add_option(names, value, help), check);
}

void CommandLine::option(const std::string& names, std::string& value, const std::string& help,
                         const std::vector<std::string>& choices) {
  CLI::Option* option = app_->app.add_option(names, value, help);
  if (!choices.empty()) option->check(CLI::IsMember(choices));
}

void CommandLine::flag(const std::string& names, bool& value, const std::string& help) {
  app_->app.add_flag(names, value, help);
}

bool CommandLine::given(const std::string& name) const { return app_->app.count(name) > 0; }

int run_example(int argc, char** argv, CommandLine& cli,
                const std::function<int(const Mesh&)>& body) {
  CLI::App& app = cli.app_->app;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  int rc = 0;
  {
    const Mesh world = Mesh::line(MPI_COMM_WORLD);
    bool parsed = false;
    try {
      app.parse(argc, argv);
      parsed = true;
    } catch (const CLI::ParseError& e) {
      std::ostringstream out, err;
      rc = app.exit(e, out, err);
      if (world.rank() == 0) {
        (void)std::fputs(out.str().c_str(), stdout);  // nothing better to do if these fail
        (void)std::fputs(err.str().c_str(), stderr);
      }
      rc = rc == 0 ? 0 : 2;
    }
    if (parsed) {
      try {
        rc = body(world);
      } catch (const std::exception& e) {
        if (world.rank() == 0)
          (void)std::fprintf(stderr, "%s: error: %s\n", app.get_name().c_str(), e.what());
        rc = 1;
      }
    }
  }  // meshes free their communicators before MPI_Finalize
  MPI_Finalize();
  return rc;
}

}  // namespace shardmm::examples
