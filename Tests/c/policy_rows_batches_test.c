/* C tests of the single-row hook (create_destination_instances per source instance) across the
** engine's batches: with a batch size of 3 and 10 source notes, the rows of one batch are written
** together (the instance buffer, join rows, associations) and the hook's context is reused from
** one call to the next. Each call must still behave as a callback of its own (a context or
** instance handle kept from the previous call is stale, the previous call's errors are gone), a
** fetch of the destination must see what earlier calls made (written or not), an attribute set on
** an instance made in an earlier batch must reach the store, association look-ups must answer,
** and an error or a validation failure in the middle of a batch must name what is at fault and
** leave no destination.
** Prints "N passed, M failed" last; exits non-zero on any failure. */
#include <cdmigrate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "scratch.h"

static const char *SOURCE_MODEL =
    "{\"name\": \"V2\", \"entities\": [{\"name\": \"Nota\", \"attributes\": ["
    " {\"name\": \"contenido\", \"type\": \"string\"}, {\"name\": \"categoria\", \"type\": \"string\"}]}]}";
/* `strict` makes contenido mandatory: the note without one fails validation. */
static const char *DESTINATION_MODEL =
    "{\"name\": \"V3\", \"entities\": ["
    " {\"name\": \"Nota\", \"attributes\": [{\"name\": \"contenido\", \"type\": \"string\", \"optional\": %s},"
    "  {\"name\": \"revisada\", \"type\": \"integer64\"}],"
    "  \"relationships\": [{\"name\": \"categorias\", \"destination\": \"Categoria\", \"inverse\": \"notas\", \"toMany\": true}]},"
    " {\"name\": \"Categoria\", \"attributes\": [{\"name\": \"nombre\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"notas\", \"destination\": \"Nota\", \"inverse\": \"categorias\", \"toMany\": true}]}]}";
static const char *MAPPING =
    "{\"entityMappings\": [{\"name\": \"NotaToNota\", \"sourceEntity\": \"Nota\", \"destinationEntity\": \"Nota\", \"predicate\": \"TRUEPREDICATE\","
    " \"policy\": \"BatchRowsPolicy\", \"attributeMappings\": {\"contenido\": \"$source.contenido\"}}]}";

#define NOTES 10
#define BATCH 3
static const char *CATEGORIES[NOTES] = {"Ideas", "Viajes", "Ideas", NULL, "Salud", "Viajes",
                                        "Ideas", "Trabajo", NULL, "Salud"};
/* The note without contenido (the strict model's validation failure). */
#define NO_TEXT 5

static int make_source(cdm_model *model, const char *path) {
    cdm_store *store = NULL;
    if (cdm_store_create(model, path, &store) != CDM_OK) return 0;
    for (int i = 0; i < NOTES; i++) {
        cdm_object *nota = NULL;
        char text[32];
        snprintf(text, sizeof text, "nota %d", i);
        if (cdm_store_insert(store, "Nota", &nota) != CDM_OK) return 0;
        if (i != NO_TEXT && cdm_object_set_text(nota, "contenido", text, CDM_NUL_TERMINATED) != CDM_OK) return 0;
        if (CATEGORIES[i] && cdm_object_set_text(nota, "categoria", CATEGORIES[i], CDM_NUL_TERMINATED) != CDM_OK)
            return 0;
    }
    int rc = cdm_store_save(store);
    cdm_store_close(store);
    return rc == CDM_OK;
}

typedef struct {
    int rows;
    int fail_at;               /* the row whose hook sets an attribute the entity lacks (-1: none) */
    cdm_context *kept_context; /* the previous call's handles, kept past it on purpose */
    cdm_object *kept_source;
    int64_t previous_source, previous_nota;
    int stale_context_live;    /* calls where the previous call's context still answered */
    int stale_source_live;     /* calls where the previous call's source still answered */
    int inherited_error;       /* calls whose context started with an error */
    int count_mismatch;        /* calls where the destination's notes were not the ones made so far */
    int lookup_mismatch;       /* calls where the previous source's destination was not found */
    int categories_made;
} batch_state;

#define TRY(expr) do { int rc_ = (expr); if (rc_ != CDM_OK) return rc_; } while (0)

