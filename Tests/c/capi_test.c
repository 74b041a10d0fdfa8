/* C tests of include/cdmigrate.h: every function, the error paths, a policy that fails half way,
** and a full migration with a C policy checked row by row through sqlite3's own C API.
** Prints "N passed, M failed" last; exits non-zero on any failure. */
#include <cdmigrate.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <dirent.h>

#include "scratch.h"
#include "cdmigrate_internal.h"

static const char *SOURCE_MODEL =
    "{\"name\": \"V1\", \"entities\": ["
    " {\"name\": \"Folder\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"notes\", \"destination\": \"Note\", \"inverse\": \"folder\", \"toMany\": true}]},"
    " {\"name\": \"Note\", \"attributes\": ["
    "   {\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"body\", \"type\": \"string\"},"
    "   {\"name\": \"count\", \"type\": \"integer32\"}, {\"name\": \"score\", \"type\": \"double\"},"
    "   {\"name\": \"flag\", \"type\": \"boolean\"}, {\"name\": \"created\", \"type\": \"date\"},"
    "   {\"name\": \"data\", \"type\": \"binary\"}, {\"name\": \"ident\", \"type\": \"uuid\"},"
    "   {\"name\": \"price\", \"type\": \"decimal\"}, {\"name\": \"link\", \"type\": \"uri\"}],"
    "  \"relationships\": [{\"name\": \"folder\", \"destination\": \"Folder\", \"inverse\": \"notes\"}]}]}";

static const char *DESTINATION_MODEL =
    "{\"name\": \"V2\", \"entities\": ["
    " {\"name\": \"Category\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"notes\", \"destination\": \"Note\", \"inverse\": \"category\", \"toMany\": true}]},"
    " {\"name\": \"Note\", \"attributes\": ["
    "   {\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"summary\", \"type\": \"string\"},"
    "   {\"name\": \"count\", \"type\": \"integer64\"}, {\"name\": \"score\", \"type\": \"double\"},"
    "   {\"name\": \"flag\", \"type\": \"boolean\"}, {\"name\": \"created\", \"type\": \"date\"},"
    "   {\"name\": \"data\", \"type\": \"binary\"}, {\"name\": \"ident\", \"type\": \"uuid\"},"
    "   {\"name\": \"price\", \"type\": \"decimal\"}, {\"name\": \"link\", \"type\": \"uri\"},"
    "   {\"name\": \"folderName\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"category\", \"destination\": \"Category\", \"inverse\": \"notes\"}]}]}";

static const char *MAPPING =
    "{\"name\": \"V1toV2\", \"entityMappings\": ["
    " {\"name\": \"FolderToCategory\", \"sourceEntity\": \"Folder\", \"destinationEntity\": \"Category\", \"predicate\": \"TRUEPREDICATE\","
    "  \"attributeMappings\": [{\"name\": \"name\", \"valueExpression\": \"$source.name\"}]},"
    " {\"name\": \"NoteToNote\", \"type\": \"custom\", \"sourceEntity\": \"Note\", \"destinationEntity\": \"Note\", \"predicate\": \"TRUEPREDICATE\","
    "  \"policy\": \"NotePolicy\","
    "  \"attributeMappings\": ["
    "   {\"name\": \"title\", \"valueExpression\": \"$source.title\"},"
    "   {\"name\": \"summary\", \"valueExpression\": \"FUNCTION(CAST(\\\"Helpers\\\", \\\"Class\\\"), \\\"summarize:\\\", $source.body)\"},"
    "   {\"name\": \"count\", \"valueExpression\": \"$source.count\"}, {\"name\": \"score\", \"valueExpression\": \"$source.score\"},"
    "   {\"name\": \"created\", \"valueExpression\": \"$source.created\"}, {\"name\": \"data\", \"valueExpression\": \"$source.data\"},"
    "   {\"name\": \"ident\", \"valueExpression\": \"$source.ident\"}, {\"name\": \"price\", \"valueExpression\": \"$source.price\"},"
    "   {\"name\": \"link\", \"valueExpression\": \"$source.link\"}]}]}";

#define NOTES 6
static const unsigned char UUID0[16] = {0x12, 0x3E, 0x45, 0x67, 0xE8, 0x9B, 0x12, 0xD3, 0xA4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};

/* How many files of the test folder have a name starting with prefix. */
static int count_prefixed(const char *prefix) {
    int n = 0;
    DIR *d = opendir(dir);
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fputs(text, f);
    fclose(f);
    return 1;
}

static unsigned char *read_file(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { *size = -1; return NULL; }
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc(*size > 0 ? *size : 1);
    if (fread(bytes, 1, *size, f) != (size_t)*size) *size = -1;
    fclose(f);
    return bytes;
}

static int exists(const char *path) { struct stat st; return stat(path, &st) == 0; }

/* ------------------------------------------------------------------------------------------ */

static void test_version_and_errors(void) {
    CHECK_STR(cdm_libversion(), CDM_VERSION);
    CHECK(cdm_libversion_number() == CDM_VERSION_NUMBER);
    CHECK_STR(cdm_sqlite_version(), sqlite3_libversion());
    CHECK_STR(cdm_errstr(CDM_MIGRATION_CANCELLED), "migration cancelled");
    CHECK_STR(cdm_errstr(CDM_MISUSE), "misuse of the C API");
    CHECK(cdm_internal_abi_check(sizeof(cdm_policy), sizeof(cdm_progress)) == 0);
    cdm_free(NULL);
    CHECK(cdm_error_code(NULL) == 0);
    CHECK_STR(cdm_error_message(NULL), "");
    CHECK(cdm_error_path(NULL) == NULL);
    CHECK(cdm_error_offset(NULL) == -1);
    CHECK(cdm_error_count(NULL) == 0);
    CHECK(cdm_error_at(NULL, 0) == NULL);
}

static void test_models_and_mappings(void) {
    cdm_model *m = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &m), CDM_OK);
    CHECK(cdm_model_errcode(m) == CDM_OK);
    size_t n = 0;
    CHECK_RC(cdm_model_entity_count(m, &n), CDM_OK);
    CHECK(n == 2);
    const char *name = NULL;
    CHECK_RC(cdm_model_entity_at(m, 1, &name), CDM_OK);
    CHECK_STR(name, "Note");
    CHECK_RC(cdm_model_entity_at(m, 7, &name), CDM_NOTFOUND);
    int index = -1, type = 0;
    CHECK_RC(cdm_model_attribute_index(m, "Note", "count", &index), CDM_OK);
    CHECK(index == 2);
    CHECK_RC(cdm_model_attribute_type(m, "Note", "ident", &type), CDM_OK);
    CHECK(type == CDM_ATTR_UUID);
    CHECK_RC(cdm_model_attribute_index(m, "Nope", "count", &index), CDM_NOTFOUND);
    CHECK_HAS(cdm_last_errmsg(), "Nope");
    CHECK_RC(cdm_model_attribute_index(m, "Note", "nope", &index), CDM_NOTFOUND);
    CHECK_HAS(cdm_last_errmsg(), "nope");
    CHECK(cdm_last_errcode() == CDM_NOTFOUND);
    CHECK(cdm_error_code(cdm_last_error()) == CDM_NOTFOUND);
    CHECK_RC(cdm_model_attribute_index(NULL, "Note", "count", &index), CDM_MISUSE);
    cdm_model_free(m);
    cdm_model_free(NULL);

    /* Syntax error, validation errors with paths, invalid UTF-8, NULLs, files. */
    CHECK_RC(cdm_model_from_json("{\"entities\": [", &m), CDM_INVALID_JSON);
    CHECK_HAS(cdm_model_errmsg(m), "line");
    CHECK_RC(cdm_model_entity_count(m, &n), CDM_MISUSE);
    cdm_model_free(m);
    CHECK_RC(cdm_model_from_json("{\"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"wat\"}]}]}", &m),
             CDM_INVALID_MODEL);
    CHECK_HAS(cdm_model_errmsg(m), "wat");
    CHECK_STR(cdm_error_path(cdm_model_error(m)), "$.entities[0].attributes[0].type");
    cdm_model_free(m);
    CHECK_RC(cdm_model_from_json("{\"entities\": [{\"name\": \"A\", \"relationships\": [{\"name\": \"r\", \"destination\": \"Missing\"}]},"
                                 " {\"name\": \"A\"}]}", &m), CDM_INVALID_MODEL);
    const cdm_error *e = cdm_model_error(m);
    CHECK(cdm_error_code(e) == CDM_INVALID_MODEL);
    CHECK(cdm_error_count(e) >= 2);
    int saw_path = 0;
    for (size_t i = 0; i < cdm_error_count(e); i++) {
        const char *p = cdm_error_path(cdm_error_at(e, i));
        if (p && strstr(p, "$.entities[")) saw_path = 1;
    }
    CHECK(saw_path);
    cdm_model_free(m);
    CHECK_RC(cdm_model_from_json("{\"name\": \"\xff\xfe\"}", &m), CDM_ENCODING);
    cdm_model_free(m);
    CHECK_RC(cdm_model_from_json(NULL, &m), CDM_MISUSE);
    cdm_model_free(m);
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_model_from_file(path_in_dir("missing.json"), &m), CDM_IO);
    cdm_model_free(m);
    CHECK(cdm_model_errcode(NULL) == CDM_MISUSE);
    CHECK(cdm_model_error(NULL) == NULL);
    CHECK(strlen(cdm_model_errmsg(NULL)) > 0);

    /* Mappings. */
    cdm_mapping *mp = NULL;
    CHECK(write_file(path_in_dir("mapping.json"), MAPPING));
    CHECK_RC(cdm_mapping_from_file(path_in_dir("mapping.json"), &mp), CDM_OK);
    CHECK_RC(cdm_mapping_entity_mapping_count(mp, &n), CDM_OK);
    CHECK(n == 2);
    CHECK_RC(cdm_mapping_entity_mapping_at(mp, 1, &name), CDM_OK);
    CHECK_STR(name, "NoteToNote");
    CHECK_RC(cdm_mapping_entity_mapping_at(mp, 2, &name), CDM_NOTFOUND);
    cdm_model *src = NULL, *dst = NULL;
    cdm_model_from_json(SOURCE_MODEL, &src);
    cdm_model_from_json(DESTINATION_MODEL, &dst);
    CHECK_RC(cdm_mapping_validate(mp, src, dst), CDM_OK);
    CHECK_RC(cdm_mapping_validate(mp, dst, src), CDM_INVALID_MAPPING);
    CHECK(cdm_mapping_errcode(mp) == CDM_INVALID_MAPPING);
    CHECK(cdm_error_count(cdm_mapping_error(mp)) >= 1 || strlen(cdm_mapping_errmsg(mp)) > 0);
    CHECK_RC(cdm_mapping_validate(mp, NULL, dst), CDM_MISUSE);
    cdm_mapping_free(mp);
    CHECK_RC(cdm_mapping_from_json("{\"entityMappings\": [{\"name\": \"X\", \"sourceEntity\": \"Note\", \"destinationEntity\": \"Note\","
                                   " \"attributeMappings\": [{\"name\": \"title\", \"valueExpression\": \"$source.(\"}]}]}", &mp),
             CDM_EXPRESSION_SYNTAX);
    CHECK(cdm_error_offset(cdm_mapping_error(mp)) >= 0);
    cdm_mapping_free(mp);
    CHECK_RC(cdm_mapping_from_json("[1,", &mp), CDM_INVALID_JSON);
    CHECK_RC(cdm_mapping_entity_mapping_count(mp, &n), CDM_MISUSE);
    cdm_mapping_free(mp);
    CHECK_RC(cdm_mapping_from_file(NULL, &mp), CDM_MISUSE);
    cdm_mapping_free(mp);
    cdm_mapping_free(NULL);
    CHECK(cdm_mapping_errcode(NULL) == CDM_MISUSE);
    CHECK(cdm_mapping_error(NULL) == NULL);
    CHECK(strlen(cdm_mapping_errmsg(NULL)) > 0);
    cdm_model_free(src);
    cdm_model_free(dst);
}

