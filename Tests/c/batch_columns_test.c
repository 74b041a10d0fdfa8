/* C tests of cdm_batch_columns: several source attributes of a batch in one call as flat C arrays
** (int64, doubles, texts and bytes with offsets, the null rows), the same values as
** cdm_batch_column_json across batch boundaries; the out arrays a host may leave NULL; misuse and
** unknown attributes giving codes and messages. Prints "N passed, M failed" last. */
#include <cdmigrate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char dir[256];

static const char *MODEL =
    "{\"name\": \"V1\", \"entities\": [{\"name\": \"Person\", \"attributes\": ["
    " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"age\", \"type\": \"integer64\"},"
    " {\"name\": \"score\", \"type\": \"double\"}, {\"name\": \"born\", \"type\": \"date\"},"
    " {\"name\": \"active\", \"type\": \"boolean\"}, {\"name\": \"photo\", \"type\": \"binary\"}]}]}";
static const char *MAPPING =
    "{\"entityMappings\": [{\"name\": \"PersonToPerson\", \"sourceEntity\": \"Person\", \"destinationEntity\": \"Person\","
    " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"Columns\", \"attributeMappings\": {\"name\": \"$source.name\"}}]}";

/* Rows in Z_PK order; NULL name, age < 0 and a zero-length photo mean a null value. */
static const char *NAMES[] = {"Ana", NULL, "Zoë ✓", "", "Ed"};
static const int64_t AGES[] = {31, -1, 7, 0, 90};
static const unsigned char PHOTO[] = {0, 1, 2, 255};

static int make_source(cdm_model *model, const char *path) {
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    for (int i = 0; i < 5; i++) {
        cdm_object *person = NULL;
        CHECK_RC(cdm_store_insert(store, "Person", &person), CDM_OK);
        if (NAMES[i]) CHECK_RC(cdm_object_set_text(person, "name", NAMES[i], CDM_NUL_TERMINATED), CDM_OK);
        if (AGES[i] >= 0) CHECK_RC(cdm_object_set_int64(person, "age", AGES[i]), CDM_OK);
        CHECK_RC(cdm_object_set_double(person, "score", 0.5 * i), CDM_OK);
        CHECK_RC(cdm_object_set_date(person, "born", 1000.0 * i), CDM_OK);
        CHECK_RC(cdm_object_set_bool(person, "active", i % 2), CDM_OK);
        if (i == 2) CHECK_RC(cdm_object_set_blob(person, "photo", PHOTO, sizeof PHOTO), CDM_OK);
    }
    int rc = cdm_store_save(store);
    cdm_store_close(store);
    return rc == CDM_OK;
}

typedef struct {
    int rows_checked;
    int refusals_checked;
} columns_state;

static int is_null(const int64_t *nulls, size_t count, size_t row) {
    for (size_t i = 0; i < count; i++)
        if (nulls[i] == (int64_t)row) return 1;
    return 0;
}

