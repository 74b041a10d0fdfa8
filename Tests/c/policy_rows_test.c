/* C tests of a policy written with the single-row hook, as Core Data has it: one
** create_destination_instances call per source note that makes the note, applies the attribute
** mappings, finds or makes its category, adds the join row and associates. Join rows and
** associations are buffered and written a chunk at a time: every call must still see what the
** earlier rows made (the category's notes, the destination of an earlier source), the result must
** be the one row-by-row writes give, and an error must name what is at fault. Associations made
** in key order, kept as key ranges, must answer Core Data's look-ups and the report as rows would.
** Prints "N passed, M failed" last; exits non-zero on any failure. */
#include <cdmigrate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "scratch.h"
#include "cdmigrate_internal.h"

static const char *SOURCE_MODEL =
    "{\"name\": \"V2\", \"entities\": [{\"name\": \"Nota\", \"attributes\": ["
    " {\"name\": \"contenido\", \"type\": \"string\"}, {\"name\": \"categoria\", \"type\": \"string\"}]}]}";
static const char *DESTINATION_MODEL =
    "{\"name\": \"V3\", \"entities\": ["
    " {\"name\": \"Nota\", \"attributes\": [{\"name\": \"contenido\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"categorias\", \"destination\": \"Categoria\", \"inverse\": \"notas\", \"toMany\": true}]},"
    " {\"name\": \"Categoria\", \"attributes\": [{\"name\": \"nombre\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"notas\", \"destination\": \"Nota\", \"inverse\": \"categorias\", \"toMany\": true}]}]}";
static const char *MAPPING =
    "{\"entityMappings\": [{\"name\": \"NotaToNota\", \"sourceEntity\": \"Nota\", \"destinationEntity\": \"Nota\", \"predicate\": \"TRUEPREDICATE\","
    " \"policy\": \"RowsPolicy\", \"attributeMappings\": {\"contenido\": \"$source.contenido\"}}]}";

/* More notes than one chunk of buffered join rows and associations (200). */
#define NOTES 530
static const char *CATEGORIES[] = {"Trabajo", "Ideas", NULL, "Viajes", "Ideas", "Salud", "Trabajo"};
#define CATEGORY_CYCLE 7

static const char *category_of(int i) { return CATEGORIES[i % CATEGORY_CYCLE]; }

static int make_source(cdm_model *model, const char *path) {
    cdm_store *store = NULL;
    if (cdm_store_create(model, path, &store) != CDM_OK) return 0;
    for (int i = 0; i < NOTES; i++) {
        cdm_object *nota = NULL;
        char text[64];
        snprintf(text, sizeof text, "nota %d de %s", i, category_of(i) ? category_of(i) : "nadie");
        if (cdm_store_insert(store, "Nota", &nota) != CDM_OK) return 0;
        if (cdm_object_set_text(nota, "contenido", text, CDM_NUL_TERMINATED) != CDM_OK) return 0;
        if (category_of(i) && cdm_object_set_text(nota, "categoria", category_of(i), CDM_NUL_TERMINATED) != CDM_OK)
            return 0;
    }
    int rc = cdm_store_save(store);
    cdm_store_close(store);
    return rc == CDM_OK;
}

typedef struct {
    char names[8][32];
    int64_t pks[8];
    int notes[8];   /* notes added to each category so far */
    int made;
    int64_t previous_source;  /* the last source note's key, 0 before the first */
    int64_t previous_nota;    /* the destination note made from it */
    int rows;
    int fail_at;              /* the row whose hook sets an attribute the entity lacks (-1: none) */
    int seen_notes_mismatch;  /* rows where the category's notes read mid-run were not the ones added */
    int seen_lookup_mismatch; /* rows where the previous source's destination was not found */
    int no_lookups;           /* no look-up per row: the associations come in key order, kept as key ranges */
    int end_lookups;          /* look-ups made at the end of instance creation */
    int end_mismatch;         /* look-ups there that did not find the destination made from the source */
} rows_state;

#define TRY(expr) do { int rc_ = (expr); if (rc_ != CDM_OK) return rc_; } while (0)

