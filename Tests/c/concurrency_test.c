/* Several migrations at once in one process, from C threads (pthreads):
**   - 8 threads, each migrating a store of its own with a C policy: every result is right;
**   - 2 threads migrating to one destination at once: one succeeds, the other fails at once with
**     CDM_MIGRATION_MANAGER_DESTINATION_STORE saying the destination is busy, and the destination
**     holds the winner's whole store.
** Threads only record outcomes; every CHECK runs on the main thread after the joins. */
#include <cdmigrate.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"

static const char *SOURCE_MODEL =
    "{\"name\": \"V1\", \"entities\": [{\"name\": \"Item\", \"attributes\": ["
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"n\", \"type\": \"integer64\"}]}]}";
static const char *DESTINATION_MODEL =
    "{\"name\": \"V2\", \"entities\": [{\"name\": \"Item\", \"attributes\": ["
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"n\", \"type\": \"integer64\"},"
    " {\"name\": \"label\", \"type\": \"string\"}]}]}";
static const char *MAPPING =
    "{\"name\": \"V1toV2\", \"entityMappings\": [{\"name\": \"ItemToItem\", \"type\": \"custom\","
    " \"sourceEntity\": \"Item\", \"destinationEntity\": \"Item\", \"predicate\": \"TRUEPREDICATE\", \"policy\": \"ItemPolicy\","
    " \"attributeMappings\": [{\"name\": \"name\", \"valueExpression\": \"$source.name\"},"
    "  {\"name\": \"n\", \"valueExpression\": \"$source.n * 2\"}]}]}";

#define THREADS 8
#define ITEMS 300
#define RACE_ITEMS 1000

/* What one run did; written by its thread, read by the main thread after the join. */
typedef struct {
    int thread;            /* labels are "t<thread>-<name>" */
    int items;
    int *finished;         /* when set: runs that have returned, shared by the racing threads; the
                           ** policy waits on its first instance until another run has returned */
    const char *source, *destination;
    pthread_barrier_t *start;
    /* Outcome */
    int setup_rc, rc;
    char message[512];
    int creates, begins, ends, destroyed;
} run;

/* The policy: Core Data's default creation, plus a label naming the thread. */
static int item_begin(cdm_context *ctx, void *user) { (void)ctx; ((run *)user)->begins++; return CDM_OK; }
static int item_end(cdm_context *ctx, void *user) { (void)ctx; ((run *)user)->ends++; return CDM_OK; }
static void item_destroy(void *user) { ((run *)user)->destroyed++; }
static int item_create(cdm_context *ctx, cdm_object *src, void *user) {
    run *r = user;
    if (r->creates++ == 0 && r->finished)
        for (int waited = 0; __atomic_load_n(r->finished, __ATOMIC_SEQ_CST) == 0 && waited < 30000; waited++) usleep(1000);
    cdm_object *dst = NULL;
    int rc = cdm_context_create_instance(ctx, "Item", &dst);
    if (rc) return rc;
    if ((rc = cdm_context_apply_attribute_mappings(ctx, src, dst))) return rc;
    const char *name = NULL; size_t len = 0; int is_null = 0;
    if ((rc = cdm_object_get_text(src, "name", &name, &len, &is_null))) return rc;
    char label[96];
    snprintf(label, sizeof label, "t%d-%.*s", r->thread, (int)len, name ? name : "");
    if ((rc = cdm_object_set_text(dst, "label", label, -1))) return rc;
    return cdm_context_associate(ctx, src, dst);
}

/* A source store of `items` items named "item<k>" with n = k + 1000 * thread. */
static int make_source(const char *path, int thread, int items) {
    cdm_model *model = NULL;
    cdm_store *store = NULL;
    int rc = cdm_model_from_json(SOURCE_MODEL, &model);
    if (!rc) rc = cdm_store_create(model, path, &store);
    for (int k = 0; !rc && k < items; k++) {
        cdm_object *item = NULL;
        char name[32];
        snprintf(name, sizeof name, "item%d", k);
        rc = cdm_store_insert(store, "Item", &item);
        if (!rc) rc = cdm_object_set_text(item, "name", name, -1);
        if (!rc) rc = cdm_object_set_int64(item, "n", k + 1000 * thread);
    }
    if (!rc) rc = cdm_store_save(store);
    cdm_store_close(store);
    cdm_model_free(model);
    return rc;
}

static void *migrate(void *arg) {
    run *r = arg;
    cdm_model *src = NULL, *dst = NULL;
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    r->setup_rc = cdm_model_from_json(SOURCE_MODEL, &src);
    if (!r->setup_rc) r->setup_rc = cdm_model_from_json(DESTINATION_MODEL, &dst);
    if (!r->setup_rc) r->setup_rc = cdm_mapping_from_json(MAPPING, &mapping);
    if (!r->setup_rc) r->setup_rc = cdm_migration_new(src, dst, &mapping, 1, &migration);
    cdm_policy policy = {item_begin, item_create, NULL, NULL, NULL, NULL, item_end, NULL};
    if (!r->setup_rc) r->setup_rc = cdm_migration_register_policy(migration, "ItemPolicy", &policy, sizeof policy, r, item_destroy);
    if (r->start) pthread_barrier_wait(r->start);
    if (!r->setup_rc) {
        r->rc = cdm_migration_run(migration, r->source, r->destination);
        snprintf(r->message, sizeof r->message, "%s", r->rc ? cdm_migration_errmsg(migration) : "");
    }
    if (r->finished) __atomic_add_fetch(r->finished, 1, __ATOMIC_SEQ_CST);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(src);
    cdm_model_free(dst);
    return NULL;
}

