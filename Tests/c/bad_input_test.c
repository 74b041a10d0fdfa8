/* The bad-input corpus (Tests/BadInput/corpus.json) through the C API: every case is run and must
** give exactly its result code and a message with its fragment — never a crash. The Python
** binding runs the same list (bindings/python/tests/test_bad_input_corpus.py).
** Usage: bad_input_test [corpus.json]  (default ../BadInput/corpus.json, from Tests/c).
** Prints "N passed, M failed" last; exits non-zero on any failure. */
#include <cdmigrate.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "scratch.h"

static char corpus_dir[512];

static const struct { const char *name; int code; } CODES[] = {
    {"CDM_OK", CDM_OK}, {"CDM_INVALID_JSON", CDM_INVALID_JSON}, {"CDM_INVALID_MODEL", CDM_INVALID_MODEL},
    {"CDM_INVALID_MAPPING", CDM_INVALID_MAPPING}, {"CDM_EXPRESSION_SYNTAX", CDM_EXPRESSION_SYNTAX},
    {"CDM_EXPRESSION_EVALUATION", CDM_EXPRESSION_EVALUATION}, {"CDM_INVALID_ARGUMENT", CDM_INVALID_ARGUMENT},
    {"CDM_IO", CDM_IO}, {"CDM_MISUSE", CDM_MISUSE}, {"CDM_NOTFOUND", CDM_NOTFOUND}, {"CDM_MISMATCH", CDM_MISMATCH},
    {"CDM_ENCODING", CDM_ENCODING}, {"CDM_MIGRATION_MISSING_MAPPING_MODEL", CDM_MIGRATION_MISSING_MAPPING_MODEL},
    {"CDM_MIGRATION_MANAGER_SOURCE_STORE", CDM_MIGRATION_MANAGER_SOURCE_STORE}, {"CDM_ENTITY_MIGRATION_POLICY", CDM_ENTITY_MIGRATION_POLICY},
    {"CDM_SQLITE", CDM_SQLITE}, {"CDM_MIGRATION", CDM_MIGRATION}, {"CDM_VALIDATION_NUMBER_TOO_LARGE", CDM_VALIDATION_NUMBER_TOO_LARGE},
};

static int code_named(const char *name) {
    for (size_t i = 0; i < sizeof CODES / sizeof CODES[0]; i++)
        if (strcmp(CODES[i].name, name) == 0) return CODES[i].code;
    fprintf(stderr, "unknown code name %s\n", name);
    return -1;
}

static const char *str(json_t *c, const char *key) { return json_string_value(json_object_get(c, key)); }

/* A string member as C sees it: up to its first NUL byte (or, with raw_latin1, as Latin-1 bytes). */
static char *c_string(json_t *c, const char *key) {
    const char *text = str(c, key);
    if (!text) return NULL;
    char *copy = strdup(text);
    if (json_is_true(json_object_get(c, "raw_latin1"))) {
        const unsigned char *in = (const unsigned char *)text;
        char *out = copy;
        while (*in) {
            if (*in >= 0xC0 && in[1]) { *out++ = (char)(((in[0] & 0x1F) << 6) | (in[1] & 0x3F)); in += 2; }
            else *out++ = (char)*in++;
        }
        *out = 0;
    }
    return copy;
}

/* The fixtures every case may use. */
static cdm_model *notes;
static cdm_mapping *copy_mapping;
static cdm_migration *migration;
static cdm_store *store;
static cdm_object *note;
static char source_path[600];

static void report(json_t *c, int rc, const char *message) {
    const char *name = str(c, "name");
    int expected = code_named(str(c, "code"));
    const char *fragment = str(c, "message");
    if (rc == expected && (!fragment || !*fragment || (message && strstr(message, fragment)))) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL [%s]: gave %d (%s) \"%s\", expected %s with \"%s\"\n", name, rc, cdm_errstr(rc),
            message ? message : "(null)", str(c, "code"), fragment ? fragment : "");
}

