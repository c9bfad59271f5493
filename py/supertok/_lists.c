/* supertok._lists: Python lists of token ids from the core's uint32 output.
 *
 * Building the list is a large share of encode() from Python: cffi's ffi.unpack makes a new
 * int object for every id, about 30 ns each, a third of the time of encoding English with
 * o200k. Here the int object of each id is made once per process and shared by every list
 * (an id list of a million tokens costs a few milliseconds). The cache grows to the largest id
 * seen, at most ST_LISTS_MAX_CACHED entries; larger ids get a new int each time.
 *
 * Optional, like the native backend: where it is not built, the backends use ffi.unpack. It
 * relies on the GIL to guard the cache (the module declares no free-threading support). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define ST_LISTS_MAX_CACHED (1u << 22)

static PyObject **cache;
static size_t cache_len;

static int grow_cache(size_t need) {
    size_t len = cache_len ? cache_len : 1024;
    while (len < need) len *= 2;
    if (len > ST_LISTS_MAX_CACHED) len = ST_LISTS_MAX_CACHED;
    PyObject **c = (PyObject **)PyMem_Realloc(cache, len * sizeof *c);
    if (!c) return -1;
    memset(c + cache_len, 0, (len - cache_len) * sizeof *c);
    cache = c;
    cache_len = len;
    return 0;
}

static PyObject *id_object(uint32_t id) {
    if (id >= cache_len) {
        if (id >= ST_LISTS_MAX_CACHED) return PyLong_FromUnsignedLong(id);
        if (grow_cache((size_t)id + 1) < 0) return PyErr_NoMemory();
    }
    PyObject *o = cache[id];
    if (!o) {
        o = PyLong_FromUnsignedLong(id);
        if (!o) return NULL;
        cache[id] = o; /* the cache keeps one reference for the life of the process */
    }
    Py_INCREF(o);
    return o;
}

/* A new list of the n uint32 values at p (native byte order). */
static PyObject *list_of(const unsigned char *p, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t id;
        memcpy(&id, p + 4 * (size_t)i, 4);
        PyObject *o = id_object(id);
        if (!o) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, o);
    }
    return list;
}

/* ids_to_lists(ids, counts, n) -> n lists: the uint32 values of ids (native byte order) taken
 * counts[0], counts[1], ... at a time, counts being n size_t values (native): encode_batch's
 * lists, one per text, made in one call with no flat list and no slicing in between. */
static PyObject *ids_to_lists(PyObject *self, PyObject *args) {
    Py_buffer ids, counts;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*n", &ids, &counts, &n)) return NULL;
    PyObject *out = NULL;
    if (n < 0 || (size_t)n > (size_t)counts.len / sizeof(size_t)) {
        PyErr_Format(PyExc_ValueError, "ids_to_lists: %zd counts do not fit a buffer of %zd bytes", n, counts.len);
        goto done;
    }
    out = PyList_New(n);
    if (!out) goto done;
    size_t at = 0, cap = (size_t)ids.len / 4;
    for (Py_ssize_t k = 0; k < n; k++) {
        size_t c;
        memcpy(&c, (const unsigned char *)counts.buf + k * sizeof(size_t), sizeof c);
        if (c > cap - at) {
            PyErr_Format(PyExc_ValueError, "ids_to_lists: the counts exceed the %zu ids", cap);
            Py_CLEAR(out);
            goto done;
        }
        PyObject *list = list_of((const unsigned char *)ids.buf + 4 * at, (Py_ssize_t)c);
        if (!list) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, k, list);
        at += c;
    }
done:
    PyBuffer_Release(&ids);
    PyBuffer_Release(&counts);
    return out;
}

/* ids_to_list(buffer, n) -> list of the first n uint32 values (native byte order) in buffer */
static PyObject *ids_to_list(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*n", &view, &n)) return NULL;
    if (n < 0 || (size_t)n > (size_t)view.len / 4) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "ids_to_list: %zd ids do not fit a buffer of %zd bytes", n, view.len);
        return NULL;
    }
    PyObject *list = list_of((const unsigned char *)view.buf, n);
    PyBuffer_Release(&view);
    return list;
}

/* utf8_view(str) -> a read-only memoryview of the UTF-8 form CPython keeps with the str: made on
 * the first request and cached in the object (PyUnicode_AsUTF8AndSize, as every extension that
 * reads a str as UTF-8 does, tiktoken's among them), an ASCII str's being its own data. So a text
 * encoded again is not converted again, and an ASCII one never is. The view does not keep the
 * str alive: the caller holds the str for as long as it uses the view. UnicodeEncodeError for a
 * str with lone surrogates (the caller then repairs them as tiktoken does). */
static PyObject *utf8_view(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "utf8_view: a str, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!p) return NULL;
    return PyMemoryView_FromMemory((char *)p, n, PyBUF_READ);
}

static PyMethodDef methods[] = {
    {"utf8_view", utf8_view, METH_O, "utf8_view(str) -> memoryview of the str's cached UTF-8 form"},
    {"ids_to_list", ids_to_list, METH_VARARGS, "ids_to_list(buffer, n) -> list of the first n uint32 values"},
    {"ids_to_lists", ids_to_lists, METH_VARARGS,
     "ids_to_lists(ids, counts, n) -> n lists of the uint32 ids, counts[k] (size_t values) in list k"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "supertok._lists", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__lists(void) { return PyModule_Create(&module); }
