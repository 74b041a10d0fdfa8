/* What the C examples share: checks that count, a temporary directory, the JSON files of
** examples/<n>-…, a deterministic generator (SplitMix64) and small sqlite3 helpers for reading
** the destination back. Each example prints "<name>: N checks passed, M failed" and exits 1 on failure. */
#ifndef CDM_EXAMPLE_H
#define CDM_EXAMPLE_H

#include <cdmigrate.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int checks_passed, checks_failed;

#define CHECK(cond) do { if (cond) checks_passed++; else { checks_failed++; \
    fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
    if ((a_ == NULL && b_ == NULL) || (a_ && b_ && strcmp(a_, b_) == 0)) checks_passed++; else { checks_failed++; \
    fprintf(stderr, "FAIL %s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)
/* A call that must succeed; on failure prints the library's message and counts a failure. */
#define MUST(expr) do { int rc_ = (expr); if (rc_ == CDM_OK) checks_passed++; else { checks_failed++; \
    fprintf(stderr, "FAIL %s:%d: %s gave %d: %s\n", __FILE__, __LINE__, #expr, rc_, cdm_last_errmsg()); } } while (0)
/* Inside hooks: a failed call ends the hook with its code (the migration reports it). */
#define TRY(expr) do { int rc_ = (expr); if (rc_ != CDM_OK) return rc_; } while (0)

static char example_dir[256];

/* A fresh temporary directory for the stores. */
static inline void example_begin(void) {
    snprintf(example_dir, sizeof example_dir, "/tmp/cdm-example-XXXXXX");
    if (!mkdtemp(example_dir)) { perror("mkdtemp"); exit(2); }
}

/* Removes the directory, prints the tally, and gives main's exit status. */
static inline int example_end(const char *name) {
    char command[400];
    snprintf(command, sizeof command, "rm -rf '%s'", example_dir);
    if (system(command) != 0) fprintf(stderr, "warning: could not remove %s\n", example_dir);
    printf("%s: %d checks passed, %d failed\n", name, checks_passed, checks_failed);
    return checks_failed ? 1 : 0;
}

/* A path in the temporary directory (a ring of buffers: up to 8 alive at once). */
static inline const char *store_path(const char *name) {
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", example_dir, name);
    return p;
}

/* A JSON file of examples/: $CDMIGRATE_EXAMPLES_DIR or EXAMPLES_DIR (set by the Makefile). */
#ifndef EXAMPLES_DIR
#define EXAMPLES_DIR ".."
#endif
static inline const char *example_file(const char *relative) {
    static char paths[8][1024];
    static int next;
    char *p = paths[next++ % 8];
    const char *base = getenv("CDMIGRATE_EXAMPLES_DIR");
    snprintf(p, 1024, "%s/%s", base ? base : EXAMPLES_DIR, relative);
    return p;
}

static inline cdm_model *load_model(const char *relative) {
    cdm_model *model = NULL;
    if (cdm_model_from_file(example_file(relative), &model) != CDM_OK) {
        fprintf(stderr, "%s: %s\n", relative, cdm_model_errmsg(model));
        checks_failed++;
    }
    return model;
}

static inline cdm_mapping *load_mapping(const char *relative) {
    cdm_mapping *mapping = NULL;
    if (cdm_mapping_from_file(example_file(relative), &mapping) != CDM_OK) {
        fprintf(stderr, "%s: %s\n", relative, cdm_mapping_errmsg(mapping));
        checks_failed++;
    }
    return mapping;
}

/* A migration from model files and mapping files (the handles it needs are kept by it). */
static inline cdm_migration *load_migration(const char *source, const char *destination, const char *const *mappings, size_t count) {
    cdm_model *from = load_model(source), *to = load_model(destination);
    cdm_mapping *maps[4] = {NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < count && i < 4; i++) maps[i] = load_mapping(mappings[i]);
    cdm_migration *migration = NULL;
    if (cdm_migration_new(from, to, maps, count, &migration) != CDM_OK) {
        fprintf(stderr, "migration %s → %s: %s\n", source, destination, cdm_migration_errmsg(migration));
        checks_failed++;
    }
    cdm_model_free(from);
    cdm_model_free(to);
    for (size_t i = 0; i < count && i < 4; i++) cdm_mapping_free(maps[i]);
    return migration;
}

/* Runs a migration; prints the error and counts a failure when it fails. */
static inline int run_migration(cdm_migration *migration, const char *source, const char *destination) {
    int rc = cdm_migration_run(migration, source, destination);
    if (rc != CDM_OK) {
        fprintf(stderr, "migration %s → %s failed: %d %s\n", source, destination, rc, cdm_migration_errmsg(migration));
        checks_failed++;
    }
    return rc;
}

/* `prog --source PATH --destination PATH`: migrate an existing store with the example's policies
** and host functions (no generator, no checks), as the cross-language test runs it. Returns 1 in
** that mode, 0 when run without arguments; exits with 2 on other arguments. */
static inline int source_mode(int argc, char **argv, const char **source, const char **destination) {
    if (argc == 5 && !strcmp(argv[1], "--source") && !strcmp(argv[3], "--destination")) {
        *source = argv[2];
        *destination = argv[4];
        return 1;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--source PATH --destination PATH]\n", argv[0]);
        exit(2);
    }
    return 0;
}

/* The exit status of a run in source mode: 0, or 1 after printing "error CODE: message". */
static inline int source_mode_status(int rc, cdm_migration *migration) {
    if (rc != CDM_OK) fprintf(stderr, "error %d: %s\n", rc, migration ? cdm_migration_errmsg(migration) : cdm_last_errmsg());
    return rc == CDM_OK && checks_failed == 0 ? 0 : 1;
}

/* SplitMix64: the same numbers on every machine. */
typedef struct { uint64_t state; } rng;
static inline uint64_t rng_next(rng *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int rng_below(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }
static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) / 9007199254740992.0; }

/* sqlite3 read-back. */
static inline sqlite3 *open_result(const char *path) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "cannot open %s: %s\n", path, sqlite3_errmsg(db));
        checks_failed++;
    }
    return db;
}

static inline sqlite3_stmt *query(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "query failed: %s\n  %s\n", sqlite3_errmsg(db), sql);
        checks_failed++;
    }
    return st;
}

static inline int64_t scalar(sqlite3 *db, const char *sql) {
    sqlite3_stmt *st = query(db, sql);
    int64_t value = -1;
    if (st && sqlite3_step(st) == SQLITE_ROW) value = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return value;
}

static inline const char *column_text(sqlite3_stmt *st, int i) { return (const char *)sqlite3_column_text(st, i); }

static inline unsigned char *read_whole_file(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    *size = -1;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc(n > 0 ? (size_t)n : 1);
    if (bytes && fread(bytes, 1, (size_t)n, f) == (size_t)n) *size = n;
    fclose(f);
    return bytes;
}

#endif
