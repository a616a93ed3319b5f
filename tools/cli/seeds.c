/* SPDX-License-Identifier: Apache-2.0 */
/* rngtrk seeds: every rank's seeds under a seeding policy; --check finds
 * seeds that two different streams would share. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A rank's coordinates, as the columns print them. */
enum { NCOORD = 5 };
static const char *const coord_names[NCOORD] = {"tp", "pp", "dp", "ep", "etp"};

static uint32_t *coordinate(rngtrk_parallel_rank *r, int i) {
    uint32_t *const fields[NCOORD] = {&r->tp, &r->pp, &r->dp, &r->ep, &r->etp};
    return fields[i];
}

/* What one state's seed depends on.  rngtrk seeds does not know the
 * policies: it asks the library (seed_probe below). */
struct stream_rule {
    char name[RNGTRK_MAX_NAME_BYTES + 1];
    int role;         /* the index of the state whose stream this is (the default's may be a named one's) */
    uint32_t depends; /* bit i: coordinate i */
};

/* One (rank, name) seed and what it is meant to depend on: entries with
 * equal seeds but different identities collide. */
struct seed_entry {
    uint64_t seed;
    uint64_t rank;
    const char *name;
    int64_t identity[1 + NCOORD]; /* role, then each coordinate (-1: not a dependency) */
};

/* Seeds rank `r` and writes the default seed then each named seed (at most
 * `max` in all) to `seeds`, their names to `names` if not NULL; returns how
 * many, or -1 with the library's status in *st. */
static int seeds_of(rngtrk_tracker *t, int policy, uint64_t seed, const rngtrk_parallel_rank *r, uint32_t flags,
                    uint64_t *seeds, const char **names, int max, rngtrk_status *st) {
    rngtrk_philox_state d;
    size_t count = 0;
    if ((*st = rngtrk_tracker_seed_rank(t, (rngtrk_seed_policy)policy, seed, r, flags)) != RNGTRK_OK) return -1;
    rngtrk_tracker_get_default(t, &d);
    rngtrk_tracker_count(t, &count);
    int n = 0;
    seeds[n] = d.seed;
    if (names) names[n] = "default";
    ++n;
    for (size_t i = 0; i < count && n < max; ++i, ++n) {
        const char *name;
        rngtrk_philox_state s;
        rngtrk_tracker_name_at(t, i, &name);
        rngtrk_tracker_get_state(t, name, &s);
        seeds[n] = s.seed;
        if (names) names[n] = name;
    }
    return n;
}

/* Learns from the library what each state's seed depends on: it seeds rank
 * 0 and, per coordinate, the rank with that coordinate alone set to 1; a
 * state whose seed moves depends on that coordinate.  The default state is
 * the stream of a named state whose seed it equals on every probe (megatron's
 * data-parallel-rng; slapo's model-parallel-rng with --always-enable-tp-seed).
 * Returns the number of states, or -1 with the status in *st. */