/* Checks the destination of a run on the main thread: every item, its doubled n and its label. */
static void check_destination(const char *path, int thread, int items) {
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT ZNAME, ZN, ZLABEL FROM ZITEM ORDER BY ZN", -1, &st, NULL) == SQLITE_OK);
    int rows = 0, wrong = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        char name[32], label[64];
        snprintf(name, sizeof name, "item%d", rows);
        snprintf(label, sizeof label, "t%d-item%d", thread, rows);
        const char *got_name = (const char *)sqlite3_column_text(st, 0);
        const char *got_label = (const char *)sqlite3_column_text(st, 2);
        if (!got_name || strcmp(got_name, name) || sqlite3_column_int64(st, 1) != 2 * (rows + 1000 * thread)
            || !got_label || strcmp(got_label, label)) {
            if (wrong++ < 3) fprintf(stderr, "%s row %d: %s %lld %s\n", path, rows, got_name, (long long)sqlite3_column_int64(st, 1), got_label);
        }
        rows++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    CHECK(rows == items);
    CHECK(wrong == 0);
}

static void test_threads_with_stores_of_their_own(void) {
    pthread_t threads[THREADS];
    run runs[THREADS];
    char sources[THREADS][300], destinations[THREADS][300];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) {
        snprintf(sources[i], sizeof sources[i], "%s/source-%d.sqlite", dir, i);
        snprintf(destinations[i], sizeof destinations[i], "%s/destination-%d.sqlite", dir, i);
        CHECK_RC(make_source(sources[i], i, ITEMS), CDM_OK);
        runs[i] = (run){.thread = i, .items = ITEMS, .source = sources[i], .destination = destinations[i], .start = &start};
    }
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, migrate, &runs[i]) == 0);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < THREADS; i++) {
        CHECK(runs[i].setup_rc == CDM_OK);
        if (runs[i].rc) fprintf(stderr, "thread %d: %d %s\n", i, runs[i].rc, runs[i].message);
        CHECK(runs[i].rc == CDM_OK);
        CHECK(runs[i].creates == ITEMS);
        CHECK(runs[i].begins == 1 && runs[i].ends == 1);
        CHECK(runs[i].destroyed == 1);  /* cdm_migration_free released the policy's user pointer */
        check_destination(destinations[i], i, ITEMS);
    }
}

static void test_two_threads_on_one_destination(void) {
    char source_a[300], source_b[300], destination[300];
    snprintf(source_a, sizeof source_a, "%s/race-a.sqlite", dir);
    snprintf(source_b, sizeof source_b, "%s/race-b.sqlite", dir);
    snprintf(destination, sizeof destination, "%s/race-destination.sqlite", dir);
    CHECK_RC(make_source(source_a, 20, RACE_ITEMS), CDM_OK);
    CHECK_RC(make_source(source_b, 21, RACE_ITEMS), CDM_OK);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    /* Whichever run takes the destination's lock waits in its policy until the other run has
    ** returned, so the other one always finds the destination locked (never already made). */
    int finished = 0;
    run runs[2] = {
        {.thread = 20, .items = RACE_ITEMS, .finished = &finished, .source = source_a, .destination = destination, .start = &start},
        {.thread = 21, .items = RACE_ITEMS, .finished = &finished, .source = source_b, .destination = destination, .start = &start},
    };
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&threads[i], NULL, migrate, &runs[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    int winners = (runs[0].rc == CDM_OK) + (runs[1].rc == CDM_OK);
    CHECK(winners == 1);
    if (winners != 1) return;
    run *winner = runs[0].rc == CDM_OK ? &runs[0] : &runs[1];
    run *loser = runs[0].rc == CDM_OK ? &runs[1] : &runs[0];
    CHECK(loser->rc == CDM_MIGRATION_MANAGER_DESTINATION_STORE);
    CHECK_HAS(loser->message, "is busy: another migration to it is running");
    CHECK(loser->creates == 0);     /* refused before it read anything */
    CHECK(winner->creates == RACE_ITEMS);
    check_destination(destination, winner->thread, RACE_ITEMS);
    /* Only the two sources and the destination are left: no lock file, no temporary store. */
    char lock[320];
    snprintf(lock, sizeof lock, "%s.cdmigrate-lock", destination);
    CHECK(access(lock, F_OK) != 0);
}

int main(void) {
    if (!scratch_begin("concurrency")) return 1;
    test_threads_with_stores_of_their_own();
    test_two_threads_on_one_destination();
    return scratch_end("");
}
