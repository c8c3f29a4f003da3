#ifndef TETHER_CSYSTEMD_SHIM_H
#define TETHER_CSYSTEMD_SHIM_H
// libsystemd from Debian's libsystemd-dev: journald native protocol and sd_notify.
#include <systemd/sd-journal.h>
#include <systemd/sd-daemon.h>
#endif
