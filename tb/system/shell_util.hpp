// Helpers of the system tests that run other programs (the capture tool, tshark, Debian's
// pingpong tools): a shell command's status and output, a file's bytes, a string's lines, and a
// scratch directory per test process.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sys {

// Runs `cmd` through /bin/sh, returns its exit status (-1 if it did not exit) and its stdout.
inline int run(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return -1;
  char b[4096];
  size_t n;
  while ((n = fread(b, 1, sizeof b, f)) > 0) out->append(b, n);
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The non-empty lines of `s`.
inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) v.push_back(l);
  return v;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A scratch directory /tmp/<prefix>XXXXXX, removed at the end unless the test failed (then it is
// kept for a look).
class Tmp {
 public:
  explicit Tmp(const std::string& prefix) {
    std::string t = "/tmp/" + prefix + "XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back('\0');
    dir_ = mkdtemp(buf.data()) ? std::string(buf.data()) : "/tmp";
  }
  ~Tmp() {
    if (!::testing::Test::HasFailure() && dir_ != "/tmp") std::system(("rm -rf " + dir_).c_str());
  }
  Tmp(const Tmp&) = delete;
  Tmp& operator=(const Tmp&) = delete;
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

}  // namespace sys
