// The Open MPI types and handles wok declares itself
// (runtime/dist/mpi_loader.h), against Open MPI's own header where it is
// installed, and the loader's errors.
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>

#include "wok/runtime/dist/mpi_loader.h"

#if defined(WOK_TEST_HAVE_MPI_H) && __has_include(<mpi.h>)
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#define WOK_CHECKED_AGAINST_MPI_H 1

namespace mpi = wok::dist::mpi;
static_assert(sizeof(mpi::Status) == sizeof(MPI_Status));
static_assert(offsetof(mpi::Status, source) == offsetof(MPI_Status, MPI_SOURCE));
static_assert(offsetof(mpi::Status, tag) == offsetof(MPI_Status, MPI_TAG));
static_assert(offsetof(mpi::Status, error) == offsetof(MPI_Status, MPI_ERROR));
static_assert(mpi::kSuccess == MPI_SUCCESS);
static_assert(mpi::kThreadSerialized == MPI_THREAD_SERIALIZED);
static_assert(mpi::kUndefined == MPI_UNDEFINED);
static_assert(mpi::kMaxErrorString >= MPI_MAX_ERROR_STRING);
static_assert(sizeof(mpi::Comm) == sizeof(MPI_Comm) && sizeof(mpi::Request) == sizeof(MPI_Request));
#endif

namespace {

bool have_libmpi() {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"})
    if (std::filesystem::exists(std::string(dir) + "/libmpi.so.40")) return true;
  return false;
}

TEST(DistMpiLoader, LoadsOpenMpiWithEveryFunctionAndHandle) {
  if (!have_libmpi()) GTEST_SKIP() << "Open MPI's libmpi.so.40 is not installed";
  absl::StatusOr<const wok::dist::Mpi*> m = wok::dist::load_mpi_library("");
  ASSERT_TRUE(m.ok()) << m.status();
  const wok::dist::Mpi& mpi = **m;
  EXPECT_NE(mpi.h.comm_world, nullptr);
  EXPECT_NE(mpi.h.float32, nullptr);
  EXPECT_NE(mpi.h.lor, nullptr);
  EXPECT_NE(mpi.api.Iallreduce, nullptr);
  EXPECT_NE(mpi.version.find("Open MPI"), std::string::npos) << mpi.version;
#ifdef WOK_CHECKED_AGAINST_MPI_H
  // The handles resolve to the globals Open MPI's header names.
  EXPECT_EQ(static_cast<void*>(mpi.h.comm_world), static_cast<void*>(MPI_COMM_WORLD));
  EXPECT_EQ(static_cast<void*>(mpi.h.float64), static_cast<void*>(MPI_DOUBLE));
#endif
}

TEST(DistMpiLoader, AMissingLibraryIsNamedWithWhatToInstall) {
  absl::StatusOr<const wok::dist::Mpi*> m = wok::dist::load_mpi_library("/nonexistent/libmpi.so.40");
  ASSERT_FALSE(m.ok());
  std::string text(m.status().message());
  EXPECT_NE(text.find("/nonexistent/libmpi.so.40"), std::string::npos) << text;
  EXPECT_NE(text.find("WOK_MPI_PATH"), std::string::npos) << text;
  EXPECT_NE(text.find("openmpi"), std::string::npos) << text;
}

TEST(DistMpiLoader, ALibraryThatIsNotOpenMpiIsRefusedNamingTheMissingSymbols) {
  // libm has none of MPI's functions.
  absl::StatusOr<const wok::dist::Mpi*> m = wok::dist::load_mpi_library("libm.so.6");
  ASSERT_FALSE(m.ok());
  std::string text(m.status().message());
  EXPECT_NE(text.find("MPI_Init_thread"), std::string::npos) << text;
  EXPECT_NE(text.find("ompi_mpi_comm_world"), std::string::npos) << text;
}

}  // namespace
