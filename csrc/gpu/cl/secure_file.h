// The file rules shared by the compiled-program cache (program_cache.cc) and the serialized
// GPU models (gpu/serialization.cc). Both load what they read into the driver and run it, so:
//  * a directory is used only when it is a directory owned by the effective user and not
//    writable by group or others (anyone who could write there could plant an entry); created
//    directories are 0700;
//  * a file is read only when lstat() and, after open(O_NOFOLLOW | O_NONBLOCK), fstat() say it is
//    a regular file owned by us, not group/world-writable, within the size bound;
//  * files are written to "<path>.tmp.<pid>.<random>" (O_EXCL, 0600), closed, then rename()d
//    over the final name: concurrent readers see no file or a whole one, never a torn write.
#pragma once
#include <cstddef>
#include <string>

namespace tflite_gpu {
namespace cl {

// Creates `dir` and its missing parents with mode 0700. False (errno set) when it cannot.
bool MakePrivateDirs(const std::string& dir);

// "" when `dir` may be trusted; else why not (for a warning).
std::string UntrustedDirReason(const std::string& dir);

enum class FileRead { kOk, kMissing, kRejected };
// Reads the whole file under the rules above. kMissing: no such file (a plain miss);
// kRejected: something is there but may not or could not be used, *why says what.
FileRead ReadTrustedFile(const std::string& path, size_t max_bytes, std::string* out, std::string* why);

// Writes `image` to `path` atomically (see above). False with *why on any failure (nothing is left behind
// then). First removes temporaries of `path` that a killed writer left (ours, untouched for an hour).
bool WriteFileAtomically(const std::string& path, const std::string& image, std::string* why);

}  // namespace cl
}  // namespace tflite_gpu
