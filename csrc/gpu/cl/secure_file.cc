// secure_file.cc: see secure_file.h.
#include "gpu/cl/secure_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>
#include <random>

namespace tflite_gpu {
namespace cl {
namespace {

std::string ModeString(mode_t m) {
  char s[8];
  std::snprintf(s, sizeof(s), "%04o", unsigned(m & 07777));
  return s;
}

// Why a stat result may not be read ("" if it may).
std::string FileProblem(const struct stat& st, size_t max_bytes) {
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (S_ISDIR(st.st_mode)) return "it is a directory, not a file";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_uid != geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by the current user (uid " +
           std::to_string(geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string("it is writable by ") + ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " +
           ModeString(st.st_mode) + ")";
  if (st.st_size < 0 || uint64_t(st.st_size) > max_bytes)
    return "its size (" + std::to_string(int64_t(st.st_size)) + " bytes) is beyond the limit of " +
           std::to_string(max_bytes) + " bytes";
  return "";
}

// A writer killed between creating its temporary and the rename leaves the temporary behind.
// Before writing `path`, temporaries of that same name owned by us and untouched for an hour are
// removed: a live writer renames within seconds, and the age keeps a slow writer's file (another
// host on a shared directory) safe. The directory is ours and private (UntrustedDirReason).
constexpr time_t kStaleTemporarySeconds = 3600;

void RemoveStaleTemporaries(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string prefix = path.substr(slash == std::string::npos ? 0 : slash + 1) + ".tmp.";
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  const time_t now = std::time(nullptr);
  while (const dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    const std::string f = dir + "/" + e->d_name;
    struct stat st;
    if (lstat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
    if (now - st.st_mtime >= kStaleTemporarySeconds) unlink(f.c_str());
  }
  closedir(d);
}

}  // namespace

bool MakePrivateDirs(const std::string& dir) {
  if (dir.empty()) {
    errno = ENOENT;
    return false;
  }
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      std::string partial = dir.substr(0, i);
      if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return false;
  }
  return true;
}

std::string UntrustedDirReason(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) {
    if (stat(dir.c_str(), &st) != 0) return "it is a dangling symbolic link";
  }
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by the current user (uid " +
           std::to_string(geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string("it is writable by ") + ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " +
           ModeString(st.st_mode) + "); chmod go-w it";
  return "";
}

FileRead ReadTrustedFile(const std::string& path, size_t max_bytes, std::string* out, std::string* why) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return FileRead::kMissing;
    *why = std::string("cannot stat it: ") + std::strerror(errno);
    return FileRead::kRejected;
  }
  *why = FileProblem(st, max_bytes);
  if (!why->empty()) return FileRead::kRejected;
  // O_NOFOLLOW + O_NONBLOCK: a link or fifo swapped in after the lstat neither redirects nor blocks us.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return FileRead::kMissing;
    *why = std::string("cannot open it: ") + std::strerror(errno);
    return FileRead::kRejected;
  }
  if (fstat(fd, &st) != 0) {
    *why = std::string("cannot stat it: ") + std::strerror(errno);
  } else {
    *why = FileProblem(st, max_bytes);
  }
  if (why->empty()) {
    try {
      out->resize(size_t(st.st_size));
    } catch (const std::bad_alloc&) {
      *why = "out of memory reading it";
    }
  }
  size_t got = 0;
  while (why->empty() && got < out->size()) {
    ssize_t n = read(fd, &(*out)[got], out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) *why = std::string("read error: ") + std::strerror(errno);
    else if (n == 0) *why = "it shrank while being read";
    else got += size_t(n);
  }
  close(fd);
  return why->empty() ? FileRead::kOk : FileRead::kRejected;
}

bool WriteFileAtomically(const std::string& path, const std::string& image, std::string* why) {
  static std::atomic<unsigned> counter{0};
  static const uint64_t salt = [] {
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".tmp.%ld.%016llx", long(getpid()),
                static_cast<unsigned long long>(salt ^ (uint64_t(counter++) * 0x9e3779b97f4a7c15ull)));
  std::string tmp = path + suffix;
  RemoveStaleTemporaries(path);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *why = std::string("cannot create a file there: ") + std::strerror(errno);
    return false;
  }
  why->clear();
  size_t put = 0;
  while (why->empty() && put < image.size()) {
    ssize_t n = write(fd, image.data() + put, image.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) *why = std::string("write error: ") + std::strerror(errno);
    else if (n == 0) *why = "write error: no progress";
    else put += size_t(n);
  }
  if (close(fd) != 0 && why->empty()) *why = std::string("close error: ") + std::strerror(errno);
  if (why->empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
    *why = std::string("rename failed: ") + std::strerror(errno);
  if (!why->empty()) unlink(tmp.c_str());
  return why->empty();
}

}  // namespace cl
}  // namespace tflite_gpu
