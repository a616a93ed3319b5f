/* rngtrk seeds: every rank's seeds under a seeding policy; --check finds
 * seeds that two different streams would share. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One (rank, name) seed and what it is meant to depend on: entries with
 * equal seeds but different identities collide. */
struct seed_entry {
    uint64_t seed;
    uint64_t rank;
    const char *name;
    int64_t identity[6]; /* role, pp, dp, tp, ep, etp (-1: not a dependency) */
};

static int cmp_entry(const void *a, const void *b) {
    const struct seed_entry *x = a, *y = b;
    return x->seed < y->seed ? -1 : x->seed > y->seed ? 1 : x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Prints the collisions among `entries` (sorted here); returns how many. */
static int report_collisions(struct seed_entry *entries, size_t n) {
    int collisions = 0;
    qsort(entries, n, sizeof *entries, cmp_entry);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && entries[j].seed == entries[i].seed) ++j;
        /* The first entry of each distinct identity in this seed's group. */
        size_t firsts[64];
        int distinct = 0;
        for (size_t a = i; a < j; ++a) {
            int seen = 0;
            for (int b = 0; b < distinct && !seen; ++b)
                seen = memcmp(entries[a].identity, entries[firsts[b]].identity, sizeof entries[a].identity) == 0;
            if (!seen && distinct < 64) firsts[distinct++] = a;
        }
        if (distinct > 1) {
            printf("collision: seed=%" PRIu64 ":", entries[i].seed);
            for (int b = 0; b < distinct; ++b)
                printf(" rank=%" PRIu64 " %s", entries[firsts[b]].rank, entries[firsts[b]].name);
            printf("\n");
            ++collisions;
        }
        i = j;
    }
    printf("%d collision%s\n", collisions, collisions == 1 ? "" : "s");
    return collisions;
}

