/* Lookups of a code point's class and script in the Unicode tables (unicode_tables.h). */
#ifndef ST_UNICODE_H
#define ST_UNICODE_H

#include "unicode_tables.h"

/* Lookup for code points above U+FFFF (binary search over st_ucd_astral). */
const st_ucd_range *st_ucd_astral_find(uint32_t cp);

static inline uint8_t st_ucd_class(uint32_t cp) {
    if (cp < 0x10000) return st_ucd_bmp_class[cp];
    const st_ucd_range *r = st_ucd_astral_find(cp);
    return r ? r->cls : 0;
}

static inline uint8_t st_ucd_script(uint32_t cp) {
    if (cp < 0x10000) return st_ucd_bmp_script[cp];
    const st_ucd_range *r = st_ucd_astral_find(cp);
    return r ? r->script : ST_SCRIPT_UNKNOWN;
}

#endif
