/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replays a tracker recipe from tests/vectors/checkpoints/recipes.txt
 * through the public C API.  Used by the C API tests and by run_recipe,
 * which the Python (and Rust) tests call to compare their own checkpoint
 * bytes with the ones C writes for the same calls.
 */
#ifndef RNGTRK_TEST_CHECKPOINT_RECIPES_H
#define RNGTRK_TEST_CHECKPOINT_RECIPES_H

#include <stddef.h>

#include "rngtrk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the calls of recipe `name` found in `recipes` (the file's text) on
 * `t`.  Returns 0, or -1 with a one-line reason in err[0..err_len). */
int recipe_run(const char *recipes, const char *name, rngtrk_tracker *t, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
