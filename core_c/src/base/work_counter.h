/* Work counters for the tests (no test depends on the machine's speed).
 *
 * ST_COUNT(n) adds n to a count of the core's steps: characters the pre-tokenizer examines,
 * steps of the short merge loop, iterations of the heap merge, probes of the backtracking
 * encoder. The tests read it around one call to check that the work grows linearly with the
 * input, instead of timing the call.
 *
 * Only in builds compiled with -DST_TEST_COUNTERS (core_c/tests/run.sh builds the files that
 * use ST_COUNT a second time with it). Everywhere else - the shipped library, the Python
 * extension, the wasm module - ST_COUNT expands to nothing and no counter exists. In a test
 * build the count is thread-local, so it is the work of the calls made by one thread. */
#ifndef ST_WORK_COUNTER_H
#define ST_WORK_COUNTER_H

#include "platform.h"

#ifdef ST_TEST_COUNTERS
extern _Thread_local uint64_t st__test_work;
#define ST_COUNT(n) ((void)(st__test_work += (uint64_t)(n)))
/* The calling thread's count since the last call, and reset it to 0. */
uint64_t st__test_work_take(void);
#else
#define ST_COUNT(n) ((void)0)
#endif

#endif