static int create_row(cdm_context *ctx, cdm_object *source, void *user) {
    rows_state *state = user;
    int row = state->rows++;
    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    if (row == state->fail_at) TRY(cdm_object_set_text(nota, "nope", "x", CDM_NUL_TERMINATED));
    /* The destination of the previous source, associated one call ago, is found. */
    if (state->previous_source && !state->no_lookups) {
        cdm_object *previous = NULL;
        TRY(cdm_context_instance_with_id(ctx, CDM_STORE_SOURCE, "Nota", state->previous_source, &previous));
        cdm_object *const *made = NULL;
        size_t count = 0;
        TRY(cdm_context_destination_instances(ctx, "NotaToNota", &previous, 1, &made, &count));
        int64_t pk = 0;
        if (count != 1 || cdm_object_id(made[0], NULL, NULL, &pk) != CDM_OK || pk != state->previous_nota)
            state->seen_lookup_mismatch++;
    }
    const char *name = NULL;
    size_t length = 0;
    int is_null = 0;
    TRY(cdm_object_get_text(source, "categoria", &name, &length, &is_null));
    if (!is_null) {
        int which = -1;
        for (int i = 0; i < state->made; i++)
            if (!strcmp(state->names[i], name)) which = i;
        cdm_object *categoria = NULL;
        if (which < 0) {
            if (state->made == 8) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "too many categories");
            which = state->made++;
            snprintf(state->names[which], sizeof state->names[which], "%s", name);
            TRY(cdm_context_create_instance(ctx, "Categoria", &categoria));
            TRY(cdm_object_set_text(categoria, "nombre", name, (long)length));
            TRY(cdm_object_id(categoria, NULL, NULL, &state->pks[which]));
        } else {
            TRY(cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, "Categoria", state->pks[which], &categoria));
        }
        /* The category's notes, read from the destination mid-run: every note added so far. */
        cdm_object *const *notas = NULL;
        size_t count = 0;
        TRY(cdm_object_get_objects(categoria, "notas", &notas, &count));
        if ((int)count != state->notes[which]) state->seen_notes_mismatch++;
        TRY(cdm_object_add_object(nota, "categorias", categoria));
        state->notes[which]++;
    }
    int64_t source_pk = 0;
    TRY(cdm_object_id(source, NULL, NULL, &source_pk));
    TRY(cdm_object_id(nota, NULL, NULL, &state->previous_nota));
    state->previous_source = source_pk;
    return cdm_context_associate(ctx, source, nota);
}

/* At the end of stage 1: every source note's destination and every destination note's source,
** through Core Data's look-ups (the note made from source key k has key k). */
static int end_creation(cdm_context *ctx, void *user) {
    rows_state *state = user;
    for (int64_t pk = 1; pk <= NOTES; pk += pk < 40 ? 1 : 37) {
        cdm_object *source = NULL, *nota = NULL;
        TRY(cdm_context_instance_with_id(ctx, CDM_STORE_SOURCE, "Nota", pk, &source));
        TRY(cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, "Nota", pk, &nota));
        cdm_object *const *made = NULL, *const *from = NULL;
        size_t made_count = 0, from_count = 0;
        TRY(cdm_context_destination_instances(ctx, "NotaToNota", &source, 1, &made, &made_count));
        TRY(cdm_context_source_instances(ctx, "NotaToNota", &nota, 1, &from, &from_count));
        int64_t made_pk = 0, from_pk = 0;
        if (made_count != 1 || from_count != 1 || cdm_object_id(made[0], NULL, NULL, &made_pk) != CDM_OK ||
            cdm_object_id(from[0], NULL, NULL, &from_pk) != CDM_OK || made_pk != pk || from_pk != pk)
            state->end_mismatch++;
        state->end_lookups++;
    }
    return CDM_OK;
}

/* Runs MAPPING from source to destination with RowsPolicy's create_destination_instances hook
** `create` (given `state`); checks that the migration succeeds. */
static void run_create_hook(cdm_model *src, cdm_model *dst, const char *source, const char *destination,
                            int (*create)(cdm_context *, cdm_object *, void *), void *state) {
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_mapping_from_json(MAPPING, &mapping), CDM_OK);
    CHECK_RC(cdm_migration_new(src, dst, &mapping, 1, &migration), CDM_OK);
    cdm_policy hooks = {0};
    hooks.create_destination_instances = create;
    CHECK_RC(cdm_migration_register_policy(migration, "RowsPolicy", &hooks, sizeof hooks, state, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, source, destination), CDM_OK);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
}