static int seeds(int argc, char **argv) {
    static const char *const policies[] = {"megatron", "slapo", "derived"};
    int policy = -1, check = 0, dp_random_init = 0, tp_seed = 0;
    uint32_t TP = 0, PP = 0, DP = 0, EP = 1, ETP = 1;
    uint64_t seed = 0;
    struct option opts[] = {
        {"--policy", OPT_CHOICE, &policy, policies, 3, 0},
        {"--seed", OPT_U64, &seed, NULL, 0, 0},
        {"--tp", OPT_U32_POS, &TP, NULL, 0, 0},
        {"--pp", OPT_U32_POS, &PP, NULL, 0, 0},
        {"--dp", OPT_U32_POS, &DP, NULL, 0, 0},
        {"--ep", OPT_U32_POS, &EP, NULL, 0, 0},
        {"--etp", OPT_U32_POS, &ETP, NULL, 0, 0},
        {"--dp-random-init", OPT_FLAG, &dp_random_init, NULL, 0, 0},
        {"--always-enable-tp-seed", OPT_FLAG, &tp_seed, NULL, 0, 0},
        {"--check", OPT_FLAG, &check, NULL, 0, 0},
    };
    if (parse_options("seeds", opts, sizeof opts / sizeof opts[0], argc, argv) != 0) return EXIT_USAGE;
    if (policy < 0 || !opts[1].given || !TP || !PP || !DP)
        return usage_error("seeds", "needs --policy, --seed, --tp, --pp and --dp (see rngtrk help seeds)");
    const uint32_t flags = (dp_random_init ? RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT : 0) |
                           (tp_seed ? RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED : 0);
    /* The expert layout splits each pipeline stage's tp x dp ranks as
     * etp (fastest) x ep x the rest, as Megatron-LM's expert groups do. */
    if (((uint64_t)TP * DP) % ((uint64_t)EP * ETP) != 0) return usage_error("seeds", "--ep * --etp must divide --tp * --dp");
    const uint64_t world = (uint64_t)TP * PP * DP;
    if (world > 1000000) return usage_error("seeds", "--tp * --pp * --dp is %" PRIu64 ", more than a million ranks", world);
    struct seed_entry *entries = malloc((size_t)world * 4 * sizeof *entries);
    rngtrk_tracker *t = NULL;
    if (entries == NULL || rngtrk_tracker_new(&t) != RNGTRK_OK) {
        free(entries);
        return data_error("seeds", "out of memory");
    }
    size_t n = 0;
    int status = 0;
    const int dp_dep = policy == RNGTRK_POLICY_SLAPO || dp_random_init;
    for (uint64_t rank = 0; rank < world && status == 0; ++rank) {
        /* Megatron's order: tp fastest, then dp, then pp. */
        const uint32_t tp = (uint32_t)(rank % TP), dp = (uint32_t)(rank / TP % DP), pp = (uint32_t)(rank / TP / DP);
        const uint64_t in_stage = rank % ((uint64_t)TP * DP);
        rngtrk_parallel_rank r;
        RNGTRK_PARALLEL_RANK_INIT(&r);
        r.tp = tp, r.pp = pp, r.dp = dp, r.ep = (uint32_t)(in_stage / ETP % EP), r.etp = (uint32_t)(in_stage % ETP);
        const rngtrk_status st = rngtrk_tracker_seed_rank(t, (rngtrk_seed_policy)policy, seed, &r, flags);
        if (st == RNGTRK_E_DUPLICATE_SEED) {
            /* Two of this rank's own states would share a seed: a finding. */
            printf("collision: rank=%" PRIu64 " tp=%u pp=%u dp=%u ep=%u etp=%u: %s\n", rank, r.tp, r.pp, r.dp, r.ep,
                   r.etp, rngtrk_last_error());
            status = EXIT_DATA;
            break;
        }
        if (st != RNGTRK_OK) {
            char message[512];
            status = usage_error("seeds", "%s", library_message(st, message, sizeof message));
            break;
        }
        rngtrk_philox_state d;
        size_t count = 0;
        rngtrk_tracker_get_default(t, &d);
        rngtrk_tracker_count(t, &count);
        printf("rank=%" PRIu64 " tp=%u pp=%u dp=%u ep=%u etp=%u default=%" PRIu64, rank, r.tp, r.pp, r.dp, r.ep, r.etp,
               d.seed);
        const int tp_default = policy == RNGTRK_POLICY_SLAPO && tp_seed;
        const int64_t dp_id = dp_dep ? (int64_t)r.dp : -1;
        struct seed_entry e = {d.seed, rank, "default", {tp_default, r.pp, dp_id, tp_default ? (int64_t)r.tp : -1, -1, -1}};
        entries[n++] = e;
        for (size_t i = 0; i < count; ++i) {
            const char *name;
            rngtrk_philox_state s;
            rngtrk_tracker_name_at(t, i, &name);
            rngtrk_tracker_get_state(t, name, &s);
            printf(" %s=%" PRIu64, name, s.seed);
            struct seed_entry x = {s.seed, rank, "data-parallel-rng", {0, r.pp, dp_id, -1, -1, -1}};
            if (strcmp(name, "model-parallel-rng") == 0) {
                x.name = "model-parallel-rng", x.identity[0] = 1, x.identity[3] = r.tp;
            } else if (strcmp(name, "expert-parallel-rng") == 0) {
                x.name = "expert-parallel-rng", x.identity[0] = 2, x.identity[4] = r.ep, x.identity[5] = r.etp;
            } /* else data-parallel-rng: the default's stream by design */
            entries[n++] = x;
        }
        printf("\n");
    }
    if (status == 0 && check && report_collisions(entries, n) > 0) status = EXIT_DATA;
    free(entries);
    rngtrk_tracker_free(t);
    return status;
}

const struct command cmd_seeds = {
    "seeds", "every rank's seeds under a seeding policy; --check finds collisions",
    "usage: rngtrk seeds --policy P --seed S --tp A --pp B --dp C [options]\n"
    "\n"
    "Prints one line per rank (Megatron-LM's rank order: tp fastest, then dp, then pp) with\n"
    "the seeds rngtrk_tracker_seed_rank gives its default and named states.\n"
    "\n"
    "  --policy P               megatron, slapo or derived (docs/distributed.md)\n"
    "  --seed S                 the job's base seed\n"
    "  --tp A --pp B --dp C     tensor-, pipeline- and data-parallel sizes\n"
    "  --ep D --etp E           expert- and expert-tensor-parallel sizes (default 1)\n"
    "  --dp-random-init         the default state differs per data-parallel rank\n"
    "  --always-enable-tp-seed  slapo: the default state takes the tp seed\n"
    "  --check                  report seeds two different streams would share; exit 1 if any\n",
    seeds};