enum { MAX_STATES = 16 };
static int seed_probe(rngtrk_tracker *t, int policy, uint32_t flags, struct stream_rule *rules, rngtrk_status *st) {
    uint64_t base[MAX_STATES], moved[MAX_STATES];
    const char *names[MAX_STATES];
    int same_as[MAX_STATES]; /* for the default: still equal to state j on every probe */
    rngtrk_parallel_rank r;
    RNGTRK_PARALLEL_RANK_INIT(&r);
    const int n = seeds_of(t, policy, 1234, &r, flags, base, names, MAX_STATES, st);
    if (n < 0) return -1;
    for (int k = 0; k < n; ++k) {
        snprintf(rules[k].name, sizeof rules[k].name, "%s", names[k]);
        rules[k].role = k, rules[k].depends = 0;
        same_as[k] = k > 0 && base[k] == base[0];
    }
    for (int i = 0; i < NCOORD; ++i) {
        RNGTRK_PARALLEL_RANK_INIT(&r);
        *coordinate(&r, i) = 1;
        if (seeds_of(t, policy, 1234, &r, flags, moved, NULL, MAX_STATES, st) != n) return -1;
        for (int k = 0; k < n; ++k) {
            if (moved[k] != base[k]) rules[k].depends |= 1u << i;
            if (moved[k] != moved[0]) same_as[k] = 0;
        }
    }
    for (int k = 1; k < n; ++k)
        if (same_as[k]) {
            rules[0].role = k;
            break;
        }
    return n;
}

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
    /* The policies' names are the library's (numbered from 0 without gaps):
     * a choice's index is the policy's value. */
    const char *policies[16];
    int npolicies = 0;
    while (npolicies < 16 && (policies[npolicies] = rngtrk_seed_policy_name((rngtrk_seed_policy)npolicies)) != NULL)
        ++npolicies;
    int policy = -1, check = 0, dp_random_init = 0, tp_seed = 0;
    uint32_t TP = 0, PP = 0, DP = 0, EP = 1, ETP = 1;
    uint64_t seed = 0;
    struct option opts[] = {
        {"--policy", OPT_CHOICE, &policy, policies, npolicies, 0},
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
    rngtrk_tracker *t = NULL;
    if (rngtrk_tracker_new(&t) != RNGTRK_OK) return data_error("seeds", "out of memory");
    struct stream_rule rules[MAX_STATES];
    rngtrk_status st;
    const int nstates = seed_probe(t, policy, flags, rules, &st);
    if (nstates < 0) {
        char message[512];
        rngtrk_tracker_free(t);
        return usage_error("seeds", "%s", library_message(st, message, sizeof message));
    }
    struct seed_entry *entries = malloc((size_t)world * (size_t)nstates * sizeof *entries);
    if (entries == NULL) {
        rngtrk_tracker_free(t);
        return data_error("seeds", "out of memory");
    }
    size_t n = 0;
    int status = 0;
    for (uint64_t rank = 0; rank < world && status == 0; ++rank) {
        /* Megatron's order: tp fastest, then dp, then pp. */
        const uint32_t tp = (uint32_t)(rank % TP), dp = (uint32_t)(rank / TP % DP), pp = (uint32_t)(rank / TP / DP);
        const uint64_t in_stage = rank % ((uint64_t)TP * DP);
        rngtrk_parallel_rank r;
        RNGTRK_PARALLEL_RANK_INIT(&r);
        r.tp = tp, r.pp = pp, r.dp = dp, r.ep = (uint32_t)(in_stage / ETP % EP), r.etp = (uint32_t)(in_stage % ETP);
        uint64_t got[MAX_STATES];
        const char *names[MAX_STATES];
        const int count = seeds_of(t, policy, seed, &r, flags, got, names, MAX_STATES, &st);
        if (count < 0 && st == RNGTRK_E_DUPLICATE_SEED) {
            /* Two of this rank's own states would share a seed: a finding. */
            printf("collision: rank=%" PRIu64 " tp=%u pp=%u dp=%u ep=%u etp=%u: %s\n", rank, r.tp, r.pp, r.dp, r.ep,
                   r.etp, rngtrk_last_error());
            status = EXIT_DATA;
            break;
        }
        if (count != nstates) {
            char message[512];
            status = count < 0 ? usage_error("seeds", "%s", library_message(st, message, sizeof message))
                               : data_error("seeds", "rank %" PRIu64 " has %d state%s, rank 0 %d", rank, count,
                                            count == 1 ? "" : "s", nstates);
            break;
        }
        printf("rank=%" PRIu64, rank);
        for (int i = 0; i < NCOORD; ++i) printf(" %s=%u", coord_names[i], *coordinate(&r, i));
        printf(" default=%" PRIu64, got[0]);
        for (int k = 0; k < count; ++k) {
            if (k > 0) printf(" %s=%" PRIu64, names[k], got[k]);
            struct seed_entry e = {got[k], rank, rules[k].name, {rules[k].role, -1, -1, -1, -1, -1}};
            const uint32_t depends = rules[rules[k].role].depends;
            for (int i = 0; i < NCOORD; ++i)
                if (depends & (1u << i)) e.identity[1 + i] = *coordinate(&r, i);
            entries[n++] = e;
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
    "the seeds rngtrk_tracker_seed_rank gives its default and named states.  With --check, two\n"
    "states collide when they share a seed but not a stream: another state, or another value\n"
    "of a coordinate the seed depends on (what the library's seeds move with).\n"
    "\n"
    "  --policy P               megatron, slapo or derived (docs/distributed.md)\n"
    "  --seed S                 the job's base seed\n"
    "  --tp A --pp B --dp C     tensor-, pipeline- and data-parallel sizes\n"
    "  --ep D --etp E           expert- and expert-tensor-parallel sizes (default 1)\n"
    "  --dp-random-init         the default state differs per data-parallel rank\n"
    "  --always-enable-tp-seed  slapo: the default state takes the tp seed\n"
    "  --check                  report seeds two different streams would share; exit 1 if any\n",
    seeds};