static int run(cdm_model *src, cdm_model *dst, const char *source, const char *destination, rows_state *state,
               char *message, size_t size) {
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    int rc = cdm_mapping_from_json(MAPPING, &mapping);
    if (rc == CDM_OK) rc = cdm_migration_new(src, dst, &mapping, 1, &migration);
    cdm_policy hooks = {0};
    hooks.create_destination_instances = create_row;
    if (state->no_lookups) hooks.end_instance_creation = end_creation;
    if (rc == CDM_OK) rc = cdm_migration_register_policy(migration, "RowsPolicy", &hooks, sizeof hooks, state, NULL);
    if (rc == CDM_OK) rc = cdm_migration_run(migration, source, destination);
    snprintf(message, size, "%s", migration ? cdm_migration_errmsg(migration) : "");
    char *report = NULL;
    if (rc == CDM_OK && state->no_lookups && cdm_migration_report_json(migration, &report) == CDM_OK) {
        char expected[64];
        snprintf(expected, sizeof expected, "\"associations\":%d", NOTES);
        if (!strstr(report, expected)) state->end_mismatch++;
        cdm_free(report);
    }
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
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

static void test_single_row_hooks_see_what_earlier_rows_made(cdm_model *src, cdm_model *dst, const char *source) {
    const char *destination = path_in_dir("rows.sqlite");
    static rows_state state;
    memset(&state, 0, sizeof state);
    state.fail_at = -1;
    char message[1024];
    CHECK_RC(run(src, dst, source, destination, &state, message, sizeof message), CDM_OK);
    CHECK(state.rows == NOTES);
    CHECK(state.seen_notes_mismatch == 0);
    CHECK(state.seen_lookup_mismatch == 0);
    CHECK(state.made == 4);
    int with_category = 0;
    for (int i = 0; i < NOTES; i++) with_category += category_of(i) != NULL;
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(destination, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA") == NOTES);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZCATEGORIA") == 4);
    /* Row by row as the hook made them: notes numbered in source order, categories in order of first use. */
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA WHERE ZCONTENIDO = 'nota ' || (Z_PK - 1) || ' de ' || "
                     "COALESCE((SELECT c.ZNOMBRE FROM Z_1NOTAS j JOIN ZCATEGORIA c ON c.Z_PK = j.Z_1CATEGORIAS "
                     "WHERE j.Z_2NOTAS = ZNOTA.Z_PK), 'nadie')") == NOTES);
    CHECK(scalar(db, "SELECT COUNT(*) FROM Z_1NOTAS") == with_category);
    CHECK(scalar(db, "SELECT group_concat(ZNOMBRE, ',') FROM (SELECT ZNOMBRE FROM ZCATEGORIA ORDER BY Z_PK)") != -1);
    sqlite3_stmt *names = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT group_concat(ZNOMBRE, ',') FROM (SELECT ZNOMBRE FROM ZCATEGORIA ORDER BY Z_PK)",
                             -1, &names, NULL) == SQLITE_OK);
    if (names && sqlite3_step(names) == SQLITE_ROW)
        CHECK_STR((const char *)sqlite3_column_text(names, 0), "Trabajo,Ideas,Viajes,Salud");
    sqlite3_finalize(names);
    sqlite3_close(db);
}

/* Without a look-up per row, each note associated with its source in key order: the associations
** are kept as key ranges, and must answer Core Data's look-ups and the report as rows would. */
static void test_associations_made_in_key_order_answer_look_ups_and_the_report(cdm_model *src, cdm_model *dst,
                                                                            const char *source) {
    const char *destination = path_in_dir("in-order.sqlite");
    static rows_state state;
    memset(&state, 0, sizeof state);
    state.fail_at = -1;
    state.no_lookups = 1;
    char message[1024];
    CHECK_RC(run(src, dst, source, destination, &state, message, sizeof message), CDM_OK);
    CHECK(state.rows == NOTES);
    CHECK(state.end_lookups > 50);
    CHECK(state.end_mismatch == 0);
    CHECK(state.seen_notes_mismatch == 0);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(destination, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA WHERE ZCONTENIDO = 'nota ' || (Z_PK - 1) || ' de ' || "
                     "COALESCE((SELECT c.ZNOMBRE FROM Z_1NOTAS j JOIN ZCATEGORIA c ON c.Z_PK = j.Z_1CATEGORIAS "
                     "WHERE j.Z_2NOTAS = ZNOTA.Z_PK), 'nadie')") == NOTES);
    sqlite3_close(db);
}

static void test_an_error_in_a_row_names_the_entity_and_attribute(cdm_model *src, cdm_model *dst, const char *source) {
    const char *destination = path_in_dir("failed.sqlite");
    static rows_state state;
    memset(&state, 0, sizeof state);
    state.fail_at = 345;  /* past the first chunk of buffered rows */
    char message[1024];
    CHECK_RC(run(src, dst, source, destination, &state, message, sizeof message), CDM_NOTFOUND);
    CHECK_HAS(message, "entity 'Nota' has no attribute 'nope'");
    CHECK(state.rows == 346);
    CHECK(access(destination, F_OK) != 0);  /* a failed migration leaves no destination */
}

/* A hook that passes every name from one reused buffer, as a host building names at run time
** does: each call must read the name the buffer holds then (not what it held at an earlier call
** with the same pointer), the same name in two entities must be each entity's own property, and
** two texts read from one instance must both stay valid while the handle lives. */
typedef struct {
    int rows;
    int mismatches;
    int refusals;  /* unknown names refused as they should be */
} names_state;

