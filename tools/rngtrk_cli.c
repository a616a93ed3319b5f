/*
 * rngtrk — the command-line tool.  Uses only the public C API.
 *
 *   rngtrk inspect FILE   print a checkpoint as one line of canonical JSON
 *   rngtrk version        print the library's version
 *
 * Canonical JSON is what Python's json.dumps(obj, ensure_ascii=False) gives:
 * {"format_version": N, "default": {"seed": S, "offset": O},
 *  "states": [{"name": "...", "seed": S, "offset": O}, ...]}
 * keys in that order, states in stored order.  Every binding prints the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngtrk.h"

/* Header fields needed before reading the whole file (docs/checkpoint-format.md). */
#define HEADER_PREFIX_BYTES 20 /* magic 8, format_version 4, total_length 8 */

static int usage(FILE *to) {
    fprintf(to,
            "usage: rngtrk inspect FILE   print a checkpoint as canonical JSON\n"
            "       rngtrk version        print the library version\n");
    return to == stderr ? 2 : 0;
}

static uint64_t le_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

static uint32_t le_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Writes `s` as a JSON string the way Python's json.dumps(ensure_ascii=False) does. */
static void print_json_string(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        switch (*p) {
            case '"': fputs("\\\"", stdout); break;
            case '\\': fputs("\\\\", stdout); break;
            case '\n': fputs("\\n", stdout); break;
            case '\r': fputs("\\r", stdout); break;
            case '\t': fputs("\\t", stdout); break;
            case '\b': fputs("\\b", stdout); break;
            case '\f': fputs("\\f", stdout); break;
            default:
                if (*p < 0x20) printf("\\u%04x", *p);
                else putchar(*p);
        }
    }
    putchar('"');
}

static int fail_with(const char *path, const char *what) {
    fprintf(stderr, "rngtrk: %s: %s\n", path, what);
    return 1;
}

/* Reads the checkpoint at `path` into a malloc'd buffer.  The header is read
 * first, so a file that is not a checkpoint, or whose declared length does
 * not match its size, is refused without reading (or allocating) the rest. */
static int read_checkpoint(const char *path, unsigned char **out, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return fail_with(path, strerror(errno));
    unsigned char head[HEADER_PREFIX_BYTES];
    const size_t got = fread(head, 1, sizeof head, f);
    if (got < sizeof head || memcmp(head, "RNGTRKCK", 8) != 0) {
        fclose(f);
        return fail_with(path, got < 8 || memcmp(head, "RNGTRKCK", 8) != 0
                                   ? "not an rngtrk checkpoint (bad magic)"
                                   : "truncated checkpoint header");
    }
    if (le_u32(head + 8) != 1) {
        fclose(f);
        return fail_with(path, "unsupported checkpoint format version");
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return fail_with(path, "cannot seek (not a regular file?)");
    }
    const long size = ftell(f);
    const uint64_t declared = le_u64(head + 12);
    if (size < 0 || (uint64_t)size != declared) {
        fclose(f);
        return fail_with(path, (uint64_t)size < declared ? "truncated checkpoint"
                                                         : "trailing bytes after the checkpoint");
    }
    unsigned char *buf = malloc((size_t)size);
    if (buf == NULL) {
        fclose(f);
        return fail_with(path, "out of memory");
    }
    rewind(f);
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return fail_with(path, "read error");
    }
    fclose(f);
    *out = buf;
    *out_len = (size_t)size;
    return 0;
}

static int library_failure(const char *path, rngtrk_status status) {
    fprintf(stderr, "rngtrk: %s: %s: %s\n", path, rngtrk_status_string(status), rngtrk_last_error());
    return 1;
}

static int inspect(const char *path) {
    unsigned char *bytes = NULL;
    size_t len = 0;
    if (read_checkpoint(path, &bytes, &len) != 0) return 1;
    rngtrk_tracker *t = NULL;
    rngtrk_status st = rngtrk_tracker_new(&t);
    if (st == RNGTRK_OK) st = rngtrk_tracker_load(t, bytes, len);
    free(bytes);
    if (st != RNGTRK_OK) {
        rngtrk_tracker_free(t);
        return library_failure(path, st);
    }
    rngtrk_philox_state d;
    size_t count = 0;
    rngtrk_tracker_get_default(t, &d);
    rngtrk_tracker_count(t, &count);
    printf("{\"format_version\": 1, \"default\": {\"seed\": %" PRIu64 ", \"offset\": %" PRIu64
           "}, \"states\": [",
           d.seed, d.offset);
    for (size_t i = 0; i < count; ++i) {
        const char *name = NULL;
        rngtrk_philox_state s;
        rngtrk_tracker_name_at(t, i, &name);
        rngtrk_tracker_get_state(t, name, &s);
        printf("%s{\"name\": ", i ? ", " : "");
        print_json_string(name);
        printf(", \"seed\": %" PRIu64 ", \"offset\": %" PRIu64 "}", s.seed, s.offset);
    }
    printf("]}\n");
    rngtrk_tracker_free(t);
    return ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", rngtrk_version_string());
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return usage(stdout);
    if (argc == 3 && strcmp(argv[1], "inspect") == 0) return inspect(argv[2]);
    return usage(stderr);
}
