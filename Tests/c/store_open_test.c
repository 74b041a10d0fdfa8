/* C tests of reading a store through its model and of seed stores: cdm_store_open (with a model,
** or through the store's own model cache), cdm_store_model, cdm_store_fetch, cdm_store_count,
** cdm_store_insert_json and cdm_store_validate, on stores made here and on stores Apple's Core
** Data wrote (read from ../Fixtures, run from Tests/c; copied to a temporary folder first), their
** relationships checked against what SQLite shows. Prints "N passed, M failed" last. */
#include <cdmigrate.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"

#define FIXTURES "../Fixtures/apple-stores/"

static const char *model_json =
    "{\"name\": \"Library\", \"versionIdentifier\": \"v1\", \"entities\": ["
    " {\"name\": \"Author\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"books\", \"destination\": \"Book\", \"inverse\": \"author\", \"toMany\": true, \"ordered\": true}]},"
    " {\"name\": \"Book\", \"attributes\": [{\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"year\", \"type\": \"integer 32\"}],"
    "  \"relationships\": [{\"name\": \"author\", \"destination\": \"Author\", \"inverse\": \"books\"}]}]}";

static const char *seed_json =
    "{\"objects\": ["
    " {\"entity\": \"Book\", \"id\": \"b1\", \"values\": {\"title\": \"First\", \"year\": 1999}},"
    " {\"entity\": \"Author\", \"id\": \"ann\", \"values\": {\"name\": \"Ann\", \"books\": [\"b2\", \"b1\"]}},"
    " {\"entity\": \"Book\", \"id\": \"b2\", \"values\": {\"title\": \"Second\", \"year\": 2001}},"
    " {\"entity\": \"Book\", \"values\": {\"title\": \"Orphan\", \"year\": 2020}}]}";


static const char *text_of(cdm_object *object, const char *key) {
    const char *text = NULL;
    size_t length = 0;
    int is_null = 0;
    if (cdm_object_get_text(object, key, &text, &length, &is_null) != CDM_OK || is_null) return NULL;
    return text;
}