static void *handle_of(const char *kind) {
    if (strcmp(kind, "null") == 0) return NULL;
    if (strcmp(kind, "model") == 0) return notes;
    if (strcmp(kind, "mapping") == 0) return copy_mapping;
    if (strcmp(kind, "migration") == 0) return migration;
    if (strcmp(kind, "store") == 0) return store;
    if (strcmp(kind, "object") == 0) return note;
    return (void *)"not a handle";
}

static int call_with_handle(const char *function, void *h) {
    size_t n = 0; const char *name = NULL;
    if (strcmp(function, "model_entity_count") == 0) return cdm_model_entity_count(h, &n);
    if (strcmp(function, "mapping_entity_mapping_count") == 0) return cdm_mapping_entity_mapping_count(h, &n);
    if (strcmp(function, "migration_set_progress_interval") == 0) return cdm_migration_set_progress_interval(h, 10);
    if (strcmp(function, "store_save") == 0) return cdm_store_save(h);
    if (strcmp(function, "object_entity_name") == 0) return cdm_object_entity_name(h, &name);
    return -1;
}

static int call_with_null_out(const char *f) {
    if (strcmp(f, "model_entity_count") == 0) return cdm_model_entity_count(notes, NULL);
    if (strcmp(f, "model_entity_name") == 0) return cdm_model_entity_at(notes, 0, NULL);
    if (strcmp(f, "model_attribute_index") == 0) return cdm_model_attribute_index(notes, "Note", "title", NULL);
    if (strcmp(f, "model_attribute_type") == 0) return cdm_model_attribute_type(notes, "Note", "title", NULL);
    if (strcmp(f, "model_attribute_count") == 0) return cdm_model_attribute_count(notes, "Note", NULL);
    if (strcmp(f, "model_relationship_count") == 0) return cdm_model_relationship_count(notes, "Note", NULL);
    if (strcmp(f, "model_entity_parent") == 0) return cdm_model_entity_parent(notes, "Note", NULL);
    if (strcmp(f, "mapping_entity_mapping_count") == 0) return cdm_mapping_entity_mapping_count(copy_mapping, NULL);
    if (strcmp(f, "mapping_entity_mapping_name") == 0) return cdm_mapping_entity_mapping_at(copy_mapping, 0, NULL);
    if (strcmp(f, "store_insert") == 0) return cdm_store_insert(store, "Note", NULL);
    if (strcmp(f, "object_entity_name") == 0) return cdm_object_entity_name(note, NULL);
    if (strcmp(f, "object_uri") == 0) return cdm_object_uri(note, NULL);
    if (strcmp(f, "object_get_text") == 0) return cdm_object_get_text(note, "title", NULL, NULL, NULL);
    if (strcmp(f, "migration_report_json") == 0) return cdm_migration_report_json(migration, NULL);
    return -1;
}

static int model_call(json_t *c) {
    const char *f = str(c, "function");
    char *entity = c_string(c, "entity"), *property = c_string(c, "property");
    size_t index = (size_t)json_integer_value(json_object_get(c, "index"));
    size_t n = 0; int i = 0; const char *name = NULL; int rc = -1;
    cdm_attribute_info ai; cdm_relationship_info ri;
    if (strcmp(f, "attribute_index") == 0) rc = cdm_model_attribute_index(notes, entity, property, &i);
    else if (strcmp(f, "attribute_type") == 0) rc = cdm_model_attribute_type(notes, entity, property, &i);
    else if (strcmp(f, "relationship_info") == 0) rc = cdm_model_relationship_info(notes, entity, property, &ri);
    else if (strcmp(f, "entity_name") == 0) rc = cdm_model_entity_at(notes, index, &name);
    else if (strcmp(f, "attribute_at") == 0) rc = cdm_model_attribute_at(notes, entity, index, &ai);
    else if (strcmp(f, "attribute_count") == 0) rc = cdm_model_attribute_count(notes, entity, &n);
    free(entity);
    free(property);
    return rc;
}

