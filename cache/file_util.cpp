#include "wok/cache/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace wok::cache {

namespace {

std::string parent_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Closes a descriptor on every path out of a function.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

absl::Status write_all(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_status("write", path, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status errno_status(std::string_view what, const std::string& path, int err) {
  std::string msg = std::string(what) + " " + path + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(msg);
    case EEXIST:
      return absl::AlreadyExistsError(msg);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(msg);
    case EISDIR:
    case ENOTDIR:
      return absl::FailedPreconditionError(msg);
    default:
      return absl::UnknownError(msg);
  }
}

absl::StatusOr<std::string> read_file(const std::string& path, uint64_t max_bytes) {
  Fd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (f.fd < 0) return errno_status("open", path, errno);
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return errno_status("stat", path, errno);
  if (!S_ISREG(st.st_mode)) return absl::FailedPreconditionError(path + " is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return absl::FailedPreconditionError(path + " is " + std::to_string(st.st_size) + " bytes, more than any entry");
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t have = 0;
  while (have < out.size()) {
    ssize_t r = ::read(f.fd, out.data() + have, out.size() - have);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status("read", path, errno);
    }
    if (r == 0) break;  // shrank while we read: the decoder sees a short file
    have += static_cast<size_t>(r);
  }
  out.resize(have);
  return out;
}

absl::StatusOr<std::string> write_temp_file(const std::string& tmp_dir, const std::string& final_name,
                                            std::string_view bytes, const WriteHook& hook) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = tmp_dir + "/" + base_of(final_name) + "." + std::to_string(::getpid()) + "." +
                    std::to_string(counter.fetch_add(1)) + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status("create", tmp, errno);
  auto fail = [&](absl::Status st) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return st;
  };
  size_t half = bytes.size() / 2;
  if (absl::Status st = write_all(fd, bytes.data(), half, tmp); !st.ok()) return fail(st);
  if (hook) hook("partial");
  if (absl::Status st = write_all(fd, bytes.data() + half, bytes.size() - half, tmp); !st.ok()) return fail(st);
  if (::fsync(fd) != 0) return fail(errno_status("fsync", tmp, errno));
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return errno_status("close", tmp, err);
  }
  return tmp;
}

absl::Status publish_file(const std::string& tmp_path, const std::string& path, bool sync_directory) {
  if (::rename(tmp_path.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_path.c_str());
    return errno_status("rename to", path, err);
  }
  if (!sync_directory) return absl::OkStatus();
  // The rename is durable once the directory is; failing here loses nothing
  // a reader could see, so it is not an error.
  Fd dir(::open(parent_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd >= 0) ::fsync(dir.fd);
  return absl::OkStatus();
}

absl::Status write_file_atomic(const std::string& tmp_dir, const std::string& path, std::string_view bytes,
                               const WriteHook& hook, bool sync_directory) {
  absl::StatusOr<std::string> tmp = write_temp_file(tmp_dir, path, bytes, hook);
  if (!tmp.ok()) return tmp.status();
  if (hook) hook("before-rename");
  return publish_file(*tmp, path, sync_directory);
}

absl::Status make_directories(const std::string& path, mode_t mode) {
  if (path.empty()) return absl::InvalidArgumentError("empty directory name");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(path + " exists and is not a directory");
  }
  std::string parent = parent_of(path);
  if (parent != path && parent != "/" && parent != ".")
    if (absl::Status s = make_directories(parent, mode); !s.ok()) return s;
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return errno_status("mkdir", path, errno);
  return absl::OkStatus();
}

absl::Status remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? absl::OkStatus() : errno_status("stat", path, errno);
  if (S_ISDIR(st.st_mode)) {
    absl::StatusOr<std::vector<DirEntry>> entries = list_directory(path);
    if (!entries.ok()) return entries.status();
    for (const DirEntry& e : *entries)
      if (absl::Status s = remove_tree(e.path); !s.ok()) return s;
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return errno_status("rmdir", path, errno);
  } else if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return errno_status("unlink", path, errno);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DirEntry>> list_directory(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return errno_status("open directory", dir, errno);
  std::vector<DirEntry> out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    DirEntry de;
    de.name = name;
    de.path = dir + "/" + name;
    struct stat st;
    if (::lstat(de.path.c_str(), &st) != 0) continue;  // removed meanwhile
    de.regular = S_ISREG(st.st_mode);
    de.size = static_cast<uint64_t>(st.st_size);
    de.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    out.push_back(std::move(de));
  }
  ::closedir(d);
  return out;
}

absl::Status touch_file(const std::string& path) {
  if (::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) != 0) return errno_status("touch", path, errno);
  return absl::OkStatus();
}

absl::StatusOr<FileLock> FileLock::acquire(const std::string& path, int timeout_ms, bool* waited) {
  *waited = false;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status("open lock", path, errno);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::microseconds(200);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int err = errno;
      ::close(fd);
      return errno_status("lock", path, err);
    }
    *waited = true;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return absl::DeadlineExceededError("waited " + std::to_string(timeout_ms) + " ms for " + path);
    }
    // Polled rather than blocking so that a wedged holder cannot hang us.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10'000));
  }
  return FileLock(fd);
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace wok::cache