static int create_row_reused_names(cdm_context *ctx, cdm_object *source, void *user) {
    names_state *state = user;
    state->rows++;
    char name[32];
    cdm_object *nota = NULL, *other = NULL;
    snprintf(name, sizeof name, "Nota");
    TRY(cdm_context_create_instance(ctx, name, &nota));
    const char *entity = NULL;
    if (cdm_object_entity_name(nota, &entity) != CDM_OK || strcmp(entity, "Nota")) state->mismatches++;
    snprintf(name, sizeof name, "Categoria");
    TRY(cdm_context_create_instance(ctx, name, &other));
    if (cdm_object_entity_name(other, &entity) != CDM_OK || strcmp(entity, "Categoria")) state->mismatches++;
    const char *contenido = NULL, *categoria = NULL;
    size_t length = 0;
    int is_null = 0;
    snprintf(name, sizeof name, "contenido");
    TRY(cdm_object_get_text(source, name, &contenido, &length, &is_null));
    snprintf(name, sizeof name, "categoria");
    TRY(cdm_object_get_text(source, name, &categoria, &length, &is_null));
    /* Both still valid, each its own attribute's. */
    if (strncmp(contenido, "nota ", 5)) state->mismatches++;
    if (!is_null && !strstr(contenido, categoria)) state->mismatches++;
    /* The same name, "contenido", in the destination entity: set there, read back. */
    snprintf(name, sizeof name, "contenido");
    TRY(cdm_object_set_text(nota, name, contenido, CDM_NUL_TERMINATED));
    const char *copied = NULL;
    TRY(cdm_object_get_text(nota, name, &copied, &length, &is_null));
    if (strcmp(copied, contenido)) state->mismatches++;
    /* A name the entity lacks, in the same buffer, after known ones: refused. */
    snprintf(name, sizeof name, "contenidos");
    if (cdm_object_get_text(source, name, &copied, &length, &is_null) == CDM_NOTFOUND) state->refusals++;
    snprintf(name, sizeof name, "Notas");
    cdm_object *none = NULL;
    if (cdm_context_create_instance(ctx, name, &none) == CDM_NOTFOUND) state->refusals++;
    snprintf(name, sizeof name, "notas");
    if (cdm_object_add_object(nota, name, other) == CDM_NOTFOUND) state->refusals++;
    snprintf(name, sizeof name, "categorias");
    TRY(cdm_object_add_object(nota, name, other));
    /* Instances by ID through the same buffer: the source note, then the destination category. */
    int64_t pk = 0;
    TRY(cdm_object_id(source, NULL, NULL, &pk));
    cdm_object *found = NULL;
    snprintf(name, sizeof name, "Nota");
    TRY(cdm_context_instance_with_id(ctx, CDM_STORE_SOURCE, name, pk, &found));
    TRY(cdm_object_get_text(found, "contenido", &copied, &length, &is_null));
    if (strcmp(copied, contenido)) state->mismatches++;
    TRY(cdm_object_id(other, NULL, NULL, &pk));
    snprintf(name, sizeof name, "Categoria");
    TRY(cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, name, pk, &found));
    if (cdm_object_entity_name(found, &entity) != CDM_OK || strcmp(entity, "Categoria")) state->mismatches++;
    snprintf(name, sizeof name, "Nota");
    if (cdm_context_instance_with_id(ctx, CDM_STORE_DESTINATION, name, pk + 100000, &found) == CDM_NOTFOUND)
        state->refusals++;
    return cdm_context_associate(ctx, source, nota);
}

