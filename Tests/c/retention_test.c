/* C tests of what Core Data policies keep across calls:
**   - retained instances: a policy keeps a name → Author table of cdm_object handles made in
**     create_destination_instances and uses them in create_relationships (and in a second pass);
**     retain counts; CDM_MISUSE (naming the fix) for an unretained handle kept past its callback,
**     after the last release, and after the run;
**   - typed user info: text, integers, reals, booleans, null and instances in the manager's
**     userInfo, shared by every callback and pass and read by a value expression;
**   - validation errors: a 1560 whose individual errors name their entity, instance and key.
** The result is checked with sqlite3. Prints "N passed, M failed" last. */
#include <cdmigrate.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "cdmigrate_internal.h"
#define TRY(expr) do { int rc_ = (expr); if (rc_ != CDM_OK) { fprintf(stderr, "  %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cdm_last_errmsg()); return rc_; } } while (0)

#define BOOKS 30
#define AUTHORS 4

static const char *SOURCE_MODEL =
    "{\"name\": \"Shelf1\", \"entities\": [{\"name\": \"Book\", \"attributes\": ["
    " {\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"authorName\", \"type\": \"string\"}]}]}";

static const char *DESTINATION_MODEL =
    "{\"name\": \"Shelf2\", \"entities\": ["
    " {\"name\": \"Author\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"rank\", \"type\": \"integer32\"}],"
    "  \"relationships\": [{\"name\": \"books\", \"destination\": \"Book\", \"inverse\": \"author\", \"toMany\": true}]},"
    " {\"name\": \"Book\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\", \"optional\": false},"
    "   {\"name\": \"batch\", \"type\": \"integer64\"}, {\"name\": \"label\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"author\", \"destination\": \"Author\", \"inverse\": \"books\"}]}]}";

/* Pass 1 makes books and authors (the policy's table); pass 2 ranks the authors through the
** handles pass 1 retained. batch and label come from the typed user info. */
static const char *PASS1 =
    "{\"name\": \"books\", \"entityMappings\": ["
    " {\"name\": \"BookToBook\", \"type\": \"custom\", \"sourceEntity\": \"Book\", \"destinationEntity\": \"Book\", \"predicate\": \"TRUEPREDICATE\","
    "  \"policy\": \"AuthorTable\","
    "  \"attributeMappings\": [{\"name\": \"title\", \"valueExpression\": \"$source.title\"},"
    "   {\"name\": \"batch\", \"valueExpression\": \"$manager.userInfo.batch\"},"
    "   {\"name\": \"label\", \"valueExpression\": \"$manager.userInfo.label\"}],"
    "  \"relationshipMappings\": [{\"name\": \"author\"}]}]}";

static const char *PASS2 =
    "{\"name\": \"ranks\", \"entityMappings\": ["
    " {\"name\": \"Rank\", \"type\": \"custom\", \"policy\": \"Ranker\"}]}";

/* Validation: nothing maps the required title, so every book fails. */
static const char *NO_TITLES =
    "{\"name\": \"untitled\", \"entityMappings\": ["
    " {\"name\": \"BookToBook\", \"sourceEntity\": \"Book\", \"destinationEntity\": \"Book\", \"predicate\": \"TRUEPREDICATE\","
    "  \"attributeMappings\": [{\"name\": \"batch\", \"valueExpression\": \"1\"}]}]}";

static void author_name(int i, char *out, size_t size) { snprintf(out, size, "Author %d", i % AUTHORS); }

