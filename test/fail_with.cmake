# SPDX-License-Identifier: BSL-1.0
# A test that cannot run here fails and says why, instead of vanishing from the count.
#   cmake -DMESSAGE=... -P fail_with.cmake
message(FATAL_ERROR "${MESSAGE}")
