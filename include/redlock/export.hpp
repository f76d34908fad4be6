// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_EXPORT_HPP
#define REDLOCK_EXPORT_HPP

/// Marks what the shared library (libredlock.so, built with -DBUILD_SHARED_LIBS=ON) exports: the
/// public API of these headers. The library is compiled with hidden visibility, so its internals
/// (src/) stay out of its dynamic symbol table and may change without breaking its users. GCC and
/// Clang, the compilers we build with; a static library is unaffected.
#define REDLOCK_API __attribute__((visibility("default")))

#endif
