// Device enumeration and open/close. There is no kernel: the devices are the backends returned
// by tmnic::open_backends() (the simulation, or the fake backend in tests), enumerated once.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#include "device.hpp"
#include "front.hpp"
#include "provider.hpp"

namespace {

std::mutex g_mu;
std::vector<tmnic_ibdev*>* g_devs = nullptr;  // never freed: see tmnic_ibdev

const std::vector<tmnic_ibdev*>& devices() {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_devs) return *g_devs;
  g_devs = new std::vector<tmnic_ibdev*>();
  std::vector<std::shared_ptr<tmnic::Backend>> bes;
  try {
    bes = tmnic::open_backends();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tmnic: cannot open the backend: %s\n", e.what());
  }
  for (auto& be : bes) {
    auto* d = new tmnic_ibdev();
    d->be = be;
    d->index = int(g_devs->size());
    d->dev.node_type = IBV_NODE_CA;
    d->dev.transport_type = IBV_TRANSPORT_IB;  // RoCE devices report the IB transport
    std::snprintf(d->dev.name, sizeof(d->dev.name), "%s", be->name().c_str());
    std::snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs%d", d->index);
    std::snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "/sys/class/infiniband_verbs/uverbs%d",
                  d->index);
    // Conventional paths; nothing exists there (sysfs reads through them simply fail).
    std::snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "/sys/class/infiniband/%s",
                  d->dev.name);
    g_devs->push_back(d);
  }
  return *g_devs;
}

}  // namespace

TMNIC_EXPORT struct ibv_device** ibv_get_device_list(int* num_devices) {
  const auto& devs = devices();
  auto** list = static_cast<struct ibv_device**>(calloc(devs.size() + 1, sizeof(void*)));
  if (!list) {
    errno = ENOMEM;
    return nullptr;
  }
  for (size_t i = 0; i < devs.size(); i++) list[i] = &devs[i]->dev;
  if (num_devices) *num_devices = int(devs.size());
  return list;
}

TMNIC_EXPORT void ibv_free_device_list(struct ibv_device** list) { free(list); }

TMNIC_EXPORT const char* ibv_get_device_name(struct ibv_device* device) { return device->name; }

TMNIC_EXPORT int ibv_get_device_index(struct ibv_device* device) {
  return to_ibdev(device)->index;
}

TMNIC_EXPORT __be64 ibv_get_device_guid(struct ibv_device* device) {
  return tmnic::mac_to_guid(tmnic::read_mac(to_ibdev(device)->be.get()));
}

TMNIC_EXPORT struct ibv_context* ibv_open_device(struct ibv_device* device) {
  return tmnic::alloc_context(device, to_ibdev(device)->be);
}

TMNIC_EXPORT int ibv_close_device(struct ibv_context* context) {
  return tmnic::free_context(context);
}

// Historical sysfs helpers (IBVERBS_1.0). They read real files, so they behave as in libibverbs
// where files exist, and fail cleanly for the non-existent paths of tmnic devices.
TMNIC_EXPORT const char* ibv_get_sysfs_path(void) {
  const char* env = getenv("SYSFS_PATH");
  return env && *env ? env : "/sys";
}

TMNIC_EXPORT int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size) {
  char path[512];
  std::snprintf(path, sizeof(path), "%s/%s", dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t len = read(fd, buf, size);
  close(fd);
  if (len <= 0) return -1;
  if (size_t(len) < size) buf[len] = '\0';
  if (len > 0 && buf[len - 1] == '\n') buf[--len] = '\0';
  return int(len);
}
