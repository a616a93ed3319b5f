/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_recipe RECIPES_FILE NAME OUT_FILE — replays one recipe on a new
 * tracker through the C API and writes the checkpoint it saves.  The other
 * languages' tests compare their own bytes with this file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "checkpoint_recipes.h"

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    char chunk[4096];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = 2 * (len + got + 1);
            char *bigger = realloc(text, cap);
            if (bigger == NULL) break;
            text = bigger;
        }
        for (size_t i = 0; i < got; ++i) text[len + i] = chunk[i];
        len += got;
        text[len] = '\0';
    }
    fclose(f);
    return text;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: run_recipe RECIPES_FILE NAME OUT_FILE\n");
        return 2;
    }
    char *recipes = read_all(argv[1]);
    if (recipes == NULL) {
        fprintf(stderr, "run_recipe: cannot read %s\n", argv[1]);
        return 1;
    }
    rngtrk_tracker *t = NULL;
    char err[512];
    size_t len = 0;
    uint8_t *bytes = NULL;
    int ok = rngtrk_tracker_new(&t) == RNGTRK_OK && recipe_run(recipes, argv[2], t, err, sizeof err) == 0;
    if (!ok) fprintf(stderr, "run_recipe: %s\n", t ? err : "cannot create a tracker");
    ok = ok && rngtrk_tracker_save(t, NULL, 0, &len) == RNGTRK_OK && (bytes = malloc(len)) != NULL &&
         rngtrk_tracker_save(t, bytes, len, &len) == RNGTRK_OK;
    FILE *out = ok ? fopen(argv[3], "wb") : NULL;
    ok = out != NULL && fwrite(bytes, 1, len, out) == len;
    if (out != NULL && fclose(out) != 0) ok = 0;
    free(bytes);
    free(recipes);
    rngtrk_tracker_free(t);
    return ok ? 0 : 1;
}
