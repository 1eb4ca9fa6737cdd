// Our pure-library helpers (strings, rate conversions) must answer exactly like Debian's
// libibverbs.so.1: loads both and compares every value of every enum range.
// Usage: tmnic_verbs_compare SYSTEM_LIBIBVERBS OUR_LIBIBVERBS
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  void* ref = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void* ours = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!ref || !ours) {
    std::printf("dlopen: %s\n", dlerror());
    return 2;
  }
  int bad = 0;
  typedef const char* (*StrFn)(int);
  for (const char* name :
       {"ibv_wc_status_str", "ibv_node_type_str", "ibv_port_state_str", "ibv_event_type_str"}) {
    auto a = reinterpret_cast<StrFn>(dlsym(ref, name));
    auto b = reinterpret_cast<StrFn>(dlsym(ours, name));
    for (int i = -2; i < 64; i++) {
      if (std::strcmp(a(i), b(i)) != 0) {
        std::printf("%s(%d): \"%s\" != \"%s\"\n", name, i, a(i), b(i));
        bad++;
      }
    }
  }
  typedef int (*IntFn)(int);
  struct {
    const char* name;
    int limit;
  } fns[] = {{"ibv_rate_to_mult", 64}, {"ibv_rate_to_mbps", 64}, {"mult_to_ibv_rate", 1024},
             {"mbps_to_ibv_rate", 1300000}};
  for (auto& f : fns) {
    auto a = reinterpret_cast<IntFn>(dlsym(ref, f.name));
    auto b = reinterpret_cast<IntFn>(dlsym(ours, f.name));
    for (int i = -2; i < f.limit; i++) {
      if (a(i) != b(i) && bad++ < 50) std::printf("%s(%d): %d != %d\n", f.name, i, a(i), b(i));
    }
  }
  std::printf(bad ? "FAIL: %d differences\n" : "OK: %d differences\n", bad);
  return bad ? 1 : 0;
}
