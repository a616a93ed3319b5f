/* rngtrk inspect FILE: a checkpoint as one line of canonical JSON.
 *
 * Canonical JSON is what Python's json.dumps(obj, ensure_ascii=False) gives:
 *   {"format_version": N, "default": {"seed": S, "offset": O},
 *    "states": [{"name": "...", "seed": S, "offset": O}, ...]}
 * keys in that order, states in stored order; a version-2 checkpoint that
 * records who it belongs to adds, last,
 *   "origin": {"policy": "megatron", "seed": S, "flags": ["dp-random-init"],
 *              "rank": {"tp": T, "pp": P, "dp": D, "ep": E, "etp": F}}
 * `python3 -m rngtrk inspect` and the Rust example print the same bytes. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Header fields read before the rest (docs/checkpoint-format.md). */
#define HEADER_PREFIX_BYTES 20 /* magic 8, format_version 4, total_length 8 */

static uint64_t le_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

static uint32_t le_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* `s` as a JSON string, the way Python's json.dumps(ensure_ascii=False) writes it. */
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

static int file_error(const char *path, const char *what) { return data_error("inspect", "%s: %s", path, what); }

/* Reads the checkpoint at `path` into a malloc'd buffer.  The header is read
 * first, so a file that is not a checkpoint, or whose declared length does
 * not match its size, is refused without reading (or allocating) the rest. */
static int read_checkpoint(const char *path, unsigned char **out, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return file_error(path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return file_error(path, strerror(EISDIR));
    }
    unsigned char head[HEADER_PREFIX_BYTES];
    const size_t got = fread(head, 1, sizeof head, f);
    if (got < 8 || memcmp(head, "RNGTRKCK", 8) != 0) {
        fclose(f);
        return file_error(path, "not an rngtrk checkpoint (bad magic)");
    }
    if (got < sizeof head) {
        fclose(f);
        return file_error(path, "truncated checkpoint header");
    }
    if (le_u32(head + 8) != 1 && le_u32(head + 8) != 2) {
        fclose(f);
        return file_error(path, "unsupported checkpoint format version");
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return file_error(path, "cannot seek (not a regular file?)");
    }
    const long size = ftell(f);
    const uint64_t declared = le_u64(head + 12);
    if (size < 0 || (uint64_t)size != declared) {
        fclose(f);
        return file_error(path, (uint64_t)size < declared ? "truncated checkpoint" : "trailing bytes after the checkpoint");
    }
    unsigned char *buf = malloc((size_t)size);
    if (buf == NULL) {
        fclose(f);
        return file_error(path, "out of memory");
    }
    rewind(f);
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return file_error(path, "read error");
    }
    fclose(f);
    *out = buf;
    *out_len = (size_t)size;
    return 0;
}

static void print_origin(const rngtrk_origin *o) {
    static const char *const policies[] = {"megatron", "slapo", "derived"};
    printf(", \"origin\": {\"policy\": \"%s\", \"seed\": %" PRIu64 ", \"flags\": [", o->policy < 3 ? policies[o->policy] : "?",
           o->seed);
    const char *sep = "";
    if (o->flags & RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT) printf("\"dp-random-init\""), sep = ", ";
    if (o->flags & RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED) printf("%s\"always-enable-tp-seed\"", sep);
    printf("], \"rank\": {\"tp\": %u, \"pp\": %u, \"dp\": %u, \"ep\": %u, \"etp\": %u}}", o->rank.tp, o->rank.pp,
           o->rank.dp, o->rank.ep, o->rank.etp);
}

static int inspect(int argc, char **argv) {
    if (argc == 0) return usage_error("inspect", "needs a FILE (see rngtrk help inspect)");
    if (argv[0][0] == '-' && argv[0][1] != '\0') return usage_error("inspect", "unknown option %s", argv[0]);
    if (argc > 1) return usage_error("inspect", "takes one FILE; unexpected '%s'", argv[1]);
    const char *path = argv[0];
    unsigned char *bytes = NULL;
    size_t len = 0;
    if (read_checkpoint(path, &bytes, &len) != 0) return EXIT_DATA;
    const uint32_t version = le_u32(bytes + 8); /* checked by read_checkpoint */
    rngtrk_tracker *t = NULL;
    rngtrk_status st = rngtrk_tracker_new(&t);
    if (st == RNGTRK_OK) st = rngtrk_tracker_load(t, bytes, len);
    free(bytes);
    if (st != RNGTRK_OK) {
        char message[512];
        rngtrk_tracker_free(t);
        return file_error(path, library_message(st, message, sizeof message));
    }
    rngtrk_philox_state d;
    rngtrk_origin origin;
    size_t count = 0;
    rngtrk_tracker_get_default(t, &d);
    rngtrk_tracker_count(t, &count);
    rngtrk_tracker_get_origin(t, &origin);
    printf("{\"format_version\": %u, \"default\": {\"seed\": %" PRIu64 ", \"offset\": %" PRIu64 "}, \"states\": [",
           (unsigned)version, d.seed, d.offset);
    for (size_t i = 0; i < count; ++i) {
        const char *name = NULL;
        rngtrk_philox_state s;
        rngtrk_tracker_name_at(t, i, &name);
        rngtrk_tracker_get_state(t, name, &s);
        printf("%s{\"name\": ", i ? ", " : "");
        print_json_string(name);
        printf(", \"seed\": %" PRIu64 ", \"offset\": %" PRIu64 "}", s.seed, s.offset);
    }
    printf("]");
    if (version >= 2 && origin.present) print_origin(&origin);
    printf("}\n");
    rngtrk_tracker_free(t);
    return fflush(stdout) != 0 || ferror(stdout) ? data_error("inspect", "cannot write the output") : 0;
}

const struct command cmd_inspect = {
    "inspect", "print a checkpoint as one line of canonical JSON",
    "usage: rngtrk inspect FILE\n"
    "\n"
    "Prints the checkpoint FILE as one line of canonical JSON: format_version, the default\n"
    "state, the named states in stored order and, for a version-2 checkpoint seeded by a\n"
    "policy, its origin (policy, base seed, flags, rank). Python's `python3 -m rngtrk inspect`\n"
    "and Rust's `inspect` example print the same bytes. A damaged or foreign file gives one\n"
    "line on stderr and exit status 1.\n",
    inspect};