static void test_seed_store_reads_back(void) {
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_json(model_json, &model), CDM_OK);
    const char *path = path_in_dir("seed.sqlite");
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    CHECK_RC(cdm_store_insert_json(store, seed_json), CDM_OK);
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);
    cdm_model_free(model);   /* the store keeps its own model: opened without one below */

    CHECK_RC(cdm_store_open(path, NULL, &store), CDM_OK);
    const cdm_model *own = NULL;
    CHECK_RC(cdm_store_model(store, &own), CDM_OK);
    size_t count = 0;
    CHECK_RC(cdm_model_entity_count(own, &count), CDM_OK);
    CHECK(count == 2);
    const char *version = NULL;
    CHECK_RC(cdm_model_version_identifier(own, &version), CDM_OK);
    CHECK_STR(version, "v1");

    cdm_sort_descriptor by_year[] = {{"year", 0}};
    cdm_list *list = NULL;
    CHECK_RC(cdm_store_fetch(store, "Book", NULL, NULL, 0, by_year, 1, 0, 0, &list), CDM_OK);
    cdm_object *const *books = NULL;
    CHECK_RC(cdm_list_objects(list, &books, &count), CDM_OK);
    CHECK(count == 3);
    if (count == 3) {
        CHECK_STR(text_of(books[0], "title"), "Orphan");
        CHECK_STR(text_of(books[1], "title"), "Second");
        cdm_object *author = NULL;
        CHECK_RC(cdm_object_get_object(books[1], "author", &author), CDM_OK);
        CHECK(author != NULL);
        if (author) CHECK_STR(text_of(author, "name"), "Ann");
        CHECK_RC(cdm_object_get_object(books[0], "author", &author), CDM_OK);
        CHECK(author == NULL);
        /* The ordered to-many in the order the description gave. */
        CHECK_RC(cdm_object_get_object(books[2], "author", &author), CDM_OK);
        cdm_object *const *members = NULL;
        size_t member_count = 0;
        if (author) {
            CHECK_RC(cdm_object_get_objects(author, "books", &members, &member_count), CDM_OK);
            CHECK(member_count == 2);
            if (member_count == 2) {
                CHECK_STR(text_of(members[0], "title"), "Second");
                CHECK_STR(text_of(members[1], "title"), "First");
            }
        }
        int64_t year = 0;
        int is_null = 1;
        CHECK_RC(cdm_object_get_int64(books[2], "year", &year, &is_null), CDM_OK);
        CHECK(year == 1999 && !is_null);
        int64_t key = 0;
        CHECK_RC(cdm_object_id(books[2], NULL, NULL, &key), CDM_OK);
        CHECK(key == 1);   /* primary keys follow the description's order */
    }
    cdm_list_release(list);

    cdm_field arguments[] = {cdm_field_text(NULL, "Ann"), cdm_field_int64("after", 2000)};
    CHECK_RC(cdm_store_count(store, "Book", "author.name == %@ AND year > $after", arguments, 2, 0, &count), CDM_OK);
    CHECK(count == 1);
    CHECK_RC(cdm_store_fetch(store, "Book", "author != nil", NULL, 0, NULL, 0, 0, 1, &list), CDM_OK);
    CHECK_RC(cdm_list_count(list, &count), CDM_OK);
    CHECK(count == 1);

    /* Errors as values, kept by the store. */
    CHECK_RC(cdm_store_fetch(store, "Bok", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_NOTFOUND);
    CHECK(list == NULL);
    CHECK_HAS(cdm_store_errmsg(store), "did you mean 'Book'");
    CHECK_RC(cdm_store_fetch(store, "Book", "title == ", NULL, 0, NULL, 0, 0, 0, &list), CDM_EXPRESSION_SYNTAX);
    CHECK(cdm_error_offset(cdm_store_error(store)) >= 0);
    CHECK_HAS(cdm_store_errmsg(store), "'Book'");
    cdm_sort_descriptor by_author[] = {{"author", 1}};
    CHECK_RC(cdm_store_fetch(store, "Book", NULL, NULL, 0, by_author, 1, 0, 0, &list), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_store_errmsg(store), "sort descriptor 1");
    cdm_object *object = NULL;
    CHECK_RC(cdm_store_insert(store, "Book", &object), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_store_errmsg(store), "read-only");
    CHECK_RC(cdm_store_insert_json(store, "[]"), CDM_INVALID_ARGUMENT);
    CHECK_RC(cdm_store_fetch(NULL, "Book", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_MISUSE);
    CHECK_RC(cdm_store_fetch(store, "Book", NULL, NULL, 0, NULL, 0, 0, 0, NULL), CDM_MISUSE);
    CHECK_RC(cdm_store_model(store, NULL), CDM_MISUSE);
    cdm_store_close(store);
}

static void test_seed_errors_name_their_path(void) {
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_json(model_json, &model), CDM_OK);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path_in_dir("bad.sqlite"), &store), CDM_OK);
    CHECK_RC(cdm_store_insert_json(store, "[{\"entity\": \"Book\", \"values\": {\"author\": \"nobody\"}}]"), CDM_INVALID_ARGUMENT);
    CHECK_STR(cdm_error_path(cdm_store_error(store)), "$[0].values.author");
    CHECK_HAS(cdm_store_errmsg(store), "'nobody'");
    CHECK_RC(cdm_store_insert_json(store, "[{\"entity\": \"Book\", \"values\": {\"year\": \"soon\"}}]"), CDM_INVALID_ARGUMENT);
    CHECK_STR(cdm_error_path(cdm_store_error(store)), "$[0].values.year");
    CHECK_RC(cdm_store_insert_json(store, "[{\"entity\": \"Book\""), CDM_INVALID_JSON);
    CHECK_RC(cdm_store_insert_json(store, NULL), CDM_MISUSE);
    cdm_store_close(store);
    /* A model that is not the store's version. */
    CHECK_RC(cdm_store_create(model, path_in_dir("v1.sqlite"), &store), CDM_OK);
    cdm_store_close(store);
    cdm_model *other = NULL;
    CHECK_RC(cdm_model_from_json("{\"entities\": [{\"name\": \"Author\", \"attributes\": [{\"name\": \"nickname\", \"type\": \"string\"}]}]}", &other), CDM_OK);
    CHECK_RC(cdm_store_open(path_in_dir("v1.sqlite"), other, &store), CDM_INCOMPATIBLE_VERSION_HASH);
    CHECK_HAS(cdm_store_errmsg(store), "Author");
    cdm_store_close(store);
    cdm_model_free(other);
    cdm_model_free(model);
    CHECK_RC(cdm_store_open(path_in_dir("missing.sqlite"), NULL, &store), CDM_IO);
    cdm_store_close(store);
    CHECK_RC(cdm_store_open(NULL, NULL, &store), CDM_MISUSE);
    cdm_store_close(store);
}