/* An Xcode mapping model (.xcmappingmodel/xcmapping.xml, a Core Data XML store) compiled against
** the two models: order by mappingnumber, names <Source>To<Destination>, relationship expressions
** found in the models; a garbled document names its object. */
static const char *XCODE_MAPPING =
    "<?xml version=\"1.0\" standalone=\"yes\"?>\n<database>\n<databaseInfo><version>1</version></databaseInfo>\n"
    "<object type=\"XDDEVMAPPINGMODEL\" id=\"z1\">\n"
    "  <relationship name=\"entitymappings\" type=\"0/0\" destination=\"XDDEVENTITYMAPPING\" idrefs=\"z3 z2\"></relationship>\n"
    "</object>\n"
    "<object type=\"XDDEVENTITYMAPPING\" id=\"z2\">\n"
    "  <attribute name=\"sourcename\" type=\"string\">Folder</attribute>\n"
    "  <attribute name=\"destinationname\" type=\"string\">Category</attribute>\n"
    "  <attribute name=\"mappingtypename\" type=\"string\">Undefined</attribute>\n"
    "  <attribute name=\"mappingnumber\" type=\"int16\">1</attribute>\n"
    "  <relationship name=\"attributemappings\" type=\"0/0\" destination=\"XDDEVATTRIBUTEMAPPING\" idrefs=\"z4\"></relationship>\n"
    "  <relationship name=\"relationshipmappings\" type=\"0/0\" destination=\"XDDEVRELATIONSHIPMAPPING\" idrefs=\"z5\"></relationship>\n"
    "</object>\n"
    "<object type=\"XDDEVENTITYMAPPING\" id=\"z3\">\n"
    "  <attribute name=\"sourcename\" type=\"string\">Note</attribute>\n"
    "  <attribute name=\"destinationname\" type=\"string\">Note</attribute>\n"
    "  <attribute name=\"mappingtypename\" type=\"string\">Undefined</attribute>\n"
    "  <attribute name=\"mappingnumber\" type=\"int16\">2</attribute>\n"
    "  <attribute name=\"migrationpolicyclassname\" type=\"string\">App.NotePolicy</attribute>\n"
    "  <relationship name=\"attributemappings\" type=\"0/0\" destination=\"XDDEVATTRIBUTEMAPPING\" idrefs=\"z6\"></relationship>\n"
    "</object>\n"
    "<object type=\"XDDEVATTRIBUTEMAPPING\" id=\"z4\"><attribute name=\"name\" type=\"string\">name</attribute></object>\n"
    "<object type=\"XDDEVRELATIONSHIPMAPPING\" id=\"z5\"><attribute name=\"autogenerateexpression\" type=\"bool\">1</attribute>"
    "<attribute name=\"name\" type=\"string\">notes</attribute></object>\n"
    "<object type=\"XDDEVATTRIBUTEMAPPING\" id=\"z6\"><attribute name=\"name\" type=\"string\">title</attribute></object>\n"
    "</database>\n";

static void test_xcode_mapping(void) {
    cdm_model *src = NULL, *dst = NULL;
    cdm_model_from_json(SOURCE_MODEL, &src);
    cdm_model_from_json(DESTINATION_MODEL, &dst);
    static char folder[600], file[700];
    snprintf(folder, sizeof folder, "%s", path_in_dir("V1ToV2.xcmappingmodel"));
    CHECK(mkdir(folder, 0700) == 0);
    snprintf(file, sizeof file, "%s/xcmapping.xml", folder);
    CHECK(write_file(file, XCODE_MAPPING));

    cdm_mapping *mp = NULL;
    size_t n = 0;
    const char *name = NULL;
    CHECK_RC(cdm_mapping_from_xcode_file(folder, src, dst, &mp), CDM_OK);
    CHECK_RC(cdm_mapping_entity_mapping_count(mp, &n), CDM_OK);
    CHECK(n == 2);
    CHECK_RC(cdm_mapping_entity_mapping_at(mp, 0, &name), CDM_OK);
    CHECK_STR(name, "FolderToCategory");
    CHECK_RC(cdm_mapping_entity_mapping_at(mp, 1, &name), CDM_OK);
    CHECK_STR(name, "NoteToNote");
    CHECK_RC(cdm_mapping_validate(mp, src, dst), CDM_OK);
    cdm_mapping_free(mp);
    /* The xml file itself, too. */
    CHECK_RC(cdm_mapping_from_xcode_file(file, src, dst, &mp), CDM_OK);
    cdm_mapping_free(mp);

    /* The JSON reader points to cdm_mapping_from_xcode_file. */
    CHECK_RC(cdm_mapping_from_file(folder, &mp), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_mapping_errmsg(mp), "cdm_mapping_from_xcode_file");
    cdm_mapping_free(mp);

    /* Models the other way round: the mapping does not fit them. */
    CHECK_RC(cdm_mapping_from_xcode_file(folder, dst, src, &mp), CDM_INVALID_MAPPING);
    CHECK(cdm_mapping_errcode(mp) == CDM_INVALID_MAPPING);
    CHECK_RC(cdm_mapping_entity_mapping_count(mp, &n), CDM_MISUSE);
    cdm_mapping_free(mp);

    /* A garbled mappingnumber: the message names the object and the line. */
    char garbled[4096];
    snprintf(garbled, sizeof garbled, "%s", XCODE_MAPPING);
    char *number = strstr(garbled, ">2</attribute>");
    CHECK(number != NULL);
    if (number) number[1] = 'x';
    CHECK(write_file(file, garbled));
    CHECK_RC(cdm_mapping_from_xcode_file(folder, src, dst, &mp), CDM_INVALID_MAPPING);
    CHECK_HAS(cdm_mapping_errmsg(mp), "z3");
    CHECK_HAS(cdm_mapping_errmsg(mp), "line 19");
    cdm_mapping_free(mp);
    CHECK(write_file(file, "<database><object"));
    CHECK_RC(cdm_mapping_from_xcode_file(folder, src, dst, &mp), CDM_INVALID_MAPPING);
    cdm_mapping_free(mp);

    CHECK_RC(cdm_mapping_from_xcode_file(path_in_dir("missing.xcmappingmodel"), src, dst, &mp), CDM_IO);
    cdm_mapping_free(mp);
    CHECK_RC(cdm_mapping_from_xcode_file(NULL, src, dst, &mp), CDM_MISUSE);
    cdm_mapping_free(mp);
    CHECK_RC(cdm_mapping_from_xcode_file(folder, NULL, dst, &mp), CDM_MISUSE);
    cdm_mapping_free(mp);
    cdm_model_free(src);
    cdm_model_free(dst);
}

