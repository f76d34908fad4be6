// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDLOCK_HPP
#define REDLOCK_REDLOCK_HPP

// Everything a lock user needs; the redis/ and resp/ headers are the layers below.
#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/diagnostics.hpp>
#include <redlock/error.hpp>
#include <redlock/fenced_set.hpp>
#include <redlock/inspection.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>
#include <redlock/metrics.hpp>
#include <redlock/owner_id.hpp>
#include <redlock/with_lock.hpp>

#endif