static int store_call(json_t *c) {
    const char *f = str(c, "function");
    char *key = c_string(c, "key"), *text = c_string(c, "text"), *entity = c_string(c, "entity");
    const char *out = NULL; size_t length = 0; cdm_object *o = NULL; int rc = -1;
    if (strcmp(f, "insert") == 0) rc = cdm_store_insert(store, entity, &o);
    else if (strcmp(f, "set_text") == 0) rc = cdm_object_set_text(note, key, text, CDM_NUL_TERMINATED);
    else if (strcmp(f, "set_int64") == 0) rc = cdm_object_set_int64(note, key, json_integer_value(json_object_get(c, "value")));
    else if (strcmp(f, "get_text") == 0) rc = cdm_object_get_text(note, key, &out, &length, NULL);
    free(key); free(text); free(entity);
    return rc;
}

/* Cases that need a running migration: run inside the Probe policy's first create hook. */
static json_t *cases;
static int probed;

static int probe_create(cdm_context *ctx, cdm_object *source, void *user) {
    (void)user;
    if (!probed) {
        probed = 1;
        size_t i; json_t *c;
        json_array_foreach(cases, i, c) {
            const char *op = str(c, "op");
            int rc;
            if (strcmp(op, "evaluate") == 0) {
                cdm_value *v = NULL;
                char *expression = c_string(c, "expression");
                rc = cdm_context_evaluate(ctx, expression, source, NULL, &v);
                free(expression);
            } else if (strcmp(op, "fetch") == 0) {
                cdm_list *list = NULL;
                char *entity = c_string(c, "entity"), *predicate = c_string(c, "predicate");
                rc = cdm_context_fetch_source(ctx, entity, predicate, NULL, 0, 0, 0, &list);
                free(entity); free(predicate);
            } else {
                continue;
            }
            report(c, rc, rc ? cdm_context_errmsg(ctx) : "");
        }
    }
    return cdm_context_default_create_destination_instances(ctx, source, NULL);
}