static void check_refusals(cdm_context *ctx, cdm_batch *batch) {
    const char *names[] = {"name", "nothing"};
    int kinds[2];
    const void *values[2];
    size_t count = 0;
    CHECK_RC(cdm_batch_columns(batch, names, 2, kinds, values, NULL, NULL, NULL, &count), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "nothing");
    CHECK_RC(cdm_batch_columns(batch, names, 1, kinds, values, NULL, NULL, NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_batch_columns(batch, NULL, 1, kinds, values, NULL, NULL, NULL, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_columns(batch, names, 1, NULL, values, NULL, NULL, NULL, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_columns(batch, names, 1, kinds, NULL, NULL, NULL, NULL, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_columns(NULL, names, 1, kinds, values, NULL, NULL, NULL, &count), CDM_MISUSE);
    CHECK_RC(cdm_batch_columns((cdm_batch *)ctx, names, 1, kinds, values, NULL, NULL, NULL, &count), CDM_MISUSE);
    const char *bad[] = {NULL};
    CHECK_RC(cdm_batch_columns(batch, bad, 1, kinds, values, NULL, NULL, NULL, &count), CDM_MISUSE);
    /* No attribute at all: only the row count. */
    count = 0;
    CHECK_RC(cdm_batch_columns(batch, NULL, 0, NULL, NULL, NULL, NULL, NULL, &count), CDM_OK);
    CHECK(count > 0);
}

static int columns_batch(cdm_context *ctx, cdm_batch *batch, void *user) {
    columns_state *s = user;
    if (!s->refusals_checked++) check_refusals(ctx, batch);
    const char *names[] = {"name", "age", "score", "born", "active", "photo"};
    int kinds[6];
    const void *values[6];
    const char *bytes[6];
    const int64_t *nulls[6];
    size_t null_counts[6];
    size_t count = 0;
    CHECK_RC(cdm_batch_columns(batch, names, 6, kinds, values, bytes, nulls, null_counts, &count), CDM_OK);
    const int64_t *keys = NULL;
    size_t key_count = 0;
    CHECK_RC(cdm_batch_source_keys(batch, &keys, &key_count), CDM_OK);
    CHECK(count == key_count);
    CHECK(kinds[0] == CDM_COLUMN_TEXT && kinds[1] == CDM_COLUMN_INTEGER && kinds[2] == CDM_COLUMN_DOUBLE);
    CHECK(kinds[3] == CDM_COLUMN_DOUBLE && kinds[4] == CDM_COLUMN_INTEGER && kinds[5] == CDM_COLUMN_BYTES);
    CHECK(bytes[1] != NULL && bytes[1][0] == '\0'); /* a number column's text is empty */
    const int64_t *offsets = values[0];
    for (size_t r = 0; r < count && r < key_count; r++) {
        int i = (int)keys[r] - 1;
        if (i < 0 || i > 4) continue;
        /* name: a NUL-terminated text at its offset, or a null row. */
        if (NAMES[i]) {
            CHECK(!is_null(nulls[0], null_counts[0], r));
            CHECK_STR(bytes[0] + offsets[r], NAMES[i]);
            CHECK((size_t)(offsets[r + 1] - offsets[r] - 1) == strlen(NAMES[i]));
        } else {
            CHECK(is_null(nulls[0], null_counts[0], r));
            CHECK(offsets[r + 1] - offsets[r] == 1);
        }
        const int64_t *ages = values[1];
        if (AGES[i] >= 0) CHECK(ages[r] == AGES[i] && !is_null(nulls[1], null_counts[1], r));
        else CHECK(ages[r] == 0 && is_null(nulls[1], null_counts[1], r));
        CHECK(((const double *)values[2])[r] == 0.5 * i);
        CHECK(((const double *)values[3])[r] == 1000.0 * i);
        CHECK(((const int64_t *)values[4])[r] == i % 2);
        const int64_t *photo = values[5];
        if (i == 2) {
            CHECK(photo[r + 1] - photo[r] - 1 == (int64_t)sizeof PHOTO);
            CHECK(memcmp(bytes[5] + photo[r], PHOTO, sizeof PHOTO) == 0);
        } else {
            CHECK(is_null(nulls[5], null_counts[5], r));
        }
        s->rows_checked++;
    }
    CHECK(null_counts[2] == 0 && null_counts[3] == 0 && null_counts[4] == 0);
    /* The same values as the JSON column gives, in the same order. */
    const char *json = NULL;
    CHECK_RC(cdm_batch_column_json(batch, "age", &json), CDM_OK);
    if (json && count > 0 && keys[0] == 1) CHECK(strncmp(json, "[31", 3) == 0);
    return cdm_batch_apply_default(batch, NULL, NULL);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/cdm-batch-columns-XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_json(MODEL, &model), CDM_OK);
    char source[512], destination[512];
    snprintf(source, sizeof source, "%s/source.sqlite", dir);
    if (make_source(model, source)) {
        for (size_t batch_size = 1; batch_size <= 5; batch_size += 2) {
            cdm_mapping *mapping = NULL;
            CHECK_RC(cdm_mapping_from_json(MAPPING, &mapping), CDM_OK);
            cdm_migration *migration = NULL;
            CHECK_RC(cdm_migration_new(model, model, &mapping, 1, &migration), CDM_OK);
            cdm_mapping_free(mapping);
            columns_state s;
            memset(&s, 0, sizeof s);
            cdm_policy policy;
            memset(&policy, 0, sizeof policy);
            policy.create_destination_instances_batch = columns_batch;
            CHECK_RC(cdm_migration_set_batch_size(migration, batch_size), CDM_OK);
            CHECK_RC(cdm_migration_register_policy(migration, "Columns", &policy, sizeof policy, &s, NULL), CDM_OK);
            snprintf(destination, sizeof destination, "%s/out-%zu.sqlite", dir, batch_size);
            CHECK_RC(cdm_migration_run(migration, source, destination), CDM_OK);
            CHECK(s.rows_checked == 5);
            cdm_migration_free(migration);
        }
    } else {
        failed++;
        fprintf(stderr, "FAIL: could not make the source store\n");
    }
    cdm_model_free(model);
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