static int make_source(const char *path) {
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &model), CDM_OK);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    for (int i = 0; i < BOOKS; i++) {
        cdm_object *book = NULL;
        char title[32], name[32];
        snprintf(title, sizeof title, "Book %d", i);
        author_name(i, name, sizeof name);
        CHECK_RC(cdm_store_insert(store, "Book", &book), CDM_OK);
        CHECK_RC(cdm_object_set_text(book, "title", title, CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_text(book, "authorName", name, CDM_NUL_TERMINATED), CDM_OK);
        /* A cdm_store's instances live until the store is closed: retain does nothing to them. */
        if (i == 0) {
            CHECK_RC(cdm_object_retain(book), CDM_OK);
            const char *entity = NULL;
            CHECK_RC(cdm_object_entity_name(book, &entity), CDM_OK);
        }
    }
    int rc = cdm_store_save(store);
    CHECK_RC(rc, CDM_OK);
    cdm_store_close(store);
    cdm_model_free(model);
    return rc == CDM_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The policy: a name → Author table of retained handles. */

typedef struct {
    char names[AUTHORS][32];
    cdm_object *authors[AUTHORS];
    int count;
    cdm_object *kept_unretained;   /* a source handle kept without retaining it */
    cdm_object *twice;             /* an author retained twice */
    int relationships_set, stale_checked, ranked, user_info_checked;
    size_t handles_in_first_call, handles_in_last_call;
} author_table;

static cdm_object *find_author(author_table *t, const char *name) {
    for (int i = 0; i < t->count; i++) if (strcmp(t->names[i], name) == 0) return t->authors[i];
    return NULL;
}

static int table_begin(cdm_context *ctx, void *user) {
    (void)user;
    TRY(cdm_context_set_user_info_int64(ctx, "batch", 7));
    TRY(cdm_context_set_user_info_text(ctx, "label", "shelf-2 and more", 7));
    TRY(cdm_context_set_user_info_double(ctx, "ratio", 0.25));
    TRY(cdm_context_set_user_info_bool(ctx, "strict", 1));
    TRY(cdm_context_set_user_info_null(ctx, "nothing"));
    TRY(cdm_context_set_user_info_int64(ctx, "made", 0));
    /* Errors: a NULL key, invalid UTF-8, a stale object. */
    CHECK_RC(cdm_context_set_user_info_int64(ctx, NULL, 1), CDM_MISUSE);
    CHECK_RC(cdm_context_set_user_info_text(ctx, "bad", "\xff", CDM_NUL_TERMINATED), CDM_ENCODING);
    CHECK_RC(cdm_context_get_user_info_value(ctx, "batch", NULL), CDM_MISUSE);
    return CDM_OK;
}

static int table_create(cdm_context *ctx, cdm_object *source, void *user) {
    author_table *t = user;
    if (t->count == 0 && !t->kept_unretained) t->handles_in_first_call = cdm_internal_handle_count();
    t->handles_in_last_call = cdm_internal_handle_count();
    cdm_object *book = NULL;
    TRY(cdm_context_default_create_destination_instances(ctx, source, &book));
    const char *name = NULL;
    size_t length = 0;
    int is_null = 0;
    TRY(cdm_object_get_text(source, "authorName", &name, &length, &is_null));
    cdm_object *author = find_author(t, name);
    if (!author) {
        TRY(cdm_context_create_instance(ctx, "Author", &author));
        TRY(cdm_object_set_text(author, "name", name, CDM_NUL_TERMINATED));
        TRY(cdm_object_retain(author));
        snprintf(t->names[t->count], sizeof t->names[0], "%s", name);
        t->authors[t->count++] = author;
        if (t->count == 1) {
            /* Retains count: this one is released once in create_relationships and stays. */
            TRY(cdm_object_retain(author));
            t->twice = author;
            TRY(cdm_context_set_user_info_object(ctx, "first author", author));
        }
    }
    /* The typed user info, read and written by every call. */
    cdm_value *made = NULL;
    TRY(cdm_context_get_user_info_value(ctx, "made", &made));
    int64_t n = 0;
    TRY(cdm_value_int64(made, &n));
    TRY(cdm_context_set_user_info_int64(ctx, "made", n + 1));
    if (!t->kept_unretained) t->kept_unretained = source;
    else if (!t->stale_checked) {
        /* The source of the previous call was not retained: gone, and the message says what to do. */
        const char *entity = NULL;
        CHECK_RC(cdm_object_entity_name(t->kept_unretained, &entity), CDM_MISUSE);
        CHECK_HAS(cdm_last_errmsg(), "no longer valid");
        CHECK_HAS(cdm_last_errmsg(), "call cdm_object_retain to keep it");
        CHECK_HAS(cdm_last_errmsg(), "object ID");
        CHECK_RC(cdm_object_retain(t->kept_unretained), CDM_MISUSE);
        t->stale_checked = 1;
    }
    return CDM_OK;
}

static int table_relationships(cdm_context *ctx, cdm_object *book, void *user) {
    author_table *t = user;
    cdm_object *const *sources = NULL;
    size_t count = 0;
    TRY(cdm_context_source_instances(ctx, "BookToBook", &book, 1, &sources, &count));
    if (count != 1) return cdm_context_fail(ctx, 1, "no source for a book");
    const char *name = NULL;
    TRY(cdm_object_get_text(sources[0], "authorName", &name, NULL, NULL));
    cdm_object *author = find_author(t, name);
    if (!author) return cdm_context_fail(ctx, 2, "an author was not made");
    /* The retained handle works in this later stage: read it, relate to it, get related instances. */
    const char *kept_name = NULL;
    TRY(cdm_object_get_text(author, "name", &kept_name, NULL, NULL));
    if (strcmp(kept_name, name) != 0) return cdm_context_fail(ctx, 3, "a retained author changed");
    TRY(cdm_object_set_object(book, "author", author));
    cdm_object *back = NULL;
    TRY(cdm_object_get_object(book, "author", &back));
    const char *uri = NULL;
    TRY(cdm_object_uri(author, &uri));
    int store = -1;
    const char *entity = NULL;
    TRY(cdm_object_id(author, &store, &entity, NULL));
    CHECK(store == CDM_STORE_DESTINATION);
    CHECK_STR(entity, "Author");
    /* An error on a retained handle goes to this callback's context. */
    CHECK_RC(cdm_object_set_int64(author, "nope", 1), CDM_NOTFOUND);
    CHECK(cdm_context_errcode(ctx) == CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "nope");
    if (t->relationships_set++ == 0) {
        cdm_object_release(t->twice);   /* one of its two retains */
        TRY(cdm_object_get_text(t->twice, "name", &kept_name, NULL, NULL));
    }
    return CDM_OK;
}

static int table_end(cdm_context *ctx, void *user) {
    author_table *t = user;
    cdm_value *v = NULL;
    TRY(cdm_context_get_user_info_value(ctx, "made", &v));
    int64_t made = 0;
    CHECK(cdm_value_type(v) == CDM_VALUE_INTEGER);
    TRY(cdm_value_int64(v, &made));
    CHECK(made == BOOKS);
    TRY(cdm_context_get_user_info_value(ctx, "label", &v));
    const char *text = NULL;
    size_t length = 0;
    CHECK(cdm_value_type(v) == CDM_VALUE_STRING);
    TRY(cdm_value_text(v, &text, &length));
    CHECK(length == 7 && strcmp(text, "shelf-2") == 0);
    TRY(cdm_context_get_user_info_value(ctx, "ratio", &v));
    double ratio = 0;
    CHECK(cdm_value_type(v) == CDM_VALUE_DOUBLE);
    TRY(cdm_value_double(v, &ratio));
    CHECK(ratio == 0.25);
    TRY(cdm_context_get_user_info_value(ctx, "strict", &v));
    int strict = 0;
    CHECK(cdm_value_type(v) == CDM_VALUE_BOOL);
    TRY(cdm_value_bool(v, &strict));
    CHECK(strict == 1);
    TRY(cdm_context_get_user_info_value(ctx, "nothing", &v));
    CHECK(v != NULL && cdm_value_type(v) == CDM_VALUE_NULL);
    TRY(cdm_context_get_user_info_value(ctx, "absent", &v));
    CHECK(v == NULL);
    /* Host pointers and typed values under the same userInfo, each read by its own getter. */
    TRY(cdm_context_set_user_info(ctx, "pointer", t, NULL));
    CHECK_RC(cdm_context_get_user_info_value(ctx, "pointer", &v), CDM_MISMATCH);
    CHECK_HAS(cdm_context_errmsg(ctx), "cdm_context_get_user_info");
    void *pointer = NULL;
    CHECK_RC(cdm_context_get_user_info(ctx, "batch", &pointer), CDM_MISMATCH);
    CHECK_HAS(cdm_context_errmsg(ctx), "cdm_context_get_user_info_value");
    TRY(cdm_context_set_user_info(ctx, "batch", NULL, NULL));
    TRY(cdm_context_get_user_info_value(ctx, "batch", &v));
    CHECK(v == NULL);
    t->user_info_checked = 1;
    return CDM_OK;
}

/* Pass 2: ranks every author through the handles pass 1 retained, then releases them. */
static int rank_begin(cdm_context *ctx, void *user) {
    author_table *t = user;
    int pass = -1;
    TRY(cdm_context_pass(ctx, &pass));
    CHECK(pass == 1);
    for (int i = 0; i < t->count; i++) {
        TRY(cdm_object_set_int64(t->authors[i], "rank", i + 1));
        size_t books = 0;
        cdm_object *const *members = NULL;
        TRY(cdm_object_get_objects(t->authors[i], "books", &members, &books));
        CHECK(books == BOOKS / AUTHORS || books == BOOKS / AUTHORS + 1);
        t->ranked++;
    }
    /* The instance in the user info comes back as a value holding it. */
    cdm_value *first = NULL;
    TRY(cdm_context_get_user_info_value(ctx, "first author", &first));
    CHECK(cdm_value_type(first) == CDM_VALUE_OBJECT);
    cdm_object *object = NULL;
    TRY(cdm_value_object(first, &object));
    const char *name = NULL;
    TRY(cdm_object_get_text(object, "name", &name, NULL, NULL));
    CHECK_STR(name, t->names[0]);
    /* The last release ends a handle. */
    cdm_object_release(t->authors[AUTHORS - 1]);
    CHECK_RC(cdm_object_get_text(t->authors[AUTHORS - 1], "name", &name, NULL, NULL), CDM_MISUSE);
    cdm_object_release(t->authors[AUTHORS - 1]);   /* harmless now */
    return CDM_OK;
}

static int count_rows(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    int n = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int(st, 0);
        else fprintf(stderr, "  sqlite: %s\n", sqlite3_errmsg(db));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return n;
}

static void test_retained_authors(const char *source) {
    cdm_model *v1 = NULL, *v2 = NULL;
    cdm_mapping *maps[2] = {NULL, NULL};
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &v1), CDM_OK);
    CHECK_RC(cdm_model_from_json(DESTINATION_MODEL, &v2), CDM_OK);
    CHECK_RC(cdm_mapping_from_json(PASS1, &maps[0]), CDM_OK);
    CHECK_RC(cdm_mapping_from_json(PASS2, &maps[1]), CDM_OK);
    cdm_migration *m = NULL;
    CHECK_RC(cdm_migration_new(v1, v2, maps, 2, &m), CDM_OK);
    author_table table;
    memset(&table, 0, sizeof table);
    cdm_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.begin = table_begin;
    policy.create_destination_instances = table_create;
    policy.create_relationships = table_relationships;
    policy.end = table_end;
    CHECK_RC(cdm_migration_register_policy(m, "AuthorTable", &policy, sizeof policy, &table, NULL), CDM_OK);
    cdm_policy ranker;
    memset(&ranker, 0, sizeof ranker);
    ranker.begin = rank_begin;
    CHECK_RC(cdm_migration_register_policy(m, "Ranker", &ranker, sizeof ranker, &table, NULL), CDM_OK);

    const char *destination = path_in_dir("retained.sqlite");
    int rc = cdm_migration_run(m, source, destination);
    CHECK_RC(rc, CDM_OK);
    if (rc) fprintf(stderr, "  run: %s\n", cdm_migration_errmsg(m));
    CHECK(table.count == AUTHORS);
    CHECK(table.stale_checked == 1);
    CHECK(table.relationships_set == BOOKS);
    CHECK(table.ranked == AUTHORS);
    CHECK(table.user_info_checked == 1);
    /* Retained handles and unretained ones alike are freed call by call: the handle count of the
    ** last call is that of the first plus the retained authors. */
    CHECK(table.handles_in_last_call <= table.handles_in_first_call + AUTHORS);

    /* After the run every retained handle is gone: CDM_MISUSE, never a crash. */
    const char *name = NULL;
    CHECK_RC(cdm_object_get_text(table.authors[0], "name", &name, NULL, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "no longer valid");
    CHECK_RC(cdm_object_retain(table.authors[1]), CDM_MISUSE);
    cdm_object_release(table.authors[1]);   /* harmless */
    CHECK(cdm_internal_handle_count() == 0);

    /* The store: every book has its author (made once per name), batch and label from the user info. */
    CHECK(count_rows(destination, "SELECT COUNT(*) FROM ZAUTHOR") == AUTHORS);
    CHECK(count_rows(destination, "SELECT COUNT(*) FROM ZBOOK") == BOOKS);
    CHECK(count_rows(destination, "SELECT COUNT(*) FROM ZBOOK WHERE ZBATCH = 7 AND ZLABEL = 'shelf-2'") == BOOKS);
    CHECK(count_rows(destination, "SELECT COUNT(*) FROM ZBOOK b JOIN ZAUTHOR a ON b.ZAUTHOR = a.Z_PK "
                                  "WHERE a.ZNAME = 'Author ' || (CAST(substr(b.ZTITLE, 6) AS INTEGER) % 4)") == BOOKS);
    CHECK(count_rows(destination, "SELECT COUNT(*) FROM ZAUTHOR WHERE ZRANK BETWEEN 1 AND 4") == AUTHORS);

    /* A second run starts from nothing: no handle of the first is valid, the user info is empty. */
    memset(&table, 0, sizeof table);
    CHECK_RC(cdm_migration_run(m, source, path_in_dir("retained-again.sqlite")), CDM_OK);
    CHECK(table.count == AUTHORS && table.user_info_checked == 1);

    cdm_migration_free(m);
    cdm_mapping_free(maps[0]);
    cdm_mapping_free(maps[1]);
    cdm_model_free(v1);
    cdm_model_free(v2);
}

