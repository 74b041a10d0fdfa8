/* The C tests' scratch folder: the temporary folder a test program works in, paths in it, copies
** of fixtures, and the end of a run (the folder removed, "N passed, M failed" printed). */
#ifndef CDM_TEST_SCRATCH_H
#define CDM_TEST_SCRATCH_H
#include "check.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[256];

/* Makes the folder /tmp/cdm-<name>-XXXXXX in `dir`; 0 (after saying why) when it cannot. */
static int scratch_begin(const char *name) {
    snprintf(dir, sizeof dir, "/tmp/cdm-%s-XXXXXX", name);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 0; }
    return 1;
}

/* Removes the folder, prints the counts after `prefix` (may be ""), and gives main's exit status. */
static int scratch_end(const char *prefix) {
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
    printf("%s%d passed, %d failed\n", prefix, passed, failed);
    return failed ? 1 : 0;
}

/* A path in the folder; the last eight returned stay valid. */
__attribute__((unused)) static char *path_in_dir(const char *name) {
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

/* Copies a file: 1 when copied, 0 when `from` cannot be read, -1 when `to` cannot be written. */
__attribute__((unused)) static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb");
    if (!in) return 0;
    FILE *out = fopen(to, "wb");
    if (!out) { fclose(in); return -1; }
    char buffer[65536];
    size_t n;
    int ok = 1;
    while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) if (fwrite(buffer, 1, n, out) != n) ok = -1;
    fclose(in);
    if (fclose(out) != 0) ok = -1;
    return ok;
}

/* Copies the fixture store `name` of `folder` (a path ending in '/') with its -wal and -shm (when
** present) into the scratch folder; its path there, or NULL when it cannot be copied. */
__attribute__((unused)) static const char *copy_fixture_store(const char *folder, const char *name) {
    static char path[512];
    char from[512], to[512];
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s%s%s", folder, name, suffixes[i]);
        snprintf(to, sizeof to, "%s/%s%s", dir, name, suffixes[i]);
        int copied = copy_file(from, to);
        if (copied < 0 || (copied == 0 && i == 0)) return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

#endif