static void test_names_in_a_reused_buffer_are_read_anew(cdm_model *src, cdm_model *dst, const char *source) {
    const char *destination = path_in_dir("reused-names.sqlite");
    static names_state state;
    memset(&state, 0, sizeof state);
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    int rc = cdm_mapping_from_json(MAPPING, &mapping);
    if (rc == CDM_OK) rc = cdm_migration_new(src, dst, &mapping, 1, &migration);
    cdm_policy hooks = {0};
    hooks.create_destination_instances = create_row_reused_names;
    if (rc == CDM_OK) rc = cdm_migration_register_policy(migration, "RowsPolicy", &hooks, sizeof hooks, &state, NULL);
    if (rc == CDM_OK) rc = cdm_migration_run(migration, source, destination);
    CHECK_RC(rc, CDM_OK);
    if (rc != CDM_OK && migration) fprintf(stderr, "  %s\n", cdm_migration_errmsg(migration));
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    CHECK(state.rows == NOTES);
    CHECK(state.mismatches == 0);
    CHECK(state.refusals == 4 * NOTES);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(destination, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA WHERE ZCONTENIDO LIKE 'nota %'") == NOTES);
    CHECK(scalar(db, "SELECT COUNT(*) FROM Z_1NOTAS") == NOTES);
    sqlite3_close(db);
}

/* Handles across rows: the source and destination handles of one row are stale in the next (the
** row's entries are reused for the next row's handles), a retained source handle keeps its own
** values while later rows are read and after the stage, and a retained handle is not reused. */
#define KEPT 12
typedef struct {
    cdm_object *previous_source, *previous_nota;
    cdm_object *kept[KEPT];
    char kept_text[KEPT][64];
    int kept_count;
    int rows, stale, mismatches, late_checks;
} handles_state;

static int check_kept(handles_state *state) {
    for (int i = 0; i < state->kept_count; i++) {
        const char *text = NULL;
        size_t length = 0;
        int is_null = 0;
        TRY(cdm_object_get_text(state->kept[i], "contenido", &text, &length, &is_null));
        if (is_null || strcmp(text, state->kept_text[i])) state->mismatches++;
        state->late_checks++;
    }
    return CDM_OK;
}

static int create_row_handles(cdm_context *ctx, cdm_object *source, void *user) {
    handles_state *state = user;
    int row = state->rows++;
    const char *text = NULL;
    size_t length = 0;
    int is_null = 0;
    if (state->previous_source) {
        /* Stale, unless retained (then still good). */
        int retained = state->kept_count && state->kept[state->kept_count - 1] == state->previous_source;
        if (cdm_object_get_text(state->previous_source, "contenido", &text, &length, &is_null) ==
            (retained ? CDM_OK : CDM_MISUSE))
            state->stale++;
        if (cdm_object_set_text(state->previous_nota, "contenido", "x", CDM_NUL_TERMINATED) == CDM_MISUSE)
            state->stale++;
    }
    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    /* The kept handles, read in a later row: their own values, not this row's. */
    TRY(check_kept(state));
    if (row % 45 == 7 && state->kept_count < KEPT) {
        TRY(cdm_object_retain(source));
        TRY(cdm_object_get_text(source, "contenido", &text, &length, &is_null));
        snprintf(state->kept_text[state->kept_count], sizeof state->kept_text[0], "%s", text);
        state->kept[state->kept_count++] = source;
    }
    TRY(cdm_object_get_text(source, "contenido", &text, &length, &is_null));
    char expected[64];
    snprintf(expected, sizeof expected, "nota %d de ", row);
    if (strncmp(text, expected, strlen(expected))) state->mismatches++;
    state->previous_source = source;
    state->previous_nota = nota;
    return cdm_context_associate(ctx, source, nota);
}

static int end_creation_handles(cdm_context *ctx, void *user) {
    (void)ctx;
    handles_state *state = user;
    TRY(check_kept(state));
    for (int i = 0; i < state->kept_count; i++) cdm_object_release(state->kept[i]);
    return CDM_OK;
}

static void test_row_handles_are_stale_in_the_next_row_and_retained_ones_keep_their_values(
    cdm_model *src, cdm_model *dst, const char *source) {
    const char *destination = path_in_dir("handles.sqlite");
    static handles_state state;
    memset(&state, 0, sizeof state);
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    int rc = cdm_mapping_from_json(MAPPING, &mapping);
    if (rc == CDM_OK) rc = cdm_migration_new(src, dst, &mapping, 1, &migration);
    cdm_policy hooks = {0};
    hooks.create_destination_instances = create_row_handles;
    hooks.end_instance_creation = end_creation_handles;
    if (rc == CDM_OK) rc = cdm_migration_register_policy(migration, "RowsPolicy", &hooks, sizeof hooks, &state, NULL);
    if (rc == CDM_OK) rc = cdm_migration_run(migration, source, destination);
    CHECK_RC(rc, CDM_OK);
    if (rc != CDM_OK && migration) fprintf(stderr, "  %s\n", cdm_migration_errmsg(migration));
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    CHECK(state.rows == NOTES);
    CHECK(state.stale == 2 * (NOTES - 1));
    CHECK(state.mismatches == 0);
    CHECK(state.kept_count == KEPT);
    CHECK(state.late_checks > KEPT * 100);
}

/* The mapped values of a note, applied and not read (written with the buffer, by SQL), read back
** after applying, or counted in the destination mid-run: the same in every case. */
typedef struct {
    int rows;
    int mismatches;
    int reads;
    int counts;
} reading_state;

static int create_row_reading(cdm_context *ctx, cdm_object *source, void *user) {
    reading_state *state = user;
    int row = state->rows++;
    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    if (row % 3 == 0) {
        const char *text = NULL;
        size_t length = 0;
        int is_null = 0;
        char expected[64];
        TRY(cdm_object_get_text(source, "contenido", &text, &length, &is_null));
        snprintf(expected, sizeof expected, "%.*s", (int)length, text);
        TRY(cdm_object_get_text(nota, "contenido", &text, &length, &is_null));
        if (is_null || length != strlen(expected) || memcmp(text, expected, length)) state->mismatches++;
        state->reads++;
    }
    if (row % 101 == 0) {
        size_t count = 0;
        TRY(cdm_context_count_destination(ctx, "Nota", "contenido BEGINSWITH 'nota '", NULL, 0, 0, &count));
        if (count != (size_t)row + 1) state->mismatches++;
        state->counts++;
    }
    return cdm_context_associate(ctx, source, nota);
}

static void test_applied_values_read_counted_or_left_to_the_write_are_the_same(cdm_model *src, cdm_model *dst,
                                                                                const char *source) {
    const char *destination = path_in_dir("reading.sqlite");
    static reading_state state;
    memset(&state, 0, sizeof state);
    run_create_hook(src, dst, source, destination, create_row_reading, &state);
    CHECK(state.rows == NOTES);
    CHECK(state.reads == (NOTES + 2) / 3);
    CHECK(state.counts == (NOTES + 100) / 101);
    CHECK(state.mismatches == 0);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(destination, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA WHERE ZCONTENIDO LIKE 'nota ' || (Z_PK - 1) || ' de %' AND Z_OPT = 1 "
                     "AND Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Nota')") == NOTES);
    sqlite3_close(db);
}

/* A row's handles after the row, and errors within it: a kept context or object handle of the
** last row gives CDM_MISUSE with the message saying it is no longer valid (the thread's last
** error only, not the new row's context); an error on a live handle goes to the row's context;
** text set in a row reads back as set; many handles in one row (more than the table held and
** than the row's scope keeps for reuse) are all good in their row and all stale after it, and
** the handles live at the same point of every row stay as many. */
#define MANY_HANDLES 150
typedef struct {
    cdm_context *previous_ctx;
    cdm_object *previous_source, *previous_many_first, *previous_many_last;
    int rows, stale, stale_messages, context_kept_clean, live_errors, set_reads, many_rows, many_good;
    size_t handles_at_start, handles_changed;
} after_row_state;

