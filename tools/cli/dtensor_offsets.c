/* SPDX-License-Identifier: Apache-2.0 */
/* rngtrk dtensor-offsets: PyTorch DTensor's RNG offsets for one rank. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { MAX_DIMS = RNGTRK_MAX_NDIM };

/* Parses "a<sep>b<sep>c" (at most MAX_DIMS whole numbers) for option `name`. */
static int parse_list(const char *name, const char *text, char sep, uint64_t *out, size_t *n) {
    *n = 0;
    for (const char *p = text;;) {
        const char *end = strchr(p, sep);
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[32];
        int digits = len > 0 && len < sizeof item;
        for (size_t i = 0; i < len && digits; ++i) digits = p[i] >= '0' && p[i] <= '9';
        if (!digits) return usage_error("dtensor-offsets", "%s: '%s' is not a list of whole numbers separated by '%c'", name, text, sep);
        if (*n == MAX_DIMS) return usage_error("dtensor-offsets", "%s: more than %d entries", name, MAX_DIMS);
        memcpy(item, p, len);
        item[len] = '\0';
        out[(*n)++] = strtoull(item, NULL, 10);
        if (end == NULL) return 0;
        p = end + 1;
    }
}

/* "S0,R,P": Shard(dim), Replicate, Partial. */
static int parse_placements(const char *text, rngtrk_placement *out, size_t *n) {
    *n = 0;
    for (const char *p = text;;) {
        if (*n == MAX_DIMS) return usage_error("dtensor-offsets", "--placements: more than %d entries", MAX_DIMS);
        if ((*p == 'R' || *p == 'P') && (p[1] == ',' || p[1] == '\0')) {
            out[(*n)++] = (rngtrk_placement){*p == 'R' ? RNGTRK_PLACEMENT_REPLICATE : RNGTRK_PLACEMENT_PARTIAL, 0};
            ++p;
        } else if (*p == 'S' && p[1] >= '0' && p[1] <= '9') {
            char *end;
            const unsigned long dim = strtoul(p + 1, &end, 10);
            if ((*end != ',' && *end != '\0') || dim >= MAX_DIMS) break;
            out[(*n)++] = (rngtrk_placement){RNGTRK_PLACEMENT_SHARD, (uint32_t)dim};
            p = end;
        } else {
            break;
        }
        if (*p == '\0') return 0;
        ++p; /* the comma */
    }
    return usage_error("dtensor-offsets", "--placements: '%s' is not a list of S<dim>, R and P separated by ','", text);
}

static int dtensor_offsets(int argc, char **argv) {
    static const char *const rules[] = {"torch", "exact"};
    const char *mesh_text = NULL, *coord_text = NULL, *placements_text = NULL, *shape_text = NULL;
    uint64_t offset = 0;
    int rule = RNGTRK_OFFSET_RULE_TORCH;
    struct option opts[] = {
        {"--mesh", OPT_TEXT, &mesh_text, NULL, 0, 0},
        {"--coord", OPT_TEXT, &coord_text, NULL, 0, 0},
        {"--placements", OPT_TEXT, &placements_text, NULL, 0, 0},
        {"--shape", OPT_TEXT, &shape_text, NULL, 0, 0},
        {"--offset", OPT_U64, &offset, NULL, 0, 0},
        {"--rule", OPT_CHOICE, &rule, rules, 2, 0},
    };
    if (parse_options("dtensor-offsets", opts, sizeof opts / sizeof opts[0], argc, argv) != 0) return EXIT_USAGE;
    if (!mesh_text || !coord_text || !placements_text || !shape_text)
        return usage_error("dtensor-offsets", "needs --mesh, --coord, --placements and --shape (see rngtrk help dtensor-offsets)");
    uint64_t mesh[MAX_DIMS], coord[MAX_DIMS], shape[MAX_DIMS];
    rngtrk_placement placements[MAX_DIMS];
    size_t mesh_n, coord_n, shape_n, pl_n;
    if (parse_list("--mesh", mesh_text, 'x', mesh, &mesh_n) || parse_list("--coord", coord_text, ',', coord, &coord_n) ||
        parse_list("--shape", shape_text, ',', shape, &shape_n) || parse_placements(placements_text, placements, &pl_n))
        return EXIT_USAGE;
    if (coord_n != mesh_n || pl_n != mesh_n)
        return usage_error("dtensor-offsets", "--coord and --placements need one entry per --mesh dimension (%zu)", mesh_n);
    uint64_t pre = 0, post = 0;
    const rngtrk_status st = rngtrk_dtensor_offsets(mesh_n, mesh, coord, placements, shape_n, shape, offset,
                                                    (rngtrk_offset_rule)rule, &pre, &post);
    if (st != RNGTRK_OK) {
        char message[512];
        return usage_error("dtensor-offsets", "%s", library_message(st, message, sizeof message));
    }
    printf("pre=%" PRIu64 " post=%" PRIu64 "\n", pre, post);
    return fflush(stdout) != 0 ? data_error("dtensor-offsets", "cannot write the output") : 0;
}

const struct command cmd_dtensor_offsets = {
    "dtensor-offsets", "PyTorch DTensor's pre-op and post-op RNG offsets for one rank",
    "usage: rngtrk dtensor-offsets --mesh 2x4 --coord 1,3 --placements S0,R --shape 8,16 [options]\n"
    "\n"
    "Prints \"pre=A post=B\": the offsets PyTorch's DTensor RNG tracker uses on this rank before\n"
    "and after a random op on a tensor of the given global shape (docs/distributed.md).\n"
    "\n"
    "  --mesh 2x4               the device mesh's shape\n"
    "  --coord 1,3              this rank's coordinate on the mesh\n"
    "  --placements S0,R        per mesh dimension: S<dim> (Shard), R (Replicate), P (Partial)\n"
    "  --shape 8,16             the tensor's global shape\n"
    "  --offset O               the generator's offset before the op (default 0)\n"
    "  --rule R                 torch (PyTorch's arithmetic, default) or exact\n",
    dtensor_offsets};
