/* The work counter of test builds (work_counter.h); nothing in other builds. */
#include "work_counter.h"

#ifdef ST_TEST_COUNTERS
_Thread_local uint64_t st__test_work;

uint64_t st__test_work_take(void) {
    uint64_t n = st__test_work;
    st__test_work = 0;
    return n;
}
#else
typedef int st__no_test_counters; /* ISO C wants a declaration in every translation unit */
#endif