/* Makes the source store with the store API, setting every attribute type. Returns 1 on success. */
static cdm_object *stale_store_object;
static int make_source(const char *path) {
    cdm_model *model = NULL;
    CHECK(write_file(path_in_dir("v1.json"), SOURCE_MODEL));
    CHECK_RC(cdm_model_from_file(path_in_dir("v1.json"), &model), CDM_OK);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    cdm_object *folders[2];
    CHECK_RC(cdm_store_insert(store, "Folder", &folders[0]), CDM_OK);
    CHECK_RC(cdm_store_insert(store, "Folder", &folders[1]), CDM_OK);
    CHECK_RC(cdm_object_set_text(folders[0], "name", "Work", CDM_NUL_TERMINATED), CDM_OK);
    CHECK_RC(cdm_object_set_text(folders[1], "name", "Home!", 4), CDM_OK);
    /* Lengths are size_t: CDM_NUL_TERMINATED is the only length past SIZE_MAX / 2 (a negative
    ** long cast to size_t, say) that the library takes; others are refused, never read. */
    CHECK_RC(cdm_object_set_text(folders[1], "name", "Home", (size_t)-2), CDM_INVALID_ARGUMENT);
    CHECK_HAS(cdm_store_errmsg(store), "CDM_NUL_TERMINATED");
    const char *text0 = NULL;
    CHECK_RC(cdm_object_get_text(folders[1], "name", &text0, NULL, NULL), CDM_OK);
    CHECK_STR(text0, "Home");
    CHECK_RC(cdm_store_insert(store, "Nope", &folders[0]), CDM_NOTFOUND);
    CHECK(cdm_store_errcode(store) == CDM_NOTFOUND);
    CHECK_HAS(cdm_store_errmsg(store), "Nope");
    CHECK(cdm_error_code(cdm_store_error(store)) == CDM_NOTFOUND);
    int flag_index = -1;
    CHECK_RC(cdm_model_attribute_index(model, "Note", "flag", &flag_index), CDM_OK);
    for (int i = 0; i < NOTES; i++) {
        cdm_object *note = NULL;
        char title[32], body[64];
        snprintf(title, sizeof title, "Note %d", i);
        snprintf(body, sizeof body, "Body of note %d, rather long", i);
        CHECK_RC(cdm_store_insert(store, "Note", &note), CDM_OK);
        CHECK_RC(cdm_object_set_text(note, "title", title, CDM_NUL_TERMINATED), CDM_OK);
        if (i != 2) CHECK_RC(cdm_object_set_text(note, "body", body, CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_int64(note, "count", i * 10), CDM_OK);
        CHECK_RC(cdm_object_set_double(note, "score", i + 0.5), CDM_OK);
        CHECK_RC(cdm_object_set_bool_at(note, flag_index, i % 2), CDM_OK);
        CHECK_RC(cdm_object_set_date(note, "created", 700000000.0 + i), CDM_OK);
        unsigned char data[3] = {1, 2, (unsigned char)i};
        if (i == 0) CHECK_RC(cdm_object_set_blob(note, "data", data, (size_t)-1), CDM_INVALID_ARGUMENT);
        CHECK_RC(cdm_object_set_blob(note, "data", data, 3), CDM_OK);
        unsigned char uuid[16];
        memcpy(uuid, UUID0, 16);
        uuid[15] = (unsigned char)i;
        CHECK_RC(cdm_object_set_uuid(note, "ident", uuid), CDM_OK);
        CHECK_RC(cdm_object_set_text(note, "price", "12.75", CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_text(note, "link", "https://example.com/n", CDM_NUL_TERMINATED), CDM_OK);
        CHECK_RC(cdm_object_set_object(note, "folder", folders[i % 2]), CDM_OK);
        if (i == 0) {
            /* Setter error paths. */
            CHECK_RC(cdm_object_set_int64(note, "title", 3), CDM_MISMATCH);
            CHECK_HAS(cdm_store_errmsg(store), "title");
            CHECK_RC(cdm_object_set_text(note, "price", "cheap", CDM_NUL_TERMINATED), CDM_MISMATCH);
            CHECK_RC(cdm_object_set_text(note, "nope", "x", CDM_NUL_TERMINATED), CDM_NOTFOUND);
            CHECK_RC(cdm_object_set_text(note, "title", "bad \xc3\x28 utf8", CDM_NUL_TERMINATED), CDM_ENCODING);
            CHECK_RC(cdm_object_set_text(note, "title", NULL, CDM_NUL_TERMINATED), CDM_MISUSE);
            CHECK_RC(cdm_object_set_object(note, "title", folders[0]), CDM_MISMATCH);
            CHECK_RC(cdm_object_add_object(note, "folder", folders[0]), CDM_MISMATCH);
            CHECK_RC(cdm_object_set_object(folders[0], "notes", note), CDM_MISMATCH);
            CHECK_RC(cdm_object_set_double_at(note, 99, 1.0), CDM_NOTFOUND);
            CHECK_RC(cdm_object_set_null(NULL, "title"), CDM_MISUSE);
            CHECK_RC(cdm_object_set_blob(note, "data", NULL, 2), CDM_MISUSE);
            stale_store_object = note;
        }
    }
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);
    cdm_store_close(NULL);
    /* Instances of a closed store are stale. */
    CHECK_RC(cdm_object_set_int64(stale_store_object, "count", 1), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "no longer valid");
    CHECK(cdm_store_errcode(NULL) == CDM_MISUSE);
    CHECK(cdm_store_error(NULL) == NULL);
    CHECK(strlen(cdm_store_errmsg(NULL)) > 0);
    CHECK_RC(cdm_store_save(NULL), CDM_MISUSE);
    cdm_store *again = NULL;
    CHECK(cdm_store_create(model, path, &again) != CDM_OK); /* it exists now */
    cdm_store_close(again);
    cdm_model_free(model);
    return exists(path);
}

/* ------------------------------------------------------------------------------------------ */
/* The C policy. */

typedef struct {
    int begins, creates, ends_creation, relationships, ends_relationships, validations, ends;
    int fail_at;              /* fail create_destination_instances at this source (-1: never) */
    int destroyed;
    int title_index;
    cdm_object *kept_source;  /* kept past its callback to check that it goes stale */
    cdm_context *kept_context;
    int checks_done;
} policy_state;

static int note_begin(cdm_context *ctx, void *user) {
    policy_state *s = user;
    s->begins++;
    const char *name = NULL;
    CHECK_RC(cdm_context_entity_mapping_name(ctx, &name), CDM_OK);
    CHECK_STR(name, "NoteToNote");
    CHECK_RC(cdm_context_source_entity_name(ctx, &name), CDM_OK);
    CHECK_STR(name, "Note");
    CHECK_RC(cdm_context_destination_entity_name(ctx, &name), CDM_OK);
    CHECK_STR(name, "Note");
    int pass = -1;
    CHECK_RC(cdm_context_pass(ctx, &pass), CDM_OK);
    CHECK(pass == 0);
    return CDM_OK;
}

/* A NULL out-pointer is CDM_MISUSE naming it, never CDM_OK with nothing done. */
static void check_callback_out_pointers(cdm_context *ctx, cdm_object *src) {
    CHECK_RC(cdm_context_entity_mapping_name(ctx, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "name pointer is NULL");
    CHECK_RC(cdm_context_source_entity_name(ctx, NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_destination_entity_name(ctx, NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_pass(ctx, NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_pass(NULL, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "context handle is NULL");
    const char *text = NULL; size_t n = 0;
    CHECK_RC(cdm_context_mapping_user_info_at(ctx, 0, NULL, &text), CDM_MISUSE);
    CHECK_RC(cdm_context_mapping_user_info_at(ctx, 0, &text, NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_property_mapping_at(ctx, CDM_PROPERTY_ATTRIBUTE, 0, NULL, &text), CDM_MISUSE);
    CHECK_RC(cdm_context_property_mapping_at(ctx, CDM_PROPERTY_ATTRIBUTE, 0, &text, NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_property_mapping(ctx, CDM_PROPERTY_ATTRIBUTE, "title", NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_property_mapping(ctx, CDM_PROPERTY_ATTRIBUTE, "nope", NULL), CDM_MISUSE);
    cdm_object *const *objects = NULL;
    CHECK_RC(cdm_context_destination_instances(ctx, "FolderToCategory", &src, 0, &objects, NULL), CDM_MISUSE);
    CHECK_RC(cdm_context_source_instances(ctx, "FolderToCategory", &src, 0, &objects, NULL), CDM_MISUSE);
    int64_t i64 = 0; double d = 0; int b = 0; const void *bytes = NULL;
    CHECK_RC(cdm_object_get_int64(src, "count", NULL, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "value pointer is NULL");
    CHECK_RC(cdm_object_get_int64(src, "nope", NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_double(src, "score", NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_bool(src, "flag", NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_date(src, "created", NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_text(src, "title", NULL, &n, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_blob(src, "data", NULL, &n, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_uuid(src, "ident", NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_int64_at(src, 2, NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_text_at(src, 0, NULL, NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_attribute_index(src, "title", NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_attribute_type(src, "title", NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_objects(src, "folder.notes", &objects, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_fields(src, NULL, 0, NULL), CDM_MISUSE);
    cdm_value *v = NULL;
    CHECK_RC(cdm_context_evaluate(ctx, "$source.count", src, NULL, &v), CDM_OK);
    CHECK_RC(cdm_value_int64(v, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "pointer is NULL");
    CHECK_RC(cdm_value_double(v, NULL), CDM_MISUSE);
    CHECK_RC(cdm_value_bool(v, NULL), CDM_MISUSE);
    CHECK_RC(cdm_value_date(v, NULL), CDM_MISUSE);
    CHECK_RC(cdm_value_text(v, NULL, &n), CDM_MISUSE);
    CHECK_RC(cdm_value_blob(v, NULL, &n), CDM_MISUSE);
    CHECK_RC(cdm_value_count(v, NULL), CDM_MISUSE);
    CHECK_RC(cdm_value_object(v, NULL), CDM_MISUSE);
    CHECK_RC(cdm_value_element_at(v, 0, NULL), CDM_MISUSE);
    CHECK_RC(cdm_value_int64(NULL, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "value handle is NULL");
    cdm_list *list = NULL;
    CHECK_RC(cdm_context_fetch_source(ctx, "Note", NULL, NULL, 0, 0, 0, &list), CDM_OK);
    CHECK_RC(cdm_list_count(list, NULL), CDM_MISUSE);
    CHECK_RC(cdm_list_objects(list, &objects, NULL), CDM_MISUSE);
    CHECK_RC(cdm_list_objects(list, &objects, &n), CDM_OK); CHECK(n == NOTES);
    (void)i64; (void)d; (void)b; (void)bytes;
}

/* Short-lived handles of the wrong kind, and long-lived ones where short-lived ones belong. */
static void check_callback_handle_kinds(cdm_context *ctx, cdm_object *src) {
    cdm_value *v = NULL;
    CHECK_RC(cdm_context_evaluate(ctx, "$source.count", src, NULL, &v), CDM_OK);
    cdm_list *list = NULL;
    CHECK_RC(cdm_context_fetch_source(ctx, "Note", NULL, NULL, 0, 0, 0, &list), CDM_OK);
    int64_t i64 = 0; size_t n = 0; const char *name = NULL;
    CHECK_RC(cdm_object_get_int64((cdm_object *)v, "count", &i64, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_value, not a cdm_object");
    CHECK_RC(cdm_value_int64((cdm_value *)src, &i64), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_object, not a cdm_value");
    CHECK_RC(cdm_list_count((cdm_list *)ctx, &n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_context, not a cdm_list");
    CHECK_RC(cdm_context_pass((cdm_context *)list, (int *)&n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_list, not a cdm_context");
    /* A short-lived handle where a long-lived one belongs, and the other way round. */
    CHECK_RC(cdm_model_entity_count((const cdm_model *)src, &n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_object, not a cdm_model");
    CHECK_RC(cdm_model_entity_at((const cdm_model *)v, 0, &name), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_value, not a cdm_model");
    const cdm_model *model = NULL;
    CHECK_RC(cdm_context_model(ctx, CDM_STORE_SOURCE, &model), CDM_OK);
    CHECK_RC(cdm_object_get_int64((cdm_object *)model, "count", &i64, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_model, not a cdm_object");
    CHECK_RC(cdm_list_count((cdm_list *)model, &n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_model, not a cdm_list");
    CHECK_RC(cdm_model_entity_count(model, &n), CDM_OK); CHECK(n == 2);
}

/* Every getter and error path inside a callback, once. */
static void check_getters(cdm_context *ctx, cdm_object *src, policy_state *s) {
    const char *text = NULL; size_t len = 0; int is_null = -1;
    int64_t i64 = 0; double d = 0; int b = -1; const void *blob = NULL; unsigned char uuid[16];
    CHECK_RC(cdm_object_get_text(src, "title", &text, &len, &is_null), CDM_OK);
    CHECK_STR(text, "Note 0"); CHECK(len == 6); CHECK(is_null == 0);
    CHECK_RC(cdm_object_get_text_at(src, s->title_index, &text, &len, &is_null), CDM_OK);
    CHECK_STR(text, "Note 0");
    CHECK_RC(cdm_object_get_int64(src, "count", &i64, &is_null), CDM_OK); CHECK(i64 == 0);
    CHECK_RC(cdm_object_get_int64_at(src, 2, &i64, NULL), CDM_OK);
    CHECK_RC(cdm_object_get_double(src, "score", &d, &is_null), CDM_OK); CHECK(d == 0.5);
    CHECK_RC(cdm_object_get_double_at(src, 3, &d, &is_null), CDM_OK); CHECK(d == 0.5);
    CHECK_RC(cdm_object_get_bool(src, "flag", &b, &is_null), CDM_OK); CHECK(b == 0);
    CHECK_RC(cdm_object_get_bool_at(src, 4, &b, &is_null), CDM_OK);
    CHECK_RC(cdm_object_get_date(src, "created", &d, &is_null), CDM_OK); CHECK(d == 700000000.0);
    CHECK_RC(cdm_object_get_date_at(src, 5, &d, &is_null), CDM_OK);
    CHECK_RC(cdm_object_get_blob(src, "data", &blob, &len, &is_null), CDM_OK);
    CHECK(len == 3 && ((const unsigned char *)blob)[1] == 2);
    CHECK_RC(cdm_object_get_blob_at(src, 6, &blob, &len, &is_null), CDM_OK);
    CHECK_RC(cdm_object_get_uuid(src, "ident", uuid, &is_null), CDM_OK);
    CHECK(memcmp(uuid, UUID0, 16) == 0);
    CHECK_RC(cdm_object_get_uuid_at(src, 7, uuid, &is_null), CDM_OK);
    CHECK_RC(cdm_object_get_text(src, "price", &text, &len, &is_null), CDM_OK); CHECK_STR(text, "12.75");
    CHECK_RC(cdm_object_get_text(src, "link", &text, &len, &is_null), CDM_OK); CHECK_STR(text, "https://example.com/n");
    /* Key path through a to-one. */
    CHECK_RC(cdm_object_get_text(src, "folder.name", &text, &len, &is_null), CDM_OK); CHECK_STR(text, "Work");
    /* Errors: wrong type, unknown names, relationship via a getter, NULLs, invalid UTF-8 key. */
    CHECK_RC(cdm_object_get_int64(src, "title", &i64, &is_null), CDM_MISMATCH);
    CHECK_HAS(cdm_context_errmsg(ctx), "title");
    CHECK(cdm_context_errcode(ctx) == CDM_MISMATCH);
    CHECK(cdm_error_code(cdm_context_error(ctx)) == CDM_MISMATCH);
    CHECK_RC(cdm_object_get_text(src, "count", &text, &len, &is_null), CDM_MISMATCH);
    CHECK_RC(cdm_object_get_double_at(src, 0, &d, &is_null), CDM_MISMATCH);
    CHECK_RC(cdm_object_get_text(src, "nope", &text, &len, &is_null), CDM_NOTFOUND);
    CHECK_HAS(cdm_context_errmsg(ctx), "nope");
    CHECK_RC(cdm_object_get_text(src, "folder.nope", &text, &len, &is_null), CDM_NOTFOUND);
    CHECK_RC(cdm_object_get_text(src, "folder", &text, &len, &is_null), CDM_MISMATCH);
    CHECK_RC(cdm_object_get_text_at(src, 42, &text, &len, &is_null), CDM_NOTFOUND);
    CHECK_RC(cdm_object_get_text(src, NULL, &text, &len, &is_null), CDM_MISUSE);
    CHECK_RC(cdm_object_get_text(NULL, "title", &text, &len, &is_null), CDM_MISUSE);
    CHECK_RC(cdm_object_get_text(src, "ti\xfftle", &text, &len, &is_null), CDM_ENCODING);
    /* Introspection. */
    const char *name = NULL;
    CHECK_RC(cdm_object_entity_name(src, &name), CDM_OK); CHECK_STR(name, "Note");
    int idx = -1, type = 0;
    CHECK_RC(cdm_object_attribute_index(src, "body", &idx), CDM_OK); CHECK(idx == 1);
    CHECK_RC(cdm_object_attribute_index(src, "nope", &idx), CDM_NOTFOUND);
    CHECK_RC(cdm_object_attribute_type(src, "price", &type), CDM_OK); CHECK(type == CDM_ATTR_DECIMAL);
    CHECK_RC(cdm_object_attribute_type(src, "nope", &type), CDM_NOTFOUND);
    CHECK_RC(cdm_object_uri(src, &name), CDM_OK); CHECK_HAS(name, "x-coredata://");
    CHECK_HAS(name, "/Note/p");
    /* Traversal. */
    cdm_object *folder = NULL;
    CHECK_RC(cdm_object_get_object(src, "folder", &folder), CDM_OK);
    CHECK(folder != NULL);
    cdm_object *const *notes = NULL; size_t count = 0;
    CHECK_RC(cdm_object_get_objects(folder, "notes", &notes, &count), CDM_OK);
    CHECK(count == NOTES / 2);
    CHECK_RC(cdm_object_get_objects(src, "folder.notes", &notes, &count), CDM_OK);
    CHECK(count == NOTES / 2);
    CHECK_RC(cdm_object_get_object(folder, "notes", &folder), CDM_MISMATCH);
    CHECK_RC(cdm_object_get_object(src, "title", &folder), CDM_MISMATCH);
    CHECK_RC(cdm_object_get_object(src, "nope", &folder), CDM_NOTFOUND);
    cdm_value *v = NULL;
    CHECK_RC(cdm_object_get_value(src, "folder.notes.title", &v), CDM_OK);
    CHECK(cdm_value_type(v) == CDM_VALUE_COLLECTION);
    CHECK_RC(cdm_value_count(v, &count), CDM_OK); CHECK(count == NOTES / 2);
    cdm_value *el = NULL;
    CHECK_RC(cdm_value_element_at(v, 0, &el), CDM_OK);
    CHECK(cdm_value_type(el) == CDM_VALUE_STRING);
    CHECK_RC(cdm_value_element_at(v, 99, &el), CDM_NOTFOUND);
    CHECK_RC(cdm_object_get_value(src, "nope", &v), CDM_NOTFOUND);
    /* JSON views. */
    char *json = NULL;
    CHECK_RC(cdm_object_to_json(src, &json), CDM_OK);
    CHECK_HAS(json, "\"title\":\"Note 0\"");
    CHECK_HAS(json, "\"entity\":\"Note\"");
    cdm_free(json);
    /* JSON crosses the interface as text only: a host parses it with its own library. */
    CHECK_RC(cdm_object_to_json(src, &json), CDM_OK);
    json_t *j = json_loads(json, 0, NULL);
    cdm_free(json);
    CHECK(j && json_integer_value(json_object_get(json_object_get(j, "attributes"), "count")) == 0);
    CHECK_STR(json_string_value(json_object_get(json_object_get(j, "attributes"), "ident")), "123E4567-E89B-12D3-A456-426614174000");
    json_decref(j);
    CHECK_RC(cdm_object_to_json(src, NULL), CDM_MISUSE);
    /* Expressions and values. */
    CHECK_RC(cdm_context_evaluate(ctx, "$source.count + 5", src, NULL, &v), CDM_OK);
    CHECK_RC(cdm_value_int64(v, &i64), CDM_OK); CHECK(i64 == 5);
    CHECK_RC(cdm_value_double(v, &d), CDM_OK); CHECK(d == 5.0);
    CHECK_RC(cdm_value_bool(v, &b), CDM_OK); CHECK(b == 1);
    CHECK_RC(cdm_value_text(v, &text, &len), CDM_MISMATCH);
    CHECK_RC(cdm_value_to_json(v, &json), CDM_OK); CHECK_STR(json, "5"); cdm_free(json);
    CHECK_RC(cdm_context_evaluate(ctx, "$source.title", src, NULL, &v), CDM_OK);
    CHECK_RC(cdm_value_text(v, &text, &len), CDM_OK); CHECK_STR(text, "Note 0");
    CHECK_RC(cdm_value_int64(v, &i64), CDM_MISMATCH);
    CHECK_RC(cdm_context_evaluate(ctx, "$source.created", src, NULL, &v), CDM_OK);
    CHECK_RC(cdm_value_date(v, &d), CDM_OK); CHECK(d == 700000000.0);
    CHECK_RC(cdm_context_evaluate(ctx, "$source.data", src, NULL, &v), CDM_OK);
    CHECK_RC(cdm_value_blob(v, &blob, &len), CDM_OK); CHECK(len == 3);
    CHECK_RC(cdm_context_evaluate(ctx, "$source.ident", src, NULL, &v), CDM_OK);
    CHECK_RC(cdm_value_uuid(v, uuid), CDM_OK); CHECK(memcmp(uuid, UUID0, 16) == 0);
    CHECK_RC(cdm_context_evaluate(ctx, "$source.folder", src, NULL, &v), CDM_OK);
    CHECK(cdm_value_type(v) == CDM_VALUE_OBJECT);
    CHECK_RC(cdm_value_object(v, &folder), CDM_OK);
    CHECK_RC(cdm_object_get_text(folder, "name", &text, &len, NULL), CDM_OK); CHECK_STR(text, "Work");
    CHECK_RC(cdm_value_set_int64(v, 3), CDM_MISUSE); /* read-only */
    CHECK_RC(cdm_context_evaluate(ctx, "$source.title +", src, NULL, &v), CDM_EXPRESSION_SYNTAX);
    CHECK(cdm_error_offset(cdm_context_error(ctx)) == 15);
    /* Error offsets count UTF-8 bytes, as sqlite3_error_offset: the end of this text is
    ** character 11 (👍🏽 is one character) but byte 20 (ü, ß: 2 bytes each; 👍🏽: 8). */
    CHECK_RC(cdm_context_evaluate(ctx, "'Grüße 👍🏽' +", src, NULL, &v), CDM_EXPRESSION_SYNTAX);
    CHECK(cdm_error_offset(cdm_context_error(ctx)) == 20);
    CHECK(cdm_error_offset(cdm_last_error()) == 20);
    CHECK_HAS(cdm_context_errmsg(ctx), "at character 11");
    /* Where the offset points, the host's text continues: bytes 0..20 are the whole text. */
    CHECK(strlen("'Grüße 👍🏽' +") == 20);
    CHECK_RC(cdm_context_evaluate(ctx, "$source.nope", src, NULL, &v), CDM_INVALID_ARGUMENT == CDM_INVALID_ARGUMENT ? cdm_context_errcode(ctx) : 0);
    CHECK(cdm_context_errcode(ctx) != CDM_OK);
    CHECK_RC(cdm_context_evaluate(ctx, NULL, src, NULL, &v), CDM_MISUSE);
    CHECK(cdm_value_type(NULL) == -1);
    /* Context errors. */
    cdm_object *o = NULL;
    CHECK_RC(cdm_context_create_instance(ctx, "Nope", &o), CDM_NOTFOUND);
    CHECK_RC(cdm_context_create_instance(NULL, "Note", &o), CDM_MISUSE);
    CHECK_RC(cdm_context_associate(ctx, NULL, src), CDM_MISUSE);
    CHECK_RC(cdm_context_destination_instances(ctx, "Nope", &src, 1, &notes, &count), CDM_NOTFOUND);
    CHECK_RC(cdm_context_destination_instances(ctx, "FolderToCategory", NULL, 1, &notes, &count), CDM_MISUSE);
    CHECK_RC(cdm_context_source_instances(ctx, "Nope", &src, 1, &notes, &count), CDM_NOTFOUND);
    check_callback_out_pointers(ctx, src);
    check_callback_handle_kinds(ctx, src);
    s->checks_done = 1;
}

static int note_create(cdm_context *ctx, cdm_object *src, void *user) {
    policy_state *s = user;
    if (s->creates == s->fail_at) {
        s->creates++;
        return cdm_context_fail(ctx, 4242, "boom at the third note");
    }
    s->creates++;
    if (!s->checks_done) {
        check_getters(ctx, src, s);
        s->kept_source = src;
        s->kept_context = ctx;
    }
    cdm_object *dst = NULL;
    int rc = cdm_context_create_instance(ctx, "Note", &dst);
    if (rc) return rc;
    if ((rc = cdm_context_apply_attribute_mappings(ctx, src, dst))) return rc;
    /* Adjust: a flag by index, the folder's name through a key path, a null body noticed. */
    int flag = 0, is_null = 0;
    if ((rc = cdm_object_get_bool(src, "flag", &flag, NULL))) return rc;
    if ((rc = cdm_object_set_bool(dst, "flag", !flag))) return rc;
    const char *folder = NULL; size_t len = 0;
    if ((rc = cdm_object_get_text(src, "folder.name", &folder, &len, &is_null))) return rc;
    if ((rc = cdm_object_set_text(dst, "folderName", folder, (long)len))) return rc;
    const char *body = NULL;
    if ((rc = cdm_object_get_text(src, "body", &body, &len, &is_null))) return rc;
    if (is_null) {
        CHECK(body == NULL && len == 0);
        if ((rc = cdm_object_set_null(dst, "summary"))) return rc;
    }
    return cdm_context_associate(ctx, src, dst);
}

static int note_end_creation(cdm_context *ctx, void *user) { (void)ctx; ((policy_state *)user)->ends_creation++; return CDM_OK; }

static int note_relationships(cdm_context *ctx, cdm_object *dst, void *user) {
    policy_state *s = user;
    s->relationships++;
    cdm_object *const *sources = NULL, *const *categories = NULL;
    size_t n = 0, m = 0;
    int rc = cdm_context_source_instances(ctx, "NoteToNote", &dst, 1, &sources, &n);
    if (rc) return rc;
    if (n != 1) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "no source for a destination note");
    cdm_object *folder = NULL;
    if ((rc = cdm_object_get_object(sources[0], "folder", &folder))) return rc;
    if ((rc = cdm_context_destination_instances(ctx, "FolderToCategory", &folder, 1, &categories, &m))) return rc;
    if (m != 1) return cdm_context_fail(ctx, CDM_ENTITY_MIGRATION_POLICY, "no category for a folder");
    return cdm_object_set_object(dst, "category", categories[0]);
}

static int note_end_relationships(cdm_context *ctx, void *user) { (void)ctx; ((policy_state *)user)->ends_relationships++; return CDM_OK; }
static int note_validate(cdm_context *ctx, void *user) { (void)ctx; ((policy_state *)user)->validations++; return CDM_OK; }
static int note_end(cdm_context *ctx, void *user) { (void)ctx; ((policy_state *)user)->ends++; return CDM_OK; }
static void note_destroy(void *user) { ((policy_state *)user)->destroyed++; }

/* The host function: the first 10 bytes of the body, upper-cased first letter; null stays null. */
static int function_calls, function_destroyed;
static int summarize(cdm_context *ctx, int argc, cdm_value *const *argv, cdm_value *result, void *user) {
    (void)ctx; (void)user;
    function_calls++;
    if (argc != 1) return cdm_context_fail(ctx, CDM_EXPRESSION_EVALUATION, "summarize: takes one argument");
    if (function_calls == 1) {
        CHECK_RC(cdm_value_set_decimal(result, "1e"), CDM_MISMATCH);
        CHECK_RC(cdm_value_set_decimal(result, "nan"), CDM_MISMATCH);
        CHECK_RC(cdm_value_set_decimal(result, NULL), CDM_MISUSE);
        CHECK_RC(cdm_value_set_decimal(argv[0], "1"), CDM_MISUSE); /* arguments are read-only */
        CHECK_RC(cdm_value_set_decimal(result, "-12.50"), CDM_OK);
        char *json = NULL;
        CHECK_RC(cdm_value_to_json(result, &json), CDM_OK);
        CHECK_HAS(json, "-12.5");
        cdm_free(json);
    }
    if (cdm_value_type(argv[0]) == CDM_VALUE_NULL) return cdm_value_set_null(result);
    const char *text = NULL; size_t len = 0;
    int rc = cdm_value_text(argv[0], &text, &len);
    if (rc) return rc;
    char buf[16];
    size_t n = len < 10 ? len : 10;
    memcpy(buf, text, n);
    buf[n] = 0;
    return cdm_value_set_text(result, buf, CDM_NUL_TERMINATED);
}
static void function_destroy(void *user) { (void)user; function_destroyed++; }

typedef struct {
    int calls; int cancel_at; double last_fraction; int saw_mapping;
    int64_t last_run_processed, last_run_total; int run_rows_ok;
} progress_state;
static int on_progress(const cdm_progress *p, void *user) {
    progress_state *s = user;
    if (s->calls == 0) s->run_rows_ok = 1;
    /* The whole run's rows: never going back, never past the total; one step outside a chain. */
    if (p->run_processed < s->last_run_processed || p->run_processed > p->run_total || p->step != 0 || p->step_count != 1)
        s->run_rows_ok = 0;
    s->last_run_processed = p->run_processed;
    s->last_run_total = p->run_total;
    s->calls++;
    s->last_fraction = p->fraction;
    if (p->entity_mapping && strcmp(p->entity_mapping, "NoteToNote") == 0 && p->stage >= 1 && p->stage <= 3) s->saw_mapping = 1;
    return s->cancel_at > 0 && s->calls >= s->cancel_at;
}

static cdm_migration *new_migration(policy_state *ps) {
    cdm_model *src = NULL, *dst = NULL;
    cdm_mapping *mp = NULL;
    cdm_model_from_json(SOURCE_MODEL, &src);
    cdm_model_from_json(DESTINATION_MODEL, &dst);
    cdm_mapping_from_json(MAPPING, &mp);
    cdm_migration *mig = NULL;
    CHECK_RC(cdm_migration_new(src, dst, &mp, 1, &mig), CDM_OK);
    /* The migration keeps what it needs. */
    cdm_model_free(src);
    cdm_model_free(dst);
    cdm_mapping_free(mp);
    cdm_policy policy = {note_begin, note_create, note_end_creation, note_relationships, note_end_relationships, note_validate, note_end, NULL};
    CHECK_RC(cdm_migration_register_policy(mig, "NotePolicy", &policy, sizeof policy, ps, note_destroy), CDM_OK);
    CHECK_RC(cdm_migration_register_function(mig, "Helpers", "summarize:", summarize, NULL, function_destroy), CDM_OK);
    return mig;
}

static void check_destination(const char *path) {
    sqlite3 *db = NULL;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(db,
        "SELECT n.ZTITLE, n.ZSUMMARY, n.ZCOUNT, n.ZSCORE, n.ZFLAG, n.ZCREATED, n.ZDATA, n.ZIDENT, n.ZPRICE, n.ZLINK, n.ZFOLDERNAME, c.ZNAME "
        "FROM ZNOTE n LEFT JOIN ZCATEGORY c ON c.Z_PK = n.ZCATEGORY ORDER BY n.Z_PK", -1, &st, NULL) == SQLITE_OK);
    int row = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        char title[32], summary[32];
        snprintf(title, sizeof title, "Note %d", row);
        snprintf(summary, sizeof summary, "Body of no");
        CHECK_STR((const char *)sqlite3_column_text(st, 0), title);
        if (row == 2) CHECK(sqlite3_column_type(st, 1) == SQLITE_NULL);
        else CHECK_STR((const char *)sqlite3_column_text(st, 1), summary);
        CHECK(sqlite3_column_int64(st, 2) == row * 10);
        CHECK(sqlite3_column_double(st, 3) == row + 0.5);
        CHECK(sqlite3_column_int(st, 4) == !(row % 2));
        CHECK(sqlite3_column_double(st, 5) == 700000000.0 + row);
        const unsigned char *data = sqlite3_column_blob(st, 6);
        CHECK(sqlite3_column_bytes(st, 6) == 3 && data && data[2] == row);
        const unsigned char *uuid = sqlite3_column_blob(st, 7);
        CHECK(sqlite3_column_bytes(st, 7) == 16 && uuid && uuid[15] == row && uuid[0] == 0x12);
        CHECK(sqlite3_column_double(st, 8) == 12.75);
        CHECK_STR((const char *)sqlite3_column_text(st, 9), "https://example.com/n");
        CHECK_STR((const char *)sqlite3_column_text(st, 10), row % 2 ? "Home" : "Work");
        CHECK_STR((const char *)sqlite3_column_text(st, 11), row % 2 ? "Home" : "Work");
        row++;
    }
    CHECK(row == NOTES);
    sqlite3_finalize(st);
    st = NULL;
    CHECK(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM ZCATEGORY", -1, &st, NULL) == SQLITE_OK);
    CHECK(st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 2);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void test_migration(const char *source) {
    policy_state ps = {0};
    ps.fail_at = -1;
    function_calls = function_destroyed = 0;
    cdm_model *src = NULL;
    cdm_model_from_json(SOURCE_MODEL, &src);
    cdm_model_attribute_index(src, "Note", "title", &ps.title_index);
    cdm_model_free(src);

    cdm_migration *mig = new_migration(&ps);
    progress_state pr = {0};
    CHECK_RC(cdm_migration_set_progress(mig, on_progress, &pr, NULL), CDM_OK);
    CHECK_RC(cdm_migration_set_progress_interval(mig, 1), CDM_OK);
    CHECK_RC(cdm_migration_set_progress_interval(mig, 0), CDM_INVALID_ARGUMENT);
    char *report = NULL;
    CHECK_RC(cdm_migration_report_json(mig, &report), CDM_MISUSE);
    char destination[512];
    snprintf(destination, sizeof destination, "%s", path_in_dir("v2.sqlite"));
    int run_rc = cdm_migration_run(mig, source, destination);
    CHECK(run_rc == CDM_OK);
    if (run_rc) fprintf(stderr, "  run: %s\n", cdm_migration_errmsg(mig));
    CHECK(ps.begins == 1 && ps.creates == NOTES && ps.ends_creation == 1);
    CHECK(ps.relationships == NOTES && ps.ends_relationships == 1 && ps.validations == 1 && ps.ends == 1);
    CHECK(ps.checks_done);
    CHECK(function_calls == NOTES);
    CHECK(pr.calls > 3 && pr.saw_mapping && pr.last_fraction == 1.0);
    /* Every folder and note handled in each of the three stages: the run's rows, all done at the end. */
    CHECK(pr.run_rows_ok && pr.last_run_total > 3 * NOTES && pr.last_run_total % 3 == 0);
    CHECK(pr.last_run_processed == pr.last_run_total);
    /* Handles kept past their callback are stale, not dangling. */
    const char *text = NULL;
    CHECK_RC(cdm_object_get_text(ps.kept_source, "title", &text, NULL, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "no longer valid");
    cdm_object *o = NULL;
    CHECK_RC(cdm_context_create_instance(ps.kept_context, "Note", &o), CDM_MISUSE);
    CHECK(cdm_context_errcode(ps.kept_context) == CDM_MISUSE);
    CHECK(cdm_context_error(ps.kept_context) == NULL);
    CHECK(strlen(cdm_context_errmsg(ps.kept_context)) > 0);
    cdm_object_release(ps.kept_source); /* harmless */
    CHECK_RC(cdm_migration_report_json(mig, &report), CDM_OK);
    CHECK_HAS(report, "\"NoteToNote\"");
    CHECK_HAS(report, "\"Category\":2");
    cdm_free(report);
    check_destination(destination);
    /* The destination exists now: running again refuses, naming it. */
    CHECK_RC(cdm_migration_run(mig, source, destination), CDM_MIGRATION_MANAGER_DESTINATION_STORE);
    CHECK_HAS(cdm_migration_errmsg(mig), "v2.sqlite");
    CHECK(cdm_error_code(cdm_migration_error(mig)) == CDM_MIGRATION_MANAGER_DESTINATION_STORE);
    CHECK_RC(cdm_migration_run(mig, NULL, destination), CDM_MISUSE);
    CHECK_RC(cdm_migration_run(NULL, source, destination), CDM_MISUSE);
    CHECK_RC(cdm_migration_run(mig, path_in_dir("missing.sqlite"), path_in_dir("x.sqlite")), CDM_MIGRATION_MANAGER_SOURCE_STORE);
    CHECK(!exists(path_in_dir("x.sqlite")));
    CHECK(ps.destroyed == 0);
    CHECK_RC(cdm_migration_free(mig), CDM_OK);
    CHECK(ps.destroyed == 1);
    CHECK(function_destroyed == 1);
}

static void test_failure_and_cancel(const char *source) {
    long before_size = 0, after_size = 0;
    unsigned char *before = read_file(source, &before_size);
    policy_state ps = {0};
    ps.fail_at = 2;
    ps.checks_done = 1;
    cdm_migration *mig = new_migration(&ps);
    char destination[512];
    snprintf(destination, sizeof destination, "%s", path_in_dir("failed.sqlite"));
    CHECK_RC(cdm_migration_run(mig, source, destination), 4242);
    CHECK_STR(cdm_migration_errmsg(mig), "boom at the third note");
    CHECK(ps.creates == 3);
    CHECK(!exists(destination));
    CHECK(count_prefixed("failed.sqlite.cdmigrate-") == 0); /* no temporary or lock file is left */
    unsigned char *after = read_file(source, &after_size);
    CHECK(before_size > 0 && before_size == after_size && memcmp(before, after, before_size) == 0);
    free(after);

    /* A hook returning a code without a message: the message names the hook. */
    ps.fail_at = 0;
    ps.creates = 0;
    cdm_migration_free(mig);
    mig = new_migration(&ps);
    progress_state pr = {0};
    pr.cancel_at = 2;
    CHECK_RC(cdm_migration_set_progress(mig, on_progress, &pr, NULL), CDM_OK);
    CHECK_RC(cdm_migration_run(mig, source, destination), CDM_MIGRATION_CANCELLED);
    CHECK(!exists(destination));
    CHECK_RC(cdm_migration_set_progress(mig, NULL, NULL, NULL), CDM_OK);

    /* In place, failing: the store is unchanged. */
    char copy[512];
    snprintf(copy, sizeof copy, "%s", path_in_dir("inplace.sqlite"));
    FILE *f = fopen(copy, "wb");
    fwrite(before, 1, before_size, f);
    fclose(f);
    ps.fail_at = 4;
    ps.creates = 0;
    CHECK_RC(cdm_migration_run_in_place(mig, copy), 4242);
    after = read_file(copy, &after_size);
    CHECK(after_size == before_size && memcmp(before, after, before_size) == 0);
    free(after);
    /* In place, succeeding: the store now has the destination's tables. */
    ps.fail_at = -1;
    ps.creates = 0;
    CHECK_RC(cdm_migration_run_in_place(mig, copy), CDM_OK);
    check_destination(copy);
    CHECK_RC(cdm_migration_run_in_place(mig, NULL), CDM_MISUSE);
    cdm_migration_free(mig);
    free(before);
}

static int destroyed_on_failure;
static void count_destroy(void *user) { (void)user; destroyed_on_failure++; }

static void test_migration_misuse(void) {
    cdm_model *src = NULL, *dst = NULL;
    cdm_mapping *mp = NULL;
    cdm_model_from_json(SOURCE_MODEL, &src);
    cdm_model_from_json(DESTINATION_MODEL, &dst);
    cdm_mapping_from_json(MAPPING, &mp);
    cdm_migration *mig = NULL;
    CHECK_RC(cdm_migration_new(src, dst, &mp, 0, &mig), CDM_MIGRATION_MISSING_MAPPING_MODEL);
    CHECK_RC(cdm_migration_run(mig, "a", "b"), CDM_MISUSE);
    cdm_policy p = {0};
    destroyed_on_failure = 0;
    CHECK_RC(cdm_migration_register_policy(mig, "X", &p, sizeof p, NULL, count_destroy), CDM_MISUSE);
    CHECK(destroyed_on_failure == 1);
    CHECK_RC(cdm_migration_register_policy(NULL, "X", &p, sizeof p, NULL, count_destroy), CDM_MISUSE);
    CHECK(destroyed_on_failure == 2);
    CHECK_RC(cdm_migration_register_function(NULL, "A", "b:", summarize, NULL, count_destroy), CDM_MISUSE);
    CHECK(destroyed_on_failure == 3);
    CHECK_RC(cdm_migration_set_progress(NULL, on_progress, NULL, count_destroy), CDM_MISUSE);
    CHECK(destroyed_on_failure == 4);
    cdm_migration_free(mig);
    CHECK_RC(cdm_migration_new(dst, src, &mp, 1, &mig), CDM_INVALID_MAPPING);
    CHECK(strlen(cdm_migration_errmsg(mig)) > 0);
    cdm_migration_free(mig);
    CHECK_RC(cdm_migration_new(NULL, dst, &mp, 1, &mig), CDM_MISUSE);
    cdm_migration_free(mig);
    CHECK_RC(cdm_migration_new(src, dst, &mp, 1, NULL), CDM_MISUSE);
    CHECK_RC(cdm_migration_new(src, dst, &mp, 1, &mig), CDM_OK);
    CHECK_RC(cdm_migration_register_policy(mig, "X", &p, 3, NULL, count_destroy), CDM_MISUSE);
    CHECK_RC(cdm_migration_register_policy(mig, NULL, &p, sizeof p, NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_migration_register_function(mig, "A", "b:", NULL, NULL, NULL), CDM_MISUSE);
    /* Registering a name again destroys the earlier user pointer. */
    destroyed_on_failure = 0;
    CHECK_RC(cdm_migration_register_policy(mig, "Y", &p, sizeof p, NULL, count_destroy), CDM_OK);
    CHECK_RC(cdm_migration_register_policy(mig, "Y", &p, sizeof p, NULL, count_destroy), CDM_OK);
    CHECK(destroyed_on_failure == 1);
    /* A smaller (older) policy struct is accepted. */
    CHECK_RC(cdm_migration_register_policy(mig, "Z", &p, sizeof(void *) * 2, NULL, NULL), CDM_OK);
    CHECK_RC(cdm_migration_free(mig), CDM_OK);
    CHECK(destroyed_on_failure == 2);
    CHECK_RC(cdm_migration_free(NULL), CDM_OK);
    CHECK(cdm_migration_errcode(NULL) == CDM_MISUSE);
    CHECK(cdm_migration_error(NULL) == NULL);
    CHECK(strlen(cdm_migration_errmsg(NULL)) > 0);
    CHECK_RC(cdm_migration_report_json(NULL, NULL), CDM_MISUSE);
    cdm_model_free(src);
    cdm_model_free(dst);
    cdm_mapping_free(mp);
}

/* One mapping shared by two migrations to different destination models: each keeps its own
** binding, so the first one still migrates every attribute after the second was made. */
static const char *CATEGORY_MODEL =
    "{\"entities\": [{\"name\": \"Category\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}]}]}";
static const char *RANKED_CATEGORY_MODEL =
    "{\"entities\": [{\"name\": \"Category\", \"attributes\": [{\"name\": \"rank\", \"type\": \"integer32\"},"
    " {\"name\": \"label\", \"type\": \"string\"}, {\"name\": \"name\", \"type\": \"string\"}]}]}";
static const char *FOLDER_MAPPING =
    "{\"entityMappings\": [{\"name\": \"FolderToCategory\", \"sourceEntity\": \"Folder\", \"destinationEntity\": \"Category\","
    " \"predicate\": \"TRUEPREDICATE\", \"attributeMappings\": {\"name\": \"$source.name\"}}]}";

static int count_named_categories(const char *path) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int named = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(ZNAME) FROM ZCATEGORY WHERE ZNAME IN ('Work', 'Home')", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) named = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return named;
}

static void test_shared_mapping(const char *source) {
    cdm_model *src = NULL, *plain = NULL, *ranked = NULL;
    cdm_mapping *mp = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &src), CDM_OK);
    CHECK_RC(cdm_model_from_json(CATEGORY_MODEL, &plain), CDM_OK);
    CHECK_RC(cdm_model_from_json(RANKED_CATEGORY_MODEL, &ranked), CDM_OK);
    CHECK_RC(cdm_mapping_from_json(FOLDER_MAPPING, &mp), CDM_OK);
    cdm_migration *first = NULL, *second = NULL;
    CHECK_RC(cdm_migration_new(src, plain, (cdm_mapping *const *)&mp, 1, &first), CDM_OK);
    CHECK_RC(cdm_migration_new(src, ranked, (cdm_mapping *const *)&mp, 1, &second), CDM_OK);
    CHECK_RC(cdm_mapping_validate(mp, src, ranked), CDM_OK);
    cdm_mapping_free(mp);
    CHECK_RC(cdm_migration_run(first, source, path_in_dir("shared-first.sqlite")), CDM_OK);
    CHECK_RC(cdm_migration_run(second, source, path_in_dir("shared-second.sqlite")), CDM_OK);
    char *report = NULL;
    CHECK_RC(cdm_migration_report_json(first, &report), CDM_OK);
    CHECK_HAS(report, "\"sourceInstances\":2");
    cdm_free(report);
    CHECK(count_named_categories(path_in_dir("shared-first.sqlite")) == 2);
    CHECK(count_named_categories(path_in_dir("shared-second.sqlite")) == 2);
    cdm_migration_free(first);
    cdm_migration_free(second);
    cdm_model_free(src);
    cdm_model_free(plain);
    cdm_model_free(ranked);
}

/* Every function with an out-pointer outside callbacks: NULL is CDM_MISUSE naming it, and the
** handle is still checked first. */
static void test_null_out_pointers(void) {
    cdm_model *m = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &m), CDM_OK);
    CHECK_RC(cdm_model_entity_count(NULL, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "model handle is NULL");
    CHECK_RC(cdm_model_entity_count(m, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "count pointer is NULL");
    CHECK_RC(cdm_model_entity_at(m, 0, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "name pointer is NULL");
    CHECK_RC(cdm_model_attribute_index(m, "Note", "title", NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "index pointer is NULL");
    CHECK_RC(cdm_model_attribute_type(m, "Note", "title", NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "type pointer is NULL");
    CHECK_RC(cdm_model_attribute_count(m, "NoSuchEntity", NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "count pointer is NULL");
    CHECK_RC(cdm_model_attribute_count(m, "Note", NULL), CDM_MISUSE);
    CHECK_RC(cdm_model_relationship_count(m, "Note", NULL), CDM_MISUSE);
    CHECK_RC(cdm_model_entity_parent(m, "Note", NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "parent pointer is NULL");
    CHECK_RC(cdm_model_attribute_at(m, "Note", 0, NULL), CDM_MISUSE);
    CHECK_RC(cdm_model_attribute_info(m, "Note", "title", NULL), CDM_MISUSE);
    CHECK_RC(cdm_model_relationship_at(m, "Note", 0, NULL), CDM_MISUSE);
    CHECK_RC(cdm_model_relationship_info(m, "Note", "folder", NULL), CDM_MISUSE);
    cdm_mapping *mp = NULL;
    CHECK_RC(cdm_mapping_from_json(MAPPING, &mp), CDM_OK);
    CHECK_RC(cdm_mapping_entity_mapping_count(mp, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "count pointer is NULL");
    CHECK_RC(cdm_mapping_entity_mapping_count(NULL, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "mapping handle is NULL");
    CHECK_RC(cdm_mapping_entity_mapping_at(mp, 0, NULL), CDM_MISUSE);
    CHECK_RC(cdm_mapping_from_json(MAPPING, NULL), CDM_MISUSE);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(m, path_in_dir("out-pointers.sqlite"), &store), CDM_OK);
    CHECK_RC(cdm_store_insert(store, "Note", NULL), CDM_MISUSE);
    cdm_object *note = NULL;
    CHECK_RC(cdm_store_insert(store, "Note", &note), CDM_OK);
    CHECK_RC(cdm_object_entity_name(note, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_uri(note, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_text(note, "title", NULL, NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_fields(note, NULL, 0, NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_object(note, "folder", NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_get_value(note, "title", NULL), CDM_MISUSE);
    CHECK_RC(cdm_object_to_json(note, NULL), CDM_MISUSE);
    cdm_store_close(store);
    cdm_migration *mig = NULL;
    CHECK_RC(cdm_migration_new(m, m, &mp, 1, NULL), CDM_MISUSE);
    CHECK_RC(cdm_migration_new(m, m, &mp, 1, &mig), CDM_INVALID_MAPPING);
    cdm_migration_free(mig);
    CHECK_RC(cdm_migration_report_json(NULL, NULL), CDM_MISUSE); CHECK_HAS(cdm_last_errmsg(), "migration handle is NULL");
    cdm_mapping_free(mp);
    cdm_model_free(m);
}

/* Every kind of long-lived handle passed where another kind belongs: CDM_MISUSE naming both. */
static void test_wrong_kind_handles(void) {
    cdm_model *m = NULL, *dst = NULL;
    cdm_mapping *mp = NULL;
    cdm_migration *mig = NULL;
    cdm_store *store = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &m), CDM_OK);
    CHECK_RC(cdm_model_from_json(CATEGORY_MODEL, &dst), CDM_OK);
    CHECK_RC(cdm_mapping_from_json(FOLDER_MAPPING, &mp), CDM_OK);
    CHECK_RC(cdm_migration_new(m, dst, &mp, 1, &mig), CDM_OK);
    CHECK_RC(cdm_store_create(m, path_in_dir("kinds.sqlite"), &store), CDM_OK);
    cdm_object *note = NULL;
    CHECK_RC(cdm_store_insert(store, "Note", &note), CDM_OK);
    size_t n = 0; int index = 0; char *json = NULL; const char *name = NULL;

    /* As a model. */
    CHECK_RC(cdm_model_entity_count((cdm_model *)mp, &n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the model handle is a cdm_mapping, not a cdm_model");
    CHECK_RC(cdm_model_attribute_index((cdm_model *)mig, "Note", "title", &index), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_migration, not a cdm_model");
    CHECK_RC(cdm_model_attribute_count((cdm_model *)store, "Note", &n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_store, not a cdm_model");
    CHECK_RC(cdm_model_entity_at((cdm_model *)note, 0, &name), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_object, not a cdm_model");
    cdm_store *never = NULL;
    CHECK_RC(cdm_store_create((cdm_model *)mp, path_in_dir("never.sqlite"), &never), CDM_MISUSE);
    CHECK_HAS(cdm_store_errmsg(never), "is a cdm_mapping, not a cdm_model");
    cdm_store_close(never);
    CHECK(!exists(path_in_dir("never.sqlite")));
    CHECK(cdm_model_errcode((cdm_model *)mp) == CDM_MISUSE);
    CHECK(cdm_model_error((cdm_model *)mp) == NULL);
    CHECK_HAS(cdm_model_errmsg((cdm_model *)mp), "not a live cdm_model");
    /* As a mapping. */
    CHECK_RC(cdm_mapping_entity_mapping_count((cdm_mapping *)m, &n), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the mapping handle is a cdm_model, not a cdm_mapping");
    CHECK_RC(cdm_mapping_validate((cdm_mapping *)mig, m, dst), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_migration, not a cdm_mapping");
    CHECK_RC(cdm_mapping_validate(mp, (cdm_model *)mp, dst), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the source model handle is a cdm_mapping, not a cdm_model");
    cdm_mapping *not_mappings[1] = {(cdm_mapping *)m};
    cdm_migration *other = NULL;
    CHECK_RC(cdm_migration_new(m, dst, not_mappings, 1, &other), CDM_MISUSE);
    CHECK_HAS(cdm_migration_errmsg(other), "is a cdm_model, not a cdm_mapping");
    cdm_migration_free(other);
    CHECK_RC(cdm_migration_new((cdm_model *)mig, dst, &mp, 1, &other), CDM_MISUSE);
    CHECK_HAS(cdm_migration_errmsg(other), "the source model handle is a cdm_migration, not a cdm_model");
    cdm_migration_free(other);
    /* As a migration. */
    CHECK_RC(cdm_migration_run((cdm_migration *)m, "a", "b"), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the migration handle is a cdm_model, not a cdm_migration");
    CHECK_RC(cdm_migration_report_json((cdm_migration *)store, &json), CDM_MISUSE);
    CHECK_RC(cdm_migration_set_progress_interval((cdm_migration *)mp, 3), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_mapping, not a cdm_migration");
    CHECK_RC(cdm_migration_free((cdm_migration *)mp), CDM_MISUSE);
    CHECK_RC(cdm_mapping_entity_mapping_count(mp, &n), CDM_OK); /* not freed */
    CHECK_RC(cdm_migration_set_user_info((cdm_migration *)note, "k", NULL, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_object, not a cdm_migration");
    /* As a store, and a long-lived handle as an object. */
    CHECK_RC(cdm_store_save((cdm_store *)mig), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the store handle is a cdm_migration, not a cdm_store");
    CHECK_RC(cdm_store_insert((cdm_store *)m, "Note", &note), CDM_MISUSE);
    CHECK_RC(cdm_object_set_text((cdm_object *)store, "title", "x", CDM_NUL_TERMINATED), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_store, not a cdm_object");
    CHECK_RC(cdm_object_set_object(note, "folder", (cdm_object *)mp), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_mapping, not a cdm_object");
    /* Freeing with the wrong function frees nothing. */
    cdm_model_free((cdm_model *)mp);
    cdm_mapping_free((cdm_mapping *)m);
    cdm_store_close((cdm_store *)mig);
    CHECK_HAS(cdm_last_errmsg(), "is a cdm_migration, not a cdm_store");
    CHECK_RC(cdm_model_entity_count(m, &n), CDM_OK);
    CHECK_RC(cdm_mapping_entity_mapping_count(mp, &n), CDM_OK);
    CHECK_RC(cdm_migration_set_progress_interval(mig, 3), CDM_OK);
    /* Everything still works with the right kinds. */
    CHECK_RC(cdm_object_set_text(note, "title", "x", CDM_NUL_TERMINATED), CDM_OK);
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);
    cdm_migration_free(mig);
    cdm_mapping_free(mp);
    cdm_model_free(m);
    cdm_model_free(dst);
}

/* ------------------------------------------------------------------------------------------ */
/* Inferred mapping models, models and mappings as JSON, and the source version check. */

/* SOURCE_MODEL with a changed version hash (a versionHashModifier) and the same tables. */
static char *with_hash_modifier(void) {
    static char text[4096];
    const char *at = strstr(SOURCE_MODEL, "{\"name\": \"Note\"");
    if (!at) return NULL;
    size_t head = (size_t)(at - SOURCE_MODEL);
    snprintf(text, sizeof text, "%.*s{\"name\": \"Note\", \"versionHashModifier\": \"2\"%s", (int)head, SOURCE_MODEL,
             at + strlen("{\"name\": \"Note\""));
    return text;
}

static void test_infer_and_json(const char *source_path) {
    cdm_model *v1 = NULL, *v1b = NULL, *strict = NULL;
    CHECK_RC(cdm_model_from_json(SOURCE_MODEL, &v1), CDM_OK);
    CHECK_RC(cdm_model_from_json(with_hash_modifier(), &v1b), CDM_OK);

    /* A model's JSON reads back as the same model, version hashes included. */
    char *model_json = NULL;
    CHECK_RC(cdm_model_json(v1, &model_json), CDM_OK);
    CHECK_HAS(model_json, "\"versionHash\"");
    CHECK_HAS(model_json, "\"Folder\"");
    cdm_model *again = NULL;
    CHECK_RC(cdm_model_from_json(model_json, &again), CDM_OK);
    size_t n = 0;
    CHECK_RC(cdm_model_entity_count(again, &n), CDM_OK);
    CHECK(n == 2);
    cdm_model_free(again);
    cdm_free(model_json);
    CHECK_RC(cdm_model_json(NULL, &model_json), CDM_MISUSE);
    CHECK_RC(cdm_model_json(v1, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "json");

    /* The inferred mapping between two versions whose entities are the same. */
    cdm_mapping *inferred = NULL;
    CHECK_RC(cdm_mapping_infer(v1b, v1b, &inferred), CDM_OK);
    CHECK_RC(cdm_mapping_entity_mapping_count(inferred, &n), CDM_OK);
    CHECK(n == 2);
    const char *name = NULL;
    CHECK_RC(cdm_mapping_entity_mapping_at(inferred, 0, &name), CDM_OK);
    CHECK_HAS(name, "IEM_");
    char *mapping_json = NULL;
    CHECK_RC(cdm_mapping_json(inferred, &mapping_json), CDM_OK);
    CHECK_HAS(mapping_json, "\"entityMappings\"");
    CHECK_HAS(mapping_json, "IEM_Copy_Note");
    cdm_mapping *read_back = NULL;
    CHECK_RC(cdm_mapping_from_json(mapping_json, &read_back), CDM_OK);
    CHECK_RC(cdm_mapping_validate(read_back, v1b, v1b), CDM_OK);
    cdm_free(mapping_json);
    CHECK_RC(cdm_mapping_json(NULL, &mapping_json), CDM_MISUSE);
    CHECK_RC(cdm_mapping_json(inferred, NULL), CDM_MISUSE);

    /* What cannot be inferred: a new required attribute without a default value. */
    CHECK_RC(cdm_model_from_json(
        "{\"name\": \"Strict\", \"entities\": [{\"name\": \"Folder\", \"attributes\": ["
        " {\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"rank\", \"type\": \"integer32\", \"optional\": false}]}]}",
        &strict), CDM_OK);
    cdm_mapping *refused = NULL;
    CHECK_RC(cdm_mapping_infer(v1, strict, &refused), CDM_INFERRED_MAPPING_MODEL);
    CHECK(refused != NULL);
    CHECK(cdm_mapping_errcode(refused) == CDM_INFERRED_MAPPING_MODEL);
    CHECK_HAS(cdm_mapping_errmsg(refused), "rank");
    CHECK(cdm_error_count(cdm_mapping_error(refused)) >= 1);
    CHECK_RC(cdm_mapping_json(refused, &mapping_json), CDM_MISUSE);
    cdm_mapping_free(refused);
    cdm_mapping *none = (cdm_mapping *)1;
    CHECK_RC(cdm_mapping_infer(NULL, v1, &none), CDM_MISUSE);
    cdm_mapping_free(none);
    CHECK_RC(cdm_mapping_infer(v1, v1, NULL), CDM_MISUSE);
    CHECK_RC(cdm_mapping_infer(v1, (const cdm_model *)inferred, &none), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "cdm_mapping");
    cdm_mapping_free(none);

    /* The store was written with v1: a model with another hash does not match it, unless the
    ** check is turned off. */
    cdm_migration *mig = NULL;
    CHECK_RC(cdm_migration_new(v1b, v1b, &read_back, 1, &mig), CDM_OK);
    CHECK_RC(cdm_migration_run(mig, source_path, path_in_dir("checked.sqlite")), CDM_MIGRATION_MISSING_SOURCE_MODEL);
    CHECK(!exists(path_in_dir("checked.sqlite")));
    CHECK_RC(cdm_migration_set_source_version_check(mig, 0), CDM_OK);
    CHECK_RC(cdm_migration_run(mig, source_path, path_in_dir("unchecked.sqlite")), CDM_OK);
    CHECK(exists(path_in_dir("unchecked.sqlite")));
    char *report = NULL;
    CHECK_RC(cdm_migration_report_json(mig, &report), CDM_OK);
    CHECK_HAS(report, "\"Note\":6");
    cdm_free(report);
    CHECK_RC(cdm_migration_set_source_version_check(mig, 1), CDM_OK);
    CHECK_RC(cdm_migration_run(mig, source_path, path_in_dir("checked.sqlite")), CDM_MIGRATION_MISSING_SOURCE_MODEL);
    CHECK_RC(cdm_migration_set_source_version_check(NULL, 0), CDM_MISUSE);
    CHECK_RC(cdm_migration_set_source_version_check((cdm_migration *)v1, 0), CDM_MISUSE);
    cdm_migration_free(mig);

    cdm_mapping_free(read_back);
    cdm_mapping_free(inferred);
    cdm_model_free(strict);
    cdm_model_free(v1b);
    cdm_model_free(v1);
}

int main(void) {
    if (!scratch_begin("capi-test")) return 2;
    test_version_and_errors();
    test_models_and_mappings();
    test_xcode_mapping();
    static char source[512];
    snprintf(source, sizeof source, "%s", path_in_dir("v1.sqlite"));
    if (make_source(source)) {
        test_migration(source);
        test_failure_and_cancel(source);
        test_shared_mapping(source);
        test_infer_and_json(source);
    } else {
        failed++;
        fprintf(stderr, "FAIL: could not make the source store\n");
    }
    test_migration_misuse();
    test_null_out_pointers();
    test_wrong_kind_handles();
    return scratch_end("");
}
