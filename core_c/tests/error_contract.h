// The st_error contract, checked on a call's report: a test that calls the public API with an
// st_error passes the call through CHECKED, which holds the report to what supertok.h
// promises: its status is the status the call returned, a call that succeeds leaves it
// cleared (unit ST_UNIT_NONE, offset, line and input 0, token 0xFFFFFFFF, empty message), and
// its message is NUL-terminated within the field. A broken report aborts at once, naming the
// test's file and line: every assertion a test makes about an error reads the report, so one
// that lies would make them pass or fail for the wrong reason. Header-only, so each test and
// fuzz driver stays one C file.
#ifndef ST_TEST_ERROR_CONTRACT_H
#define ST_TEST_ERROR_CONTRACT_H

#include <stdio.h>
#include <stdlib.h>

#include "supertok.h"

/* st, after checking the report *e of the call that returned it (called at file:line). */
static inline st_status checked_report(const st_error *e, st_status st, const char *file, int line) {
    int ok = e->status == (uint32_t)st;
    if (st == ST_OK)
        ok = ok && e->unit == ST_UNIT_NONE && e->offset == 0 && e->line == 0 && e->input == 0 &&
             e->token == 0xFFFFFFFFu && e->message[0] == 0;
    int terminated = 0;
    for (size_t k = 0; k < sizeof e->message; k++)
        if (e->message[k] == 0) {
            terminated = 1;
            break;
        }
    if (!ok || !terminated) {
        printf("FAIL %s:%d: st_error contract broken: returned %d, report status %u unit %u offset %llu%s\n", file,
               line, (int)st, e->status, e->unit, (unsigned long long)e->offset,
               terminated ? "" : ", message not NUL-terminated");
        fflush(stdout);
        abort();
    }
    return st;
}

/* CHECKED(err, st_encode(..., &err)): the call's status, its report err checked. */
#define CHECKED(err, call) checked_report(&(err), (call), __FILE__, __LINE__)

/* 1 when the report places the error at offset, counted in unit. */
static inline int error_at(const st_error *e, st_unit unit, uint64_t offset) {
    return e->unit == (uint32_t)unit && e->offset == offset;
}

/* The plain pre-tokenizer of an st_pattern (1-7), made at first use with the platform allocator
 * (so a test's counted allocators see only its encoding's own memory) and kept to the end. */
static inline const st_pretokenizer *plain_pretokenizer(int pattern) {
    static st_pretokenizer *made[8];
    st_error err;
    if (pattern < 1 || pattern > 7) abort();
    if (!made[pattern] && CHECKED(err, st_pretokenizer_new(pattern, 0, NULL, 0, NULL, &made[pattern], &err)) != ST_OK)
        abort();
    return made[pattern];
}

#endif