static int create_row_after(cdm_context *ctx, cdm_object *source, void *user) {
    after_row_state *state = user;
    int row = state->rows++;
    size_t handles = cdm_internal_handle_count();
    if (row == 0) state->handles_at_start = handles;
    else if (handles != state->handles_at_start) state->handles_changed++;
    const char *text = NULL;
    size_t length = 0;
    int is_null = 0;
    if (state->previous_source) {
        cdm_object *stale[] = {state->previous_source, state->previous_many_first, state->previous_many_last};
        for (int i = 0; i < 3; i++) {
            if (!stale[i]) continue;
            if (cdm_object_get_text(stale[i], "contenido", &text, &length, &is_null) == CDM_MISUSE) state->stale++;
            if (strstr(cdm_last_errmsg(), "the object handle is no longer valid") &&
                strstr(cdm_last_errmsg(), "cdm_object_retain"))
                state->stale_messages++;
        }
        cdm_object *made = NULL;
        if (cdm_context_create_instance(state->previous_ctx, "Nota", &made) == CDM_MISUSE && made == NULL) state->stale++;
        if (strstr(cdm_last_errmsg(), "the context handle is no longer valid")) state->stale_messages++;
        if (cdm_context_errcode(ctx) == CDM_OK) state->context_kept_clean++;
    }
    /* An error on a live handle: the row's context keeps it, and it is the thread's last error. */
    if (cdm_object_get_text(source, "nope", &text, &length, &is_null) == CDM_NOTFOUND &&
        cdm_context_errcode(ctx) == CDM_NOTFOUND && strstr(cdm_context_errmsg(ctx), "no attribute 'nope'") &&
        cdm_last_errcode() == CDM_NOTFOUND)
        state->live_errors++;
    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    /* Text read, set and read again in the same row: each read gives the text set last. */
    TRY(cdm_object_get_text(nota, "contenido", &text, &length, &is_null));
    char set[64];
    int set_length = snprintf(set, sizeof set, "cambiada en la fila %d", row);
    TRY(cdm_object_set_text(nota, "contenido", set, CDM_NUL_TERMINATED));
    TRY(cdm_object_get_text(nota, "contenido", &text, &length, &is_null));
    int first_ok = !is_null && length == (size_t)set_length && !strcmp(text, set);
    TRY(cdm_object_set_text(nota, "contenido", "corta", CDM_NUL_TERMINATED));
    TRY(cdm_object_get_text(nota, "contenido", &text, &length, &is_null));
    if (first_ok && length == 5 && !strcmp(text, "corta")) state->set_reads++;
    state->previous_many_first = state->previous_many_last = NULL;
    if (row % 50 == 3) {
        int64_t key = 0;
        TRY(cdm_object_id(source, NULL, NULL, &key));
        cdm_object *many[MANY_HANDLES];
        for (int i = 0; i < MANY_HANDLES; i++)
            TRY(cdm_context_instance_with_id(ctx, CDM_STORE_SOURCE, "Nota", key, &many[i]));
        int good = 0;
        for (int i = 0; i < MANY_HANDLES; i++) {
            int64_t other = 0;
            if (cdm_object_id(many[i], NULL, NULL, &other) == CDM_OK && other == key) good++;
            for (int j = 0; j < i; j++) if (many[j] == many[i]) good--;
        }
        if (good == MANY_HANDLES) state->many_good++;
        state->many_rows++;
        state->previous_many_first = many[0];
        state->previous_many_last = many[MANY_HANDLES - 1];
    }
    state->previous_ctx = ctx;
    state->previous_source = source;
    return cdm_context_associate(ctx, source, nota);
}

