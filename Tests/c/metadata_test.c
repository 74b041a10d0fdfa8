/* C tests of store metadata and version detection (cdm_store_metadata_*), of a store's own model
** (cdm_model_from_store, cdm_model_warnings_json), of compiled mapping
** models (.cdm) through cdm_mapping_from_file and cdm_mapping_from_xcode_file, and of the
** attribute type constants. Reads fixtures from ../Fixtures (run from Tests/c); stores are copied
** to a temporary folder first. Prints "N passed, M failed" last. */
#include <cdmigrate.h>
#include "cdmigrate_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "scratch.h"

#define FIXTURES "../Fixtures/"
#define RENAMES FIXTURES "apple-stores/renames/"

static const char *copy_store(const char *name) { return copy_fixture_store(RENAMES, name); }

static void test_store_model(void) {
    /* A store with a model cache gives the cached model: its names keep their case. */
    const char *path = copy_store("Example_v1.1.0.sqlite");
    CHECK(path != NULL);
    if (!path) return;
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_store(path, &model), CDM_OK);
    int index = -1;
    CHECK_RC(cdm_model_attribute_index(model, "BasicEntity", "v1_1_0_name", &index), CDM_OK);
    char *json = NULL;
    CHECK_RC(cdm_model_warnings_json(model, &json), CDM_OK);
    CHECK_STR(json, "[]");
    cdm_free(json);
    /* The cached model opens the store it came from. */
    cdm_store_metadata *metadata = NULL;
    CHECK_RC(cdm_store_metadata_read(path, &metadata), CDM_OK);
    int compatible = -1;
    size_t differences = 99;
    CHECK_RC(cdm_store_metadata_check_model(metadata, model, &compatible, &differences), CDM_OK);
    CHECK(compatible == 1 && differences == 0);
    cdm_store_metadata_free(metadata);
    cdm_model_free(model);

    /* A store without a cache (macOS Notes) gives a model rebuilt from its schema, and says so. */
    path = copy_fixture_store(FIXTURES "apple-stores/macos-notes/", "NotesV7.storedata");
    CHECK(path != NULL);
    if (!path) return;
    model = NULL;
    CHECK_RC(cdm_model_from_store(path, &model), CDM_OK);
    size_t count = 0;
    CHECK_RC(cdm_model_entity_count(model, &count), CDM_OK);
    CHECK(count == 22);
    CHECK_RC(cdm_model_attribute_index(model, "Account", "username", &index), CDM_OK);
    json = NULL;
    CHECK_RC(cdm_model_warnings_json(model, &json), CDM_OK);
    CHECK_HAS(json, "rebuilt from the schema of the store");
    cdm_free(json);
    CHECK_RC(cdm_model_warnings_json(model, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the json pointer is NULL");
    cdm_model_free(model);

    /* Errors: a missing file, a file that is not SQLite, an SQLite file that is not a Core Data store. */
    model = NULL;
    CHECK_RC(cdm_model_from_store(path_in_dir("missing.sqlite"), &model), CDM_IO);
    CHECK_HAS(cdm_model_errmsg(model), "no such file");
    CHECK_RC(cdm_model_errcode(model), CDM_IO);
    CHECK_RC(cdm_model_entity_count(model, &count), CDM_MISUSE);
    CHECK_RC(cdm_model_warnings_json(model, &json), CDM_MISUSE);
    cdm_model_free(model);
    FILE *garbage = fopen(path_in_dir("garbage.sqlite"), "wb");
    CHECK(garbage != NULL);
    if (garbage) {
        for (int i = 0; i < 64; i++) fputs("not a database ", garbage);
        fclose(garbage);
    }
    model = NULL;
    CHECK_RC(cdm_model_from_store(path_in_dir("garbage.sqlite"), &model), CDM_SQLITE);
    CHECK(strlen(cdm_model_errmsg(model)) > 0);
    cdm_model_free(model);
    cdm_store *plain = NULL;
    cdm_model *empty = NULL;
    CHECK_RC(cdm_model_from_json("{\"entities\": [{\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"string\"}]}]}", &empty), CDM_OK);
    CHECK_RC(cdm_store_create(empty, path_in_dir("plain.sqlite"), &plain), CDM_OK);
    CHECK_RC(cdm_store_save(plain), CDM_OK);
    cdm_store_close(plain);
    cdm_model_free(empty);
    model = NULL;
    CHECK_RC(cdm_model_from_store(path_in_dir("plain.sqlite"), &model), CDM_OK);
    cdm_model_free(model);
    CHECK_RC(cdm_model_from_store(NULL, &model), CDM_MISUSE);
    cdm_model_free(model);
    CHECK_RC(cdm_model_from_store(path, NULL), CDM_MISUSE);
}

/* Stores cdmigrate creates keep their model in Z_MODELCACHE, as Core Data's do: the store's own
** model is that model (names in their case, no "rebuilt" warning), for a new store and for the
** destination of a migration. */
static void test_created_and_migrated_stores_cache_their_model(void) {
    cdm_model *v1 = NULL, *v2 = NULL;
    CHECK_RC(cdm_model_from_json("{\"entities\": [{\"name\": \"Item\", \"attributes\": [{\"name\": \"camelName\", \"type\": \"string\"}]}]}", &v1), CDM_OK);
    CHECK_RC(cdm_model_from_json("{\"entities\": [{\"name\": \"Item\", \"attributes\": [{\"name\": \"camelName\", \"type\": \"string\"},"
                                 " {\"name\": \"addedCount\", \"type\": \"integer32\", \"optional\": false, \"default\": 3}]}]}", &v2), CDM_OK);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(v1, path_in_dir("cached-v1.sqlite"), &store), CDM_OK);
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);

    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_infer(v1, v2, &mapping), CDM_OK);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(v1, v2, &mapping, 1, &migration), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, path_in_dir("cached-v1.sqlite"), path_in_dir("cached-v2.sqlite")), CDM_OK);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);

    const char *paths[] = {"cached-v1.sqlite", "cached-v2.sqlite"};
    for (int i = 0; i < 2; i++) {
        cdm_model *own = NULL;
        CHECK_RC(cdm_model_from_store(path_in_dir(paths[i]), &own), CDM_OK);
        int index = -1;
        CHECK_RC(cdm_model_attribute_index(own, "Item", "camelName", &index), CDM_OK);
        CHECK_RC(cdm_model_attribute_index(own, "Item", "addedCount", &index), i == 0 ? CDM_NOTFOUND : CDM_OK);
        char *json = NULL;
        CHECK_RC(cdm_model_warnings_json(own, &json), CDM_OK);
        CHECK_STR(json, "[]");
        cdm_free(json);
        /* The cached model is the store's version. */
        cdm_store_metadata *metadata = NULL;
        CHECK_RC(cdm_store_metadata_read(path_in_dir(paths[i]), &metadata), CDM_OK);
        int compatible = -1;
        size_t differences = 99;
        CHECK_RC(cdm_store_metadata_check_model(metadata, own, &compatible, &differences), CDM_OK);
        CHECK(compatible == 1 && differences == 0);
        cdm_store_metadata_free(metadata);
        cdm_model_free(own);
    }
    cdm_model_free(v1);
    cdm_model_free(v2);
}