/* A copy of the fixture store at `path` with the case's `source_sql` applied (bad source data
** Core Data's API cannot write: extreme keys, text in a number column, a wrong Z_ENT). */
static int make_source(const char *fixture, const char *path, const char *sql) {
    sqlite3 *db = NULL;
    char *copy = sqlite3_mprintf("VACUUM INTO %Q", path);
    int ok = sqlite3_open_v2(fixture, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK && sqlite3_exec(db, copy, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_free(copy);
    sqlite3_close(db);
    db = NULL;
    ok = ok && sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
    if (!ok) fprintf(stderr, "cannot make %s: %s\n", path, db ? sqlite3_errmsg(db) : "?");
    sqlite3_close(db);
    return ok;
}

static char *path_in(const char *base, const char *name) {
    static char paths[4][1100];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", base, name);
    return p;
}

int main(int argc, char **argv) {
    const char *corpus_path = argc > 1 ? argv[1] : "../BadInput/corpus.json";
    snprintf(corpus_dir, sizeof corpus_dir, "%s", corpus_path);
    char *slash = strrchr(corpus_dir, '/');
    if (slash) *slash = 0; else snprintf(corpus_dir, sizeof corpus_dir, ".");
    json_error_t error;
    json_t *corpus = json_load_file(corpus_path, JSON_ALLOW_NUL, &error);
    if (!corpus) { fprintf(stderr, "cannot read %s: %s\n", corpus_path, error.text); return 2; }
    if (!scratch_begin("bad-input")) return 2;

    char *model_text = json_dumps(json_object_get(corpus, "models") ? json_object_get(json_object_get(corpus, "models"), "notes") : NULL, 0);
    char *mapping_text = json_dumps(json_object_get(corpus, "mapping"), 0);
    CHECK_RC(cdm_model_from_json(model_text, &notes), CDM_OK);
    CHECK_RC(cdm_mapping_from_json(mapping_text, &copy_mapping), CDM_OK);
    CHECK_RC(cdm_migration_new(notes, notes, &copy_mapping, 1, &migration), CDM_OK);
    snprintf(source_path, sizeof source_path, "%s", path_in(dir, "source.sqlite"));
    CHECK_RC(cdm_store_create(notes, source_path, &store), CDM_OK);
    cdm_object *folder = NULL;
    CHECK_RC(cdm_store_insert(store, "Folder", &folder), CDM_OK);
    CHECK_RC(cdm_store_insert(store, "Note", &note), CDM_OK);
    CHECK_RC(cdm_object_set_text(note, "title", "first", CDM_NUL_TERMINATED), CDM_OK);
    CHECK_RC(cdm_object_set_object(note, "folder", folder), CDM_OK);
    CHECK_RC(cdm_store_save(store), CDM_OK);

    cases = json_object_get(corpus, "cases");
    size_t i; json_t *c;
    int callback_cases = 0;
    json_array_foreach(cases, i, c) {
        const char *op = str(c, "op");
        int rc = -1;
        const char *message = NULL;
        if (strcmp(op, "model_json") == 0 || strcmp(op, "model_file") == 0) {
            cdm_model *m = NULL;
            char *arg = c_string(c, strcmp(op, "model_json") == 0 ? "text" : "path");
            rc = strcmp(op, "model_json") == 0 ? cdm_model_from_json(arg, &m) : cdm_model_from_file(path_in(corpus_dir, arg), &m);
            report(c, rc, cdm_model_errmsg(m));
            cdm_model_free(m);
            free(arg);
            continue;
        }
        if (strcmp(op, "mapping_json") == 0 || strcmp(op, "mapping_file") == 0) {
            cdm_mapping *m = NULL;
            char *arg = c_string(c, strcmp(op, "mapping_json") == 0 ? "text" : "path");
            rc = strcmp(op, "mapping_json") == 0 ? cdm_mapping_from_json(arg, &m) : cdm_mapping_from_file(path_in(corpus_dir, arg), &m);
            report(c, rc, cdm_mapping_errmsg(m));
            cdm_mapping_free(m);
            free(arg);
            continue;
        }
        if (strcmp(op, "migration") == 0 || strcmp(op, "run") == 0) {
            cdm_mapping *m = NULL;
            cdm_migration *mig = NULL;
            char *text = c_string(c, "mapping");
            if (text) CHECK_RC(cdm_mapping_from_json(text, &m), CDM_OK);
            rc = cdm_migration_new(notes, notes, &m, text ? 1 : 0, &mig);
            if (strcmp(op, "run") == 0 && rc == CDM_OK) {
                const char *source = str(c, "source");
                if (json_is_false(json_object_get(c, "schema_changes"))) CHECK_RC(cdm_migration_set_schema_changes(mig, 0), CDM_OK);
                const char *sql = str(c, "source_sql");
                char destination[1200], made[1200];
                snprintf(destination, sizeof destination, "%s-%zu.sqlite", path_in(dir, "run"), i);
                snprintf(made, sizeof made, "%s-%zu.sqlite", path_in(dir, "source"), i);
                if (sql) CHECK(make_source(source_path, made, sql));
                rc = cdm_migration_run(mig, sql ? made : source ? path_in(dir, source) : source_path, destination);
                /* A failed run leaves nothing at the destination; a run that succeeds, the store. */
                CHECK((access(destination, F_OK) == 0) == (rc == CDM_OK));
            }
            report(c, rc, cdm_migration_errmsg(mig));
            cdm_migration_free(mig);
            cdm_mapping_free(m);
            free(text);
            continue;
        }
        if (strcmp(op, "fifo") == 0) {
            /* A FIFO where a file is read: refused before it is opened (an open would block). */
            char fifo[1200];
            snprintf(fifo, sizeof fifo, "%s-%zu", path_in(dir, "fifo"), i);
            CHECK(mkfifo(fifo, 0600) == 0);
            const char *call = str(c, "call");
            if (strcmp(call, "model_file") == 0) {
                cdm_model *m = NULL;
                rc = cdm_model_from_file(fifo, &m);
                report(c, rc, cdm_model_errmsg(m));
                cdm_model_free(m);
            } else if (strcmp(call, "mapping_file") == 0) {
                cdm_mapping *m = NULL;
                rc = cdm_mapping_from_file(fifo, &m);
                report(c, rc, cdm_mapping_errmsg(m));
                cdm_mapping_free(m);
            } else if (strcmp(call, "model_from_store") == 0) {
                cdm_model *m = NULL;
                rc = cdm_model_from_store(fifo, &m);
                report(c, rc, cdm_model_errmsg(m));
                cdm_model_free(m);
            } else if (strcmp(call, "store_metadata") == 0) {
                cdm_store_metadata *m = NULL;
                rc = cdm_store_metadata_read(fifo, &m);
                report(c, rc, cdm_store_metadata_errmsg(m));
                cdm_store_metadata_free(m);
            } else if (strcmp(call, "run") == 0) {
                char destination[1300];
                snprintf(destination, sizeof destination, "%s.sqlite", fifo);
                cdm_mapping *m = NULL;
                cdm_migration *mig = NULL;
                char *text = c_string(c, "mapping");
                CHECK_RC(cdm_mapping_from_json(text, &m), CDM_OK);
                CHECK_RC(cdm_migration_new(notes, notes, &m, 1, &mig), CDM_OK);
                rc = cdm_migration_run(mig, fifo, destination);
                CHECK(access(destination, F_OK) != 0);
                report(c, rc, cdm_migration_errmsg(mig));
                cdm_migration_free(mig);
                cdm_mapping_free(m);
                free(text);
            } else { failed++; fprintf(stderr, "FAIL: unknown fifo call %s\n", call); }
            unlink(fifo);
            continue;
        }
        if (strcmp(op, "model_call") == 0) rc = model_call(c), message = cdm_last_errmsg();
        else if (strcmp(op, "store_call") == 0) rc = store_call(c), message = cdm_last_errmsg();
        else if (strcmp(op, "handle") == 0) rc = call_with_handle(str(c, "function"), handle_of(str(c, "handle"))), message = cdm_last_errmsg();
        else if (strcmp(op, "null_out") == 0) rc = call_with_null_out(str(c, "function")), message = cdm_last_errmsg();
        else if (strcmp(op, "evaluate") == 0 || strcmp(op, "fetch") == 0) { callback_cases++; continue; }
        else { failed++; fprintf(stderr, "FAIL: unknown op %s\n", op); continue; }
        report(c, rc, rc ? message : "");
    }

    /* The cases that need a callback, in one migration. */
    cdm_policy probe = {0};
    probe.create_destination_instances = probe_create;
    CHECK_RC(cdm_migration_register_policy(migration, "Probe", &probe, sizeof probe, NULL, NULL), CDM_OK);
    int run_rc = cdm_migration_run(migration, source_path, path_in(dir, "probed.sqlite"));
    CHECK(run_rc == CDM_OK);
    if (run_rc) fprintf(stderr, "  probe run: %s\n", cdm_migration_errmsg(migration));
    CHECK(probed == (callback_cases > 0));

    cdm_store_close(store);
    cdm_migration_free(migration);
    cdm_mapping_free(copy_mapping);
    cdm_model_free(notes);
    free(model_text);
    free(mapping_text);
    size_t case_count = json_array_size(cases);
    json_decref(corpus);
    printf("%zu cases; ", case_count);
    return scratch_end("");
}