static void test_a_rows_handles_are_stale_after_it_and_its_errors_go_where_they_did(cdm_model *src, cdm_model *dst,
                                                                                     const char *source) {
    const char *destination = path_in_dir("after-row.sqlite");
    static after_row_state state;
    memset(&state, 0, sizeof state);
    run_create_hook(src, dst, source, destination, create_row_after, &state);
    int many_rows = (NOTES - 3 + 49) / 50;
    CHECK(state.rows == NOTES);
    /* Per later row: the source and context, and the many handles' first and last after a row that made them. */
    CHECK(state.stale == 2 * (NOTES - 1) + 2 * many_rows);
    CHECK(state.stale_messages == state.stale);
    CHECK(state.context_kept_clean == NOTES - 1);
    CHECK(state.live_errors == NOTES);
    CHECK(state.set_reads == NOTES);
    CHECK(state.many_rows == many_rows);
    CHECK(state.many_good == many_rows);
    CHECK(state.handles_at_start > 0);
    CHECK(state.handles_changed == 0);
    CHECK(cdm_internal_handle_count() == 0);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(destination, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(scalar(db, "SELECT COUNT(*) FROM ZNOTA WHERE ZCONTENIDO = 'corta'") == NOTES);
    sqlite3_close(db);
}

/* What the text tests' hooks do with each row after their reads: a Nota made from the source,
** its attributes copied by the mapping, the two associated. */
static int copy_note(cdm_context *ctx, cdm_object *source) {
    cdm_object *nota = NULL;
    TRY(cdm_context_create_instance(ctx, "Nota", &nota));
    TRY(cdm_context_apply_attribute_mappings(ctx, source, nota));
    return cdm_context_associate(ctx, source, nota);
}

/* A source store named `name` in the scratch folder, whose sqlite3 connection `*db` is left open
** for the test to shape its rows. */
static const char *text_source(cdm_model *src, const char *name, sqlite3 **db) {
    static char source[512];
    snprintf(source, sizeof source, "%s", path_in_dir(name));
    CHECK(make_source(src, source));
    CHECK(sqlite3_open(source, db) == SQLITE_OK);
    return source;
}

/* Text read from the source row as it is stored: valid UTF-8 (ASCII or not) as it is, invalid
** UTF-8 repaired (each bad sequence becomes U+FFFD) as the engine reads it, a blob in a text column
** as its bytes' text, null as null; by name and by index alike, and the same again when a
** retained source is read after its row has passed. */
typedef struct {
    int rows, mismatches, checked;
    cdm_object *kept[4];
    int kept_row[4];
    int kept_count;
} stored_text_state;

/* What each of the first rows holds in "categoria" (NULL: null), and what reading it gives. */
static const char *STORED_TEXT_SQL[] = {
    "UPDATE ZNOTA SET ZCATEGORIA = 'M\xc3\xbasica y a\xc3\xb1o' WHERE Z_PK = 1",
    "UPDATE ZNOTA SET ZCATEGORIA = CAST(X'4D7573FF6361' AS TEXT) WHERE Z_PK = 2",
    "UPDATE ZNOTA SET ZCATEGORIA = CAST(X'41C3' AS TEXT) WHERE Z_PK = 3",
    "UPDATE ZNOTA SET ZCATEGORIA = X'6869' WHERE Z_PK = 4",
    "UPDATE ZNOTA SET ZCATEGORIA = NULL WHERE Z_PK = 5",
    "UPDATE ZNOTA SET ZCATEGORIA = '' WHERE Z_PK = 6",
};
static const char *STORED_TEXT_READ[] = {"M\xc3\xbasica y a\xc3\xb1o", "Mus\xef\xbf\xbd" "ca", "A\xef\xbf\xbd", "hi", NULL, ""};
#define STORED_TEXT_ROWS 6

static int check_stored_text(stored_text_state *state, cdm_object *source, int row) {
    const char *expected = STORED_TEXT_READ[row];
    int index = -1;
    TRY(cdm_object_attribute_index(source, "categoria", &index));
    for (int by_index = 0; by_index < 2; by_index++) {
        const char *text = (const char *)1;
        size_t length = 99;
        int is_null = -1;
        TRY(by_index ? cdm_object_get_text_at(source, index, &text, &length, &is_null)
                     : cdm_object_get_text(source, "categoria", &text, &length, &is_null));
        int ok = expected ? (!is_null && text && length == strlen(expected) && !memcmp(text, expected, length + 1))
                          : (is_null == 1 && text == NULL && length == 0);
        if (!ok) state->mismatches++;
        state->checked++;
    }
    return CDM_OK;
}

static int create_row_stored_text(cdm_context *ctx, cdm_object *source, void *user) {
    stored_text_state *state = user;
    int row = state->rows++;
    if (row < STORED_TEXT_ROWS) {
        TRY(check_stored_text(state, source, row));
        if (row % 2 == 1 || row == 4) {
            TRY(cdm_object_retain(source));
            state->kept_row[state->kept_count] = row;
            state->kept[state->kept_count++] = source;
        }
    } else if (row == STORED_TEXT_ROWS) {
        /* The retained sources, read again once their rows have passed. */
        for (int i = 0; i < state->kept_count; i++) TRY(check_stored_text(state, state->kept[i], state->kept_row[i]));
        for (int i = 0; i < state->kept_count; i++) cdm_object_release(state->kept[i]);
    }
    return copy_note(ctx, source);
}

static void test_stored_text_reads_as_the_engine_reads_it(cdm_model *src, cdm_model *dst) {
    sqlite3 *db = NULL;
    const char *source = text_source(src, "stored-text.sqlite", &db);
    for (int i = 0; i < STORED_TEXT_ROWS; i++) CHECK(sqlite3_exec(db, STORED_TEXT_SQL[i], NULL, NULL, NULL) == SQLITE_OK);
    CHECK(scalar(db, "SELECT typeof(ZCATEGORIA) = 'blob' FROM ZNOTA WHERE Z_PK = 4") == 1);
    sqlite3_close(db);
    const char *destination = path_in_dir("stored-text-out.sqlite");
    static stored_text_state state;
    memset(&state, 0, sizeof state);
    run_create_hook(src, dst, source, destination, create_row_stored_text, &state);
    CHECK(state.rows == NOTES);
    CHECK(state.kept_count == 4);
    CHECK(state.checked == 2 * (STORED_TEXT_ROWS + 4));
    CHECK(state.mismatches == 0);
}

/* Texts whose lengths grow and shrink from row to row (past the buffer kept for an attribute,
** past its rounding, to nothing and null): each row's text read whole, twice by name and once by
** index, the pointers of one row's reads all holding that row's text. */
#define LENGTH_ROWS 10
static const int TEXT_LENGTHS[LENGTH_ROWS] = {3, 70, 5, 5000, 10, 4100, 200, -1, 0, 64};

static char *text_of_length(int row) {
    int n = TEXT_LENGTHS[row];
    char *text = malloc((size_t)n + 1);
    if (!text) return NULL;
    for (int i = 0; i < n; i++) text[i] = (char)('a' + (row + i) % 26);
    text[n] = '\0';
    return text;
}

typedef struct {
    int rows, mismatches, checked;
} text_length_state;

static int create_row_text_lengths(cdm_context *ctx, cdm_object *source, void *user) {
    text_length_state *state = user;
    int row = state->rows++;
    if (row < LENGTH_ROWS) {
        char *expected = TEXT_LENGTHS[row] < 0 ? NULL : text_of_length(row);
        int index = -1;
        TRY(cdm_object_attribute_index(source, "categoria", &index));
        const char *texts[3] = {NULL, NULL, NULL};
        for (int read = 0; read < 3; read++) {
            size_t length = 99;
            int is_null = -1;
            TRY(read == 2 ? cdm_object_get_text_at(source, index, &texts[read], &length, &is_null)
                          : cdm_object_get_text(source, "categoria", &texts[read], &length, &is_null));
            int ok = expected ? (!is_null && texts[read] && length == strlen(expected) &&
                                 !memcmp(texts[read], expected, length + 1))
                              : (is_null == 1 && texts[read] == NULL && length == 0);
            if (!ok) state->mismatches++;
            state->checked++;
        }
        /* A read again gives the same text: the latest pointer holds it whole. */
        if (expected && (!texts[2] || strcmp(texts[2], expected))) state->mismatches++;
        free(expected);
    }
    return copy_note(ctx, source);
}

static void test_texts_of_growing_and_shrinking_lengths_read_whole_row_after_row(cdm_model *src, cdm_model *dst) {
    sqlite3 *db = NULL;
    const char *source = text_source(src, "text-lengths.sqlite", &db);
    sqlite3_stmt *update = NULL;
    CHECK(sqlite3_prepare_v2(db, "UPDATE ZNOTA SET ZCATEGORIA = ? WHERE Z_PK = ?", -1, &update, NULL) == SQLITE_OK);
    for (int row = 0; row < LENGTH_ROWS; row++) {
        char *text = TEXT_LENGTHS[row] < 0 ? NULL : text_of_length(row);
        if (text) sqlite3_bind_text(update, 1, text, -1, free);
        else sqlite3_bind_null(update, 1);
        sqlite3_bind_int(update, 2, row + 1);
        CHECK(sqlite3_step(update) == SQLITE_DONE);
        sqlite3_reset(update);
    }
    sqlite3_finalize(update);
    CHECK(scalar(db, "SELECT length(ZCATEGORIA) FROM ZNOTA WHERE Z_PK = 4") == 5000);
    sqlite3_close(db);
    const char *destination = path_in_dir("text-lengths-out.sqlite");
    static text_length_state state;
    memset(&state, 0, sizeof state);
    run_create_hook(src, dst, source, destination, create_row_text_lengths, &state);
    CHECK(state.rows == NOTES);
    CHECK(state.checked == 3 * LENGTH_ROWS);
    CHECK(state.mismatches == 0);
}

int main(void) {
    if (!scratch_begin("policy-rows")) return 2;
    cdm_model *src = NULL, *dst = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &src), CDM_OK);
    CHECK_RC(cdm_model_from_json(DESTINATION_MODEL, &dst), CDM_OK);
    static char source[512];
    snprintf(source, sizeof source, "%s", path_in_dir("v2.sqlite"));
    if (make_source(src, source)) {
        test_single_row_hooks_see_what_earlier_rows_made(src, dst, source);
        test_an_error_in_a_row_names_the_entity_and_attribute(src, dst, source);
        test_associations_made_in_key_order_answer_look_ups_and_the_report(src, dst, source);
        test_names_in_a_reused_buffer_are_read_anew(src, dst, source);
        test_row_handles_are_stale_in_the_next_row_and_retained_ones_keep_their_values(src, dst, source);
        test_applied_values_read_counted_or_left_to_the_write_are_the_same(src, dst, source);
        test_a_rows_handles_are_stale_after_it_and_its_errors_go_where_they_did(src, dst, source);
        test_stored_text_reads_as_the_engine_reads_it(src, dst);
        test_texts_of_growing_and_shrinking_lengths_read_whole_row_after_row(src, dst);
    } else {
        failed++;
        fprintf(stderr, "FAIL: could not make the source store\n");
    }
    cdm_model_free(src);
    cdm_model_free(dst);
    return scratch_end("");
}