static void test_metadata(void) {
    const char *path = copy_store("Example_v1.0.0.sqlite");
    CHECK(path != NULL);
    if (!path) return;
    cdm_store_metadata *metadata = NULL;
    CHECK_RC(cdm_store_metadata_read(path, &metadata), CDM_OK);

    const char *text = NULL;
    CHECK_RC(cdm_store_metadata_uuid(metadata, &text), CDM_OK);
    CHECK(text != NULL && strlen(text) == 36);
    CHECK_RC(cdm_store_metadata_type(metadata, &text), CDM_OK);
    CHECK_STR(text, "SQLite");
    int empty = -1;
    CHECK_RC(cdm_store_metadata_is_empty(metadata, &empty), CDM_OK);
    CHECK(empty == 0);
    size_t count = 0;
    CHECK_RC(cdm_store_metadata_identifier_count(metadata, &count), CDM_OK);
    CHECK(count == 1);
    CHECK_RC(cdm_store_metadata_identifier_at(metadata, 0, &text), CDM_OK);
    CHECK(text != NULL);
    CHECK_RC(cdm_store_metadata_identifier_at(metadata, 5, &text), CDM_NOTFOUND);
    CHECK_HAS(cdm_last_errmsg(), "version identifier index 5 is out of range: the store has 1");
    CHECK_RC(cdm_store_metadata_identifier_at(metadata, 0, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the identifier pointer is NULL");
    CHECK_RC(cdm_store_metadata_uuid(metadata, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the uuid pointer is NULL");
    CHECK_RC(cdm_store_metadata_is_empty(metadata, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the empty pointer is NULL");
    CHECK_RC(cdm_store_metadata_identifier_count(NULL, &count), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the store metadata handle is NULL");

    CHECK_RC(cdm_store_metadata_entity_count(metadata, &count), CDM_OK);
    CHECK(count == 1);
    cdm_store_entity_info entity;
    memset(&entity, 0, sizeof entity);
    CHECK_RC(cdm_store_metadata_entity_at(metadata, 0, &entity), CDM_OK);
    CHECK_STR(entity.name, "BasicEntity");
    CHECK(entity.superentity == NULL);
    CHECK(entity.entity_number == 1);
    CHECK(entity.row_count == 1);
    CHECK(entity.version_hash != NULL && entity.version_hash_length == 32);
    CHECK_RC(cdm_store_metadata_entity_at(metadata, 1, &entity), CDM_NOTFOUND);
    CHECK_HAS(cdm_last_errmsg(), "entity index 1 is out of range: the store names 1 entities");
    CHECK_RC(cdm_store_metadata_entity_at(metadata, 0, NULL), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "the info pointer is NULL");

    /* The model the store was written with, and a later one. */
    cdm_model *v1 = NULL, *v2 = NULL;
    CHECK_RC(cdm_model_from_file(FIXTURES "json-models/renames-v1.0.0.json", &v1), CDM_OK);
    CHECK_RC(cdm_model_from_file(FIXTURES "json-models/renames-v2.0.0.json", &v2), CDM_OK);
    int compatible = -1;
    size_t differences = 99;
    CHECK_RC(cdm_store_metadata_check_model(metadata, v1, &compatible, &differences), CDM_OK);
    CHECK(compatible == 1);
    CHECK(differences == 0);
    CHECK_RC(cdm_store_metadata_check_model(metadata, v2, &compatible, &differences), CDM_OK);
    CHECK(compatible == 0);
    CHECK(differences == 1);
    cdm_version_difference difference;
    memset(&difference, 0, sizeof difference);
    CHECK_RC(cdm_store_metadata_difference_at(metadata, 0, &difference), CDM_OK);
    CHECK_STR(difference.entity, "BasicEntity");
    CHECK(difference.store_hash != NULL && difference.store_hash_length == 32);
    CHECK(difference.model_hash != NULL && difference.model_hash_length == 32);
    CHECK(difference.store_hash && difference.model_hash && memcmp(difference.store_hash, difference.model_hash, 32) != 0);
    CHECK(difference.store_hash && memcmp(difference.store_hash, entity.version_hash, 32) == 0);
    CHECK_RC(cdm_store_metadata_difference_at(metadata, 1, &difference), CDM_NOTFOUND);
    CHECK_HAS(cdm_last_errmsg(), "difference index 1 is out of range: the last check found 1");
    CHECK_RC(cdm_store_metadata_check_model(metadata, NULL, &compatible, &differences), CDM_MISUSE);
    CHECK_RC(cdm_store_metadata_check_model(metadata, v1, NULL, &differences), CDM_MISUSE);
    CHECK_HAS(cdm_store_metadata_errmsg(metadata), "NULL");

    /* The version of a model set the store was written with. */
    const char *version = "unset";
    CHECK_RC(cdm_store_metadata_version_in(metadata, RENAMES "Model.xcdatamodeld", &version), CDM_OK);
    CHECK_STR(version, "v1.0.0");
    CHECK_RC(cdm_store_metadata_version_in(metadata, FIXTURES "xcode/XcodeServer/1_0_0/XcodeServer.xcdatamodeld", &version), CDM_OK);
    CHECK(version == NULL);
    CHECK_RC(cdm_store_metadata_version_in(metadata, "/nonexistent/Model.xcdatamodeld", &version), CDM_IO);

    /* A handle of another kind is refused. */
    CHECK_RC(cdm_store_metadata_entity_count((const cdm_store_metadata *)v1, &count), CDM_MISUSE);
    CHECK_HAS(cdm_last_errmsg(), "cdm_model");
    cdm_model_free(v1);
    cdm_model_free(v2);
    cdm_store_metadata_free(metadata);

    /* A store that is not there: the handle is set and says why. */
    metadata = NULL;
    CHECK_RC(cdm_store_metadata_read("/nonexistent/store.sqlite", &metadata), CDM_IO);
    CHECK(metadata != NULL);
    CHECK(cdm_store_metadata_errcode(metadata) == CDM_IO);
    CHECK_HAS(cdm_store_metadata_errmsg(metadata), "/nonexistent/store.sqlite");
    CHECK_RC(cdm_store_metadata_entity_count(metadata, &count), CDM_MISUSE);
    cdm_store_metadata_free(metadata);
    CHECK_RC(cdm_store_metadata_read(NULL, &metadata), CDM_MISUSE);
    cdm_store_metadata_free(metadata);
    CHECK_RC(cdm_store_metadata_read(path, NULL), CDM_MISUSE);
    cdm_store_metadata_free(NULL);
}

static void test_compiled_mapping(void) {
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_file(FIXTURES "xcode/XcodeServer/2_0_0/MappingModel.cdm_precompiled", &mapping), CDM_OK);
    size_t count = 0;
    CHECK_RC(cdm_mapping_entity_mapping_count(mapping, &count), CDM_OK);
    CHECK(count == 23);
    const char *name = NULL;
    CHECK_RC(cdm_mapping_entity_mapping_at(mapping, 0, &name), CDM_OK);
    CHECK_STR(name, "CommitContributorToManagedCommitContributor");
    cdm_mapping_free(mapping);

    cdm_model *source = NULL, *destination = NULL;
    CHECK_RC(cdm_model_from_file(FIXTURES "xcode/XcodeServer/1_0_0/XcodeServer.xcdatamodeld", &source), CDM_OK);
    CHECK_RC(cdm_model_from_file(FIXTURES "xcode/XcodeServer/1_1_0/XcodeServer.xcdatamodeld", &destination), CDM_OK);
    mapping = NULL;
    CHECK_RC(cdm_mapping_from_xcode_file(FIXTURES "xcode/XcodeServer/1_1_0/MappingModel.cdm_precompiled", source, destination, &mapping), CDM_OK);
    CHECK_RC(cdm_mapping_entity_mapping_count(mapping, &count), CDM_OK);
    CHECK(count == 23);
    cdm_mapping_free(mapping);
    cdm_model_free(source);
    cdm_model_free(destination);
}

static void test_warnings_before_a_run(void) {
    const char *model_json =
        "{\"name\": \"Notes\", \"entities\": [{\"name\": \"Note\", \"attributes\": ["
        "{\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"body\", \"type\": \"string\"}]}]}";
    const char *mapping_json =
        "{\"entityMappings\": [{\"name\": \"NoteToNote\", \"sourceEntity\": \"Note\", \"destinationEntity\": \"Note\","
        " \"predicate\": \"TRUEPREDICATE\", \"attributeMappings\": {\"title\": \"$source.title\"}}]}";
    cdm_model *model = NULL;
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_model_from_json(model_json, &model), CDM_OK);
    CHECK_RC(cdm_mapping_from_json(mapping_json, &mapping), CDM_OK);
    CHECK_RC(cdm_migration_new(model, model, &mapping, 1, &migration), CDM_OK);
    char *json = NULL;
    CHECK_RC(cdm_migration_warnings_json(migration, &json), CDM_OK);
    CHECK_HAS(json, "destination attribute 'body' is filled by no mapping while the source entity 'Note' has a property of that name");
    cdm_free(json);
    CHECK_RC(cdm_migration_warnings_json(migration, NULL), CDM_MISUSE);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(model);
}

static void test_missing_source_model_names_the_version(void) {
    const char *path = copy_store("Example_v1.0.0.sqlite");
    if (!path) { failed++; return; }
    char store[512], out[512];
    snprintf(store, sizeof store, "%s", path);
    snprintf(out, sizeof out, "%s/out.sqlite", dir);
    cdm_model *v110 = NULL, *v120 = NULL;
    cdm_mapping *mapping = NULL;
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_model_from_file(FIXTURES "json-models/renames-v1.1.0.json", &v110), CDM_OK);
    CHECK_RC(cdm_model_from_file(FIXTURES "json-models/renames-v1.2.0.json", &v120), CDM_OK);
    CHECK_RC(cdm_mapping_from_json("{\"entityMappings\": []}", &mapping), CDM_OK);
    CHECK_RC(cdm_migration_new(v110, v120, &mapping, 1, &migration), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, store, out), CDM_MIGRATION_MISSING_SOURCE_MODEL);
    CHECK_HAS(cdm_migration_errmsg(migration), "BasicEntity: store hash ");
    CHECK_RC(cdm_migration_set_model_versions(migration, RENAMES "Model.xcdatamodeld"), CDM_OK);
    CHECK_RC(cdm_migration_run(migration, store, out), CDM_MIGRATION_MISSING_SOURCE_MODEL);
    CHECK_HAS(cdm_migration_errmsg(migration), "The store matches version 'v1.0.0' of");
    CHECK_RC(cdm_migration_set_model_versions(migration, "/nonexistent/Model.xcdatamodeld"), CDM_IO);
    CHECK_RC(cdm_migration_set_model_versions(migration, NULL), CDM_OK);
    CHECK_RC(cdm_migration_set_model_versions(NULL, NULL), CDM_MISUSE);
    cdm_migration_free(migration);
    cdm_mapping_free(mapping);
    cdm_model_free(v110);
    cdm_model_free(v120);
}

/* An Xcode model whose entity has an empty <uniquenessConstraint/> (what Xcode leaves for a
** constraint row added and never filled) loads: the constraint is left out, with a warning. */
static void test_xcode_model_with_an_empty_uniqueness_constraint(void) {
    char folder[512];
    snprintf(folder, sizeof folder, "%s", path_in_dir("Empty.xcdatamodel"));
    CHECK(mkdir(folder, 0700) == 0);
    char contents[600];
    snprintf(contents, sizeof contents, "%s/contents", folder);
    FILE *file = fopen(contents, "w");
    CHECK(file != NULL);
    if (!file) return;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
          "<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\">\n"
          "    <entity name=\"User\" representedClassName=\"User\" syncable=\"YES\">\n"
          "        <attribute name=\"name\" attributeType=\"String\" defaultValueString=\"\"/>\n"
          "        <uniquenessConstraints>\n"
          "            <uniquenessConstraint/>\n"
          "        </uniquenessConstraints>\n"
          "    </entity>\n"
          "</model>\n", file);
    fclose(file);
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_file(folder, &model), CDM_OK);
    char *json = NULL;
    CHECK_RC(cdm_model_warnings_json(model, &json), CDM_OK);
    CHECK_HAS(json, "empty uniqueness constraint of entity 'User'");
    CHECK_HAS(json, "line 6");
    cdm_free(json);
    json = NULL;
    CHECK_RC(cdm_model_json(model, &json), CDM_OK);
    CHECK(json != NULL && strstr(json, "uniquenessConstraints") == NULL);
    cdm_free(json);
    cdm_model_free(model);
}

/* Each renames store's NSStoreModelVersionHashes, written by Apple's Core Data, equal the entity
** version hashes cdmigrate computes for the Xcode model version the store was written with. */
static void test_entity_version_hash_is_apples(void) {
    const char *versions[] = {"v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"};
    const uint8_t *previous = NULL;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        char store[64], model_path[160];
        snprintf(store, sizeof store, "Example_%s.sqlite", versions[i]);
        snprintf(model_path, sizeof model_path, RENAMES "Model.xcdatamodeld/%s.xcdatamodel", versions[i]);
        const char *path = copy_store(store);
        CHECK(path != NULL);
        if (!path) return;
        cdm_store_metadata *metadata = NULL;
        cdm_model *model = NULL;
        CHECK_RC(cdm_store_metadata_read(path, &metadata), CDM_OK);
        CHECK_RC(cdm_model_from_file(model_path, &model), CDM_OK);
        cdm_store_entity_info entity;
        memset(&entity, 0, sizeof entity);
        CHECK_RC(cdm_store_metadata_entity_at(metadata, 0, &entity), CDM_OK);
        const uint8_t *hash = NULL;
        size_t length = 0;
        CHECK_RC(cdm_model_entity_version_hash(model, "BasicEntity", &hash, &length), CDM_OK);
        CHECK(length == 32 && entity.version_hash_length == 32);
        CHECK(hash != NULL && entity.version_hash != NULL && memcmp(hash, entity.version_hash, 32) == 0);
        /* Each version renames the attribute, so each hash differs from the one before. */
        CHECK(previous == NULL || memcmp(previous, entity.version_hash, 32) != 0);
        CHECK_RC(cdm_model_entity_version_hash(model, "NoSuchEntity", &hash, &length), CDM_NOTFOUND);
        CHECK_HAS(cdm_last_errmsg(), "the model has no entity named 'NoSuchEntity'");
        CHECK_RC(cdm_model_entity_version_hash(model, "BasicEntity", NULL, &length), CDM_MISUSE);
        CHECK_RC(cdm_model_entity_version_hash(model, "BasicEntity", &hash, NULL), CDM_MISUSE);
        CHECK_RC(cdm_model_entity_version_hash(NULL, "BasicEntity", &hash, &length), CDM_MISUSE);
        static uint8_t kept[32];
        memcpy(kept, entity.version_hash, 32);
        previous = kept;
        cdm_model_free(model);
        cdm_store_metadata_free(metadata);
    }
}

int main(void) {
    if (!scratch_begin("metadata-test")) return 2;
    CHECK(cdm_internal_struct_size("cdm_store_entity_info") == sizeof(cdm_store_entity_info));
    CHECK(cdm_internal_struct_size("cdm_version_difference") == sizeof(cdm_version_difference));
    /* Core Data's NSAttributeType values, the three transient-only ones included. */
    CHECK(CDM_ATTR_UNDEFINED == 0 && CDM_ATTR_OBJECT_ID == 2000 && CDM_ATTR_COMPOSITE == 2100);
    CHECK(CDM_ATTR_TRANSFORMABLE == 1800 && CDM_ATTR_INTEGER16 == 100);
    test_metadata();
    test_store_model();
    test_created_and_migrated_stores_cache_their_model();
    test_compiled_mapping();
    test_warnings_before_a_run();
    test_missing_source_model_names_the_version();
    test_xcode_model_with_an_empty_uniqueness_constraint();
    test_entity_version_hash_is_apples();
    return scratch_end("");
}
