/* SPDX-License-Identifier: BSL-1.0 */
/* redlock_n5.pml: redlock.pml with N = 5 nodes (quorum 3, two may fail), checked by
 * check_model --deep (redlock_n5.runs). */
#define N 5
#include "redlock.pml"