static int create_row(cdm_context *ctx, cdm_object *source, void *user) {
    batch_state *state = user;
    int row = state->rows++;
    if (cdm_context_errcode(ctx) != CDM_OK) state->inherited_error++;
    if (state->kept_context && cdm_context_errcode(state->kept_context) != CDM_MISUSE) state->stale_context_live++;
    int64_t ignored = 0;
    if (state->kept_source && cdm_object_id(state->kept_source, NULL, NULL, &ignored) != CDM_MISUSE)
        state->stale_source_live++;
    state->kept_context = ctx;
    state->kept_source = source;

    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    if (row == state->fail_at) TRY(cdm_object_set_text(nota, "nope", "x", CDM_NUL_TERMINATED));
    /* A failed call the hook ignores: its error must not reach the next call's context. */
    const char *text = NULL;
    size_t length = 0;
    int is_null = 0;
    if (cdm_object_get_text(source, "no_such_attribute", &text, &length, &is_null) != CDM_NOTFOUND)
        return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "an unknown attribute was read");

    /* The destination's notes: every one made so far, this one included, written or not. */
    size_t notes = 0;
    TRY(cdm_context_count_destination(ctx, "Nota", NULL, NULL, 0, 0, &notes));
    if ((int)notes != row + 1) state->count_mismatch++;

    /* The previous source's destination, by association; the previous note (made in this batch or
    ** an earlier one) gets this row's number. */
    if (state->previous_source) {
        cdm_object *previous = NULL;
        TRY(cdm_context_instance_with_id(ctx, CDM_STORE_SOURCE, "Nota", state->previous_source, &previous));
        cdm_object *const *made = NULL;
        size_t count = 0;
        TRY(cdm_context_destination_instances(ctx, "NotaToNota", &previous, 1, &made, &count));
        int64_t pk = 0;
        if (count != 1 || cdm_object_id(made[0], NULL, NULL, &pk) != CDM_OK || pk != state->previous_nota)
            state->lookup_mismatch++;
        cdm_object *previous_nota = NULL;
        TRY(cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, "Nota", state->previous_nota, &previous_nota));
        TRY(cdm_object_set_int64(previous_nota, "revisada", row));
    }

    /* The category: found by a fetch of the destination (it may have been made earlier in this
    ** batch, not written yet), else made. */
    TRY(cdm_object_get_text(source, "categoria", &text, &length, &is_null));
    if (!is_null) {
        cdm_field name = cdm_field_text(NULL, text);
        cdm_list *found = NULL;
        TRY(cdm_context_fetch_destination(ctx, "Categoria", "nombre == %@", &name, 1, 0, 0, &found));
        size_t count = 0;
        TRY(cdm_list_count(found, &count));
        cdm_object *categoria = NULL;
        if (count > 1) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "a category was made twice");
        if (count == 1) {
            TRY(cdm_list_object_at(found, 0, &categoria));
        } else {
            TRY(cdm_context_create_instance(ctx, "Categoria", &categoria));
            TRY(cdm_object_set_text(categoria, "nombre", text, length));
            state->categories_made++;
        }
        TRY(cdm_object_add_object(nota, "categorias", categoria));
    }
    TRY(cdm_object_id(source, NULL, NULL, &state->previous_source));
    TRY(cdm_object_id(nota, NULL, NULL, &state->previous_nota));
    return cdm_context_associate(ctx, source, nota);
}

static int run(const char *strict, cdm_model *src, const char *source, const char *destination, batch_state *state,
               char *message, size_t size) {
    char json[2048];
    snprintf(json, sizeof json, DESTINATION_MODEL, strict);
    cdm_model *dst = NULL;
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    int rc = cdm_model_from_json(json, &dst);
    if (rc == CDM_OK) rc = cdm_mapping_from_json(MAPPING, &mapping);
    if (rc == CDM_OK) rc = cdm_migration_new(src, dst, &mapping, 1, &migration);
    if (rc == CDM_OK) rc = cdm_migration_set_batch_size(migration, BATCH);
    cdm_policy hooks = {0};
    hooks.create_destination_instances = create_row;
    if (rc == CDM_OK)
        rc = cdm_migration_register_policy(migration, "BatchRowsPolicy", &hooks, sizeof hooks, state, NULL);
    if (rc == CDM_OK) rc = cdm_migration_run(migration, source, destination);
    snprintf(message, size, "%s", migration ? cdm_migration_errmsg(migration) : cdm_last_errmsg());
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(dst);
    return rc;
}

static long long scalar(sqlite3 *db, const char *sql) {
    sqlite3_stmt *statement = NULL;
    long long value = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, NULL) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW)
        value = sqlite3_column_int64(statement, 0);
    else
        fprintf(stderr, "sqlite: %s (%s)\n", sqlite3_errmsg(db), sql);
    sqlite3_finalize(statement);
    return value;
}