/* Outside a callback and with wrong handles: CDM_MISUSE. */
static void test_misuse(void) {
    CHECK_RC(cdm_object_retain(NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "NULL");
    CHECK_RC(cdm_context_set_user_info_int64(NULL, "k", 1), CDM_MISUSE);
    cdm_value *v = NULL;
    CHECK_RC(cdm_context_get_user_info_value(NULL, "k", &v), CDM_MISUSE);
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &model), CDM_OK);
    CHECK_RC(cdm_object_retain((cdm_object *)model), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "cdm_model");
    cdm_model_free(model);
}

static void test_validation_errors(const char *source) {
    cdm_model *v1 = NULL, *v2 = NULL;
    cdm_mapping *map = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &v1), CDM_OK);
    CHECK_RC(cdm_model_from_json(DESTINATION_MODEL, &v2), CDM_OK);
    CHECK_RC(cdm_mapping_from_json(NO_TITLES, &map), CDM_OK);
    cdm_migration *m = NULL;
    CHECK_RC(cdm_migration_new(v1, v2, &map, 1, &m), CDM_OK);
    CHECK_RC(cdm_migration_run(m, source, path_in_dir("untitled.sqlite")), CDM_VALIDATION_MULTIPLE_ERRORS);
    const cdm_error *error = cdm_migration_error(m);
    CHECK(cdm_error_code(error) == CDM_VALIDATION_MULTIPLE_ERRORS);
    CHECK(cdm_error_entity(error) == NULL && cdm_error_key(error) == NULL && cdm_error_object_uri(error) == NULL);
    CHECK(cdm_error_count(error) == BOOKS);
    int64_t last_key = 0;
    int ordered = 1;
    for (size_t i = 0; i < cdm_error_count(error); i++) {
        const cdm_error *one = cdm_error_at(error, i);
        CHECK(cdm_error_code(one) == CDM_VALIDATION_MISSING_MANDATORY_PROPERTY);
        CHECK_STR(cdm_error_entity(one), "Book");
        CHECK_STR(cdm_error_key(one), "title");
        CHECK_HAS(cdm_error_object_uri(one), "x-coredata://");
        char tail[64];
        snprintf(tail, sizeof tail, "/Book/p%lld", (long long)cdm_error_primary_key(one));
        CHECK_HAS(cdm_error_object_uri(one), tail);
        CHECK_HAS(cdm_error_message(one), cdm_error_object_uri(one));
        if (cdm_error_primary_key(one) <= last_key) ordered = 0;
        last_key = cdm_error_primary_key(one);
    }
    CHECK(ordered);
    CHECK(cdm_error_entity(NULL) == NULL && cdm_error_primary_key(NULL) == 0);
    cdm_migration_free(m);
    cdm_mapping_free(map);
    cdm_model_free(v1);
    cdm_model_free(v2);
}

int main(void) {
    if (!scratch_begin("retention-test")) return 2;
    const char *source = path_in_dir("source.sqlite");
    if (make_source(source)) {
        test_retained_authors(source);
        test_validation_errors(source);
    }
    test_misuse();
    return scratch_end("");
}
