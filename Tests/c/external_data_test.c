/* C tests of external binary data (attributes with allowsExternalBinaryDataStorage): a C policy
** reads the values' real bytes, inline or from their files; the migrated store holds Core Data's
** bytes (0x01 + value, or 0x02 + UUID + NUL with the file in .<name>_SUPPORT/_EXTERNAL_DATA); the
** report counts the missing file. Reads ../Fixtures/external-data (run from Tests/c); the store
** and its files are copied to a temporary folder first. Prints "N passed, M failed" last. */
#include <cdmigrate.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"

#define FIXTURE "../Fixtures/external-data/"
#define FILES ".photos_SUPPORT/_EXTERNAL_DATA/"
#define IMAGE_UUID "6F1C2A9E-3B7D-4E21-9A0C-5D8E7F6A1B2C"
static const char *uuids[] = {IMAGE_UUID, "A8E3C1D5-92B4-4F67-8E1A-3C5D7B9F0E24", "3E5A7C9B-1D2F-4A6B-8C0E-9F1A2B3C4D5E"};

/* The sizes of the image values the policy saw, by row name. */
static size_t seen_inline = 0, seen_external = 0, seen_missing = 99;
static int missing_was_null = 0;

static int sizes_create(cdm_context *ctx, cdm_object *source, void *user) {
    (void)user;
    const char *name = NULL;
    size_t length = 0;
    int is_null = 0;
    if (cdm_object_get_text(source, "name", &name, &length, &is_null) != CDM_OK) return CDM_ENTITY_MIGRATION_POLICY;
    const void *bytes = NULL;
    size_t size = 0;
    int image_null = 0;
    if (cdm_object_get_blob(source, "image", &bytes, &size, &image_null) != CDM_OK) return CDM_ENTITY_MIGRATION_POLICY;
    if (strcmp(name, "inline") == 0) seen_inline = size;
    if (strcmp(name, "external") == 0) seen_external = size;
    if (strcmp(name, "missing") == 0) { seen_missing = size; missing_was_null = image_null; }
    return cdm_context_default_create_destination_instances(ctx, source, NULL);
}

static const char *MAPPING =
    "{\"entityMappings\": [{\"name\": \"PhotoToPhoto\", \"sourceEntity\": \"Photo\", \"destinationEntity\": \"Photo\","
    " \"predicate\": \"TRUEPREDICATE\", \"policy\": \"Sizes\", \"attributeMappings\": [{\"name\": \"name\", \"valueExpression\": \"$source.name\"},"
    " {\"name\": \"image\", \"valueExpression\": \"$source.image\"}, {\"name\": \"info\", \"valueExpression\": \"$source.info\"}]}]}";

/* Copies the fixture store and its external data files into `folder` (made here). */
static int copy_fixture(const char *folder) {
    char from[600], to[600];
    mkdir(folder, 0755);
    snprintf(to, sizeof to, "%s/.photos_SUPPORT", folder);
    mkdir(to, 0755);
    snprintf(to, sizeof to, "%s/" FILES, folder);
    mkdir(to, 0755);
    snprintf(to, sizeof to, "%s/photos.sqlite", folder);
    if (copy_file(FIXTURE "photos.sqlite", to) != 1) return 0;
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, FIXTURE FILES "%s", uuids[i]);
        snprintf(to, sizeof to, "%s/" FILES "%s", folder, uuids[i]);
        if (copy_file(from, to) != 1) return 0;
    }
    return 1;
}

/* The raw ZIMAGE column of the row named `name`, copied into `out` (up to `capacity` bytes); its length, -1 for NULL. */
static long raw_image(const char *store, const char *name, unsigned char *out, size_t capacity) {
    sqlite3 *db = NULL;
    long length = -2;
    if (sqlite3_open_v2(store, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) { sqlite3_close(db); return -2; }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT ZIMAGE FROM ZPHOTO WHERE ZNAME = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            if (sqlite3_column_type(st, 0) == SQLITE_NULL) length = -1;
            else {
                length = sqlite3_column_bytes(st, 0);
                memcpy(out, sqlite3_column_blob(st, 0), (size_t)length < capacity ? (size_t)length : capacity);
            }
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return length;
}

static void test_migration_reads_and_writes_external_data(int in_place) {
    char folder[512], source[600], destination[600], file[700];
    snprintf(folder, sizeof folder, "%s/%s", dir, in_place ? "in-place" : "new");
    CHECK(copy_fixture(folder));
    snprintf(source, sizeof source, "%s/photos.sqlite", folder);
    snprintf(destination, sizeof destination, "%s/photos-v2.sqlite", folder);
    cdm_model *v1 = NULL, *v2 = NULL;
    CHECK_RC(cdm_model_from_file(FIXTURE "photos-v1.json", &v1), CDM_OK);
    CHECK_RC(cdm_model_from_file(FIXTURE "photos-v2.json", &v2), CDM_OK);
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(MAPPING, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(v1, v2, &mapping, 1, &migration), CDM_OK);
    cdm_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.create_destination_instances = sizes_create;
    CHECK_RC(cdm_migration_register_policy(migration, "Sizes", &policy, sizeof policy, NULL, NULL), CDM_OK);
    seen_inline = seen_external = 0;
    seen_missing = 99;
    missing_was_null = 0;
    CHECK_RC(in_place ? cdm_migration_run_in_place(migration, source) : cdm_migration_run(migration, source, destination), CDM_OK);
    CHECK(seen_inline == 1000);
    CHECK(seen_external == 200000);
    CHECK(seen_missing == 0 && missing_was_null == 1);

    char *json = NULL;
    CHECK_RC(cdm_migration_report_json(migration, &json), CDM_OK);
    CHECK(json && strstr(json, "\"missingExternalDataFiles\":1") != NULL);
    if (json && !strstr(json, "\"missingExternalDataFiles\":1")) fprintf(stderr, "report: %s\n", json);
    cdm_free(json);

    const char *result = in_place ? source : destination;
    unsigned char raw[64];
    long length = raw_image(result, "external", raw, sizeof raw);
    CHECK(length == 38 && raw[0] == 2 && raw[37] == 0 && memcmp(raw + 1, IMAGE_UUID, 36) == 0);
    length = raw_image(result, "inline", raw, sizeof raw);
    CHECK(length == 1001 && raw[0] == 1);
    CHECK(raw_image(result, "missing", raw, sizeof raw) == -1);
    snprintf(file, sizeof file, "%s/.%s_SUPPORT/_EXTERNAL_DATA/" IMAGE_UUID, folder, in_place ? "photos" : "photos-v2");
    struct stat info;
    CHECK(stat(file, &info) == 0 && info.st_size == 200000);
    /* The source's file is still there, whatever happened. */
    snprintf(file, sizeof file, "%s/" FILES IMAGE_UUID, folder);
    CHECK(stat(file, &info) == 0 && info.st_size == 200000);

    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(v1);
    cdm_model_free(v2);
}

int main(void) {
    if (!scratch_begin("external-data")) return 1;
    test_migration_reads_and_writes_external_data(0);
    test_migration_reads_and_writes_external_data(1);
    return scratch_end("external_data_test: ");
}