static void test_single_row_hooks_across_batches_see_earlier_rows(cdm_model *src, const char *source) {
    const char *destination = path_in_dir("batches.sqlite");
    static batch_state state;
    memset(&state, 0, sizeof state);
    state.fail_at = -1;
    char message[1024];
    CHECK_RC(run("true", src, source, destination, &state, message, sizeof message), CDM_OK);
    CHECK(state.rows == NOTES);
    CHECK(state.stale_context_live == 0);
    CHECK(state.stale_source_live == 0);
    CHECK(state.inherited_error == 0);
    CHECK(state.count_mismatch == 0);
    CHECK(state.lookup_mismatch == 0);
    CHECK(state.categories_made == 4);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(destination, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA") == NOTES);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZCATEGORIA") == 4);
    CHECK(scalar(db, "SELECT COUNT(DISTINCT ZNOMBRE) FROM ZCATEGORIA") == 4);
    /* Notes in source order with their text (the one without stays without). */
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA WHERE ZCONTENIDO = 'nota ' || (Z_PK - 1)") == NOTES - 1);
    CHECK(scalar(db, "SELECT ZCONTENIDO IS NULL FROM ZNOTA WHERE Z_PK = 6") == 1);
    /* Each note but the last was numbered by the next row, in its own batch or a later one. */
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA WHERE ZREVISADA = Z_PK") == NOTES - 1);
    CHECK(scalar(db, "SELECT ZREVISADA IS NULL FROM ZNOTA WHERE Z_PK = 10") == 1);
    /* One join row per note with a category, to the category of its name. */
    CHECK(scalar(db, "SELECT COUNT(*) FROM Z_1NOTAS") == 8);
    CHECK(scalar(db, "SELECT COUNT(*) FROM Z_1NOTAS j JOIN ZCATEGORIA c ON c.Z_PK = j.Z_1CATEGORIAS "
                     "JOIN ZNOTA n ON n.Z_PK = j.Z_2NOTAS WHERE "
                     "(n.Z_PK IN (1, 3, 7) AND c.ZNOMBRE = 'Ideas') OR (n.Z_PK IN (2, 6) AND c.ZNOMBRE = 'Viajes') OR "
                     "(n.Z_PK IN (5, 10) AND c.ZNOMBRE = 'Salud') OR (n.Z_PK = 8 AND c.ZNOMBRE = 'Trabajo')") == 8);
    sqlite3_close(db);
}

static void test_an_error_in_the_middle_of_a_batch_names_the_object(cdm_model *src, const char *source) {
    const char *destination = path_in_dir("failed.sqlite");
    static batch_state state;
    memset(&state, 0, sizeof state);
    state.fail_at = 7;  /* the second row of the third batch */
    char message[1024];
    CHECK_RC(run("true", src, source, destination, &state, message, sizeof message), CDM_NOTFOUND);
    CHECK_HAS(message, "entity 'Nota' has no attribute 'nope'");
    CHECK(state.rows == 8);
    CHECK(access(destination, F_OK) != 0); /* a failed migration leaves no destination */
}

static void test_a_validation_failure_after_the_hooks_names_the_object(cdm_model *src, const char *source) {
    const char *destination = path_in_dir("invalid.sqlite");
    static batch_state state;
    memset(&state, 0, sizeof state);
    state.fail_at = -1;
    char message[1024];
    CHECK_RC(run("false", src, source, destination, &state, message, sizeof message),
             CDM_VALIDATION_MISSING_MANDATORY_PROPERTY);
    CHECK_HAS(message, "contenido");
    CHECK_HAS(message, "Nota");
    CHECK(state.rows == NOTES); /* validation runs after every hook, as Core Data's stage 3 */
    CHECK(access(destination, F_OK) != 0);
}

int main(void) {
    if (!scratch_begin("policy-rows-batches")) return 2;
    cdm_model *src = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &src), CDM_OK);
    static char source[512];
    snprintf(source, sizeof source, "%s", path_in_dir("v2.sqlite"));
    if (make_source(src, source)) {
        test_single_row_hooks_across_batches_see_earlier_rows(src, source);
        test_an_error_in_the_middle_of_a_batch_names_the_object(src, source);
        test_a_validation_failure_after_the_hooks_names_the_object(src, source);
    } else {
        failed++;
        fprintf(stderr, "FAIL: could not make the source store\n");
    }
    cdm_model_free(src);
    return scratch_end("");
}