/* A store checked as Core Data's save checks what it writes: a required value missing. */
static void test_validation(void) {
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_file("../../examples/4-uncloudnotes/UnCloudNotes_v1.model.json", &model), CDM_OK);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path_in_dir("notes.sqlite"), &store), CDM_OK);
    CHECK_RC(cdm_store_insert_json(store, "[{\"entity\": \"Note\", \"values\": {\"title\": \"t\", \"body\": \"b\"}}]"), CDM_OK);
    CHECK_RC(cdm_store_validate(store), CDM_OK);
    CHECK_RC(cdm_store_insert_json(store, "[{\"entity\": \"Note\", \"values\": {\"title\": \"no body\"}}]"), CDM_OK);
    CHECK_RC(cdm_store_validate(store), CDM_VALIDATION_MISSING_MANDATORY_PROPERTY);
    CHECK_STR(cdm_error_key(cdm_store_error(store)), "body");
    CHECK_STR(cdm_error_entity(cdm_store_error(store)), "Note");
    CHECK(cdm_error_primary_key(cdm_store_error(store)) == 2);
    CHECK_RC(cdm_store_validate(NULL), CDM_MISUSE);
    cdm_store_close(store);
    cdm_model_free(model);
}

/* Stores Core Data wrote: the renames stores through their model cache; the macOS Notes store,
** which keeps none, through the model rebuilt from its schema, each note's folder and body being
** the rows its ZFOLDER and ZBODY columns name. */
static void test_apple_stores(void) {
    const char *path = copy_fixture_store(FIXTURES "renames/", "Example_v1.2.0.sqlite");
    CHECK(path != NULL);
    cdm_store *store = NULL;
    cdm_list *list = NULL;
    size_t count = 0;
    if (path) {
        CHECK_RC(cdm_store_open(path, NULL, &store), CDM_OK);
        CHECK_RC(cdm_store_fetch(store, "BasicEntity", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_OK);
        cdm_object *object = NULL;
        CHECK_RC(cdm_list_object_at(list, 0, &object), CDM_OK);
        CHECK_STR(text_of(object, "v1_2_0_name"), "A Known Value");
        cdm_store_close(store);
    }

    path = copy_fixture_store(FIXTURES "macos-notes/", "NotesV7.storedata");
    CHECK(path != NULL);
    if (!path) return;
    CHECK_RC(cdm_store_open(path, NULL, &store), CDM_MIGRATION_MISSING_SOURCE_MODEL);
    CHECK_HAS(cdm_store_errmsg(store), "keeps no model");
    cdm_store_close(store);
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_store(path, &model), CDM_OK);
    CHECK_RC(cdm_store_open(path, model, &store), CDM_OK);
    cdm_model_free(model);
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *statement = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT Z_PK, ZFOLDER, ZBODY FROM ZNOTE ORDER BY Z_PK", -1, &statement, NULL) == SQLITE_OK);
    CHECK_RC(cdm_store_fetch(store, "Note", NULL, NULL, 0, NULL, 0, 0, 0, &list), CDM_OK);
    cdm_object *const *notes = NULL;
    CHECK_RC(cdm_list_objects(list, &notes, &count), CDM_OK);
    size_t rows = 0;
    while (statement && sqlite3_step(statement) == SQLITE_ROW) {
        if (rows < count) {
            int64_t key = 0, folder_key = 0, body_key = 0;
            cdm_object *folder = NULL, *body = NULL;
            CHECK_RC(cdm_object_id(notes[rows], NULL, NULL, &key), CDM_OK);
            CHECK(key == sqlite3_column_int64(statement, 0));
            CHECK_RC(cdm_object_get_object(notes[rows], "folder", &folder), CDM_OK);
            CHECK_RC(cdm_object_get_object(notes[rows], "body", &body), CDM_OK);
            CHECK(folder != NULL && body != NULL);
            if (folder) CHECK_RC(cdm_object_id(folder, NULL, NULL, &folder_key), CDM_OK);
            if (body) CHECK_RC(cdm_object_id(body, NULL, NULL, &body_key), CDM_OK);
            CHECK(folder_key == sqlite3_column_int64(statement, 1));
            CHECK(body_key == sqlite3_column_int64(statement, 2));
        }
        rows++;
    }
    CHECK(rows == count && count > 0);
    sqlite3_finalize(statement);
    sqlite3_close(db);
    cdm_store_close(store);
}

int main(void) {
    if (!scratch_begin("store-open")) return 1;
    test_seed_store_reads_back();
    test_seed_errors_name_their_path();
    test_validation();
    test_apple_stores();
    return scratch_end("");
}
