/* Lookups over the generated tables: astral ranges, script names, the Unicode version. */
#include "../base/internal.h"
#include "unicode.h"

const st_ucd_range *st_ucd_astral_find(uint32_t cp) {
    size_t lo = 0, hi = st_ucd_astral_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const st_ucd_range *r = &st_ucd_astral[mid];
        if (cp < r->first) hi = mid;
        else if (cp > r->last) lo = mid + 1;
        else return r;
    }
    return NULL;
}

const char *st_unicode_version(void) { return st_ucd_unicode_version; }

int st_script_of(uint32_t cp) {
    if (cp > 0x10FFFF) return -1;
    return st_ucd_script(cp);
}

const char *st_script_name(int script) {
    if (script < 0 || script >= st_ucd_script_count) return NULL;
    return st_ucd_script_names[script];
}

int st_script_count(void) { return st_ucd_script_count; }

/* Compare a user-given name with an upper-case alias, ignoring case and '_', '-', ' '. */
static int alias_cmp(const char *name, size_t len, const char *alias) {
    size_t i = 0;
    for (;;) {
        while (i < len && (name[i] == '_' || name[i] == '-' || name[i] == ' ')) i++;
        while (*alias == '_') alias++;
        int a = i < len ? (unsigned char)name[i] : 0;
        if (i < len && a == 0) return -1; /* an embedded NUL never matches */
        if (a >= 'a' && a <= 'z') a -= 32;
        int b = (unsigned char)*alias;
        if (a != b) return a < b ? -1 : 1;
        if (!a) return 0;
        i++;
        alias++;
    }
}

int st_script_from_name(const char *name, size_t len) {
    if (!name) return -1;
    /* the table is sorted by the alias text, but '_' breaks the order of a compare that
     * skips it, so search linearly: 338 short strings, called only when a handle is made */
    for (size_t k = 0; k < st_ucd_script_alias_count; k++)
        if (alias_cmp(name, len, st_ucd_script_aliases[k].name) == 0)
            return st_ucd_script_aliases[k].script;
    return -1;
}
