/* The order of things from C: an ordered to-many keeps the source's order through Xcode's
** generated expressions with the members' mapping first (checked through sqlite3's own C API),
** and several mapping models for one step are named, in the order they run, in the warnings of
** cdm_model_set_json and cdm_chain_plan. Run from Tests/c. */
#include <sqlite3.h>
#include <sys/stat.h>
#include "scratch.h"

#define LOOKUP(mapping, key) "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"" mapping "\\\", " key ")"

static const char *MODEL_V1 =
    "{\"name\": \"Lists\", \"entities\": ["
    " {\"name\": \"List\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"items\", \"destination\": \"Item\", \"inverse\": \"list\", \"toMany\": true, \"ordered\": true}]},"
    " {\"name\": \"Item\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"list\", \"destination\": \"List\", \"inverse\": \"items\"}]}]}";

static const char *MODEL_V2 =
    "{\"name\": \"Lists\", \"entities\": ["
    " {\"name\": \"List\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}, {\"name\": \"note\", \"type\": \"string\", \"optional\": true}],"
    "  \"relationships\": [{\"name\": \"items\", \"destination\": \"Item\", \"inverse\": \"list\", \"toMany\": true, \"ordered\": true}]},"
    " {\"name\": \"Item\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\"}],"
    "  \"relationships\": [{\"name\": \"list\", \"destination\": \"List\", \"inverse\": \"items\"}]}]}";

/* The members' mapping first, as the order that used to lose the list's order. */
static const char *MAPPING =
    "{\"sourceModel\": \"v1\", \"destinationModel\": \"v2\", \"entityMappings\": ["
    " {\"name\": \"ItemToItem\", \"sourceEntity\": \"Item\", \"destinationEntity\": \"Item\", \"predicate\": \"TRUEPREDICATE\","
    "  \"attributeMappings\": {\"name\": \"$source.name\"}, \"relationshipMappings\": {\"list\": \"" LOOKUP("ListToList", "$source.list") "\"}},"
    " {\"name\": \"ListToList\", \"sourceEntity\": \"List\", \"destinationEntity\": \"List\", \"predicate\": \"TRUEPREDICATE\","
    "  \"attributeMappings\": {\"name\": \"$source.name\"}, \"relationshipMappings\": {\"items\": \"" LOOKUP("ItemToItem", "$source.items") "\"}}]}";

/* A second mapping model for the same step (it sorts before "lists"). */
static const char *EXTRA =
    "{\"sourceModel\": \"v1\", \"destinationModel\": \"v2\", \"entityMappings\": []}";

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* The names of a list's items in the order the store keeps them, comma-separated, into `out`. */
static void items_of(const char *path, const char *list, char *out, size_t size) {
    sqlite3 *db = NULL;
    sqlite3_stmt *statement = NULL;
    out[0] = 0;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(db, "SELECT i.ZNAME FROM ZITEM i JOIN ZLIST l ON l.Z_PK = i.ZLIST WHERE l.ZNAME = ? ORDER BY i.Z_FOK_LIST",
                             -1, &statement, NULL) == SQLITE_OK);
    sqlite3_bind_text(statement, 1, list, -1, SQLITE_STATIC);
    while (sqlite3_step(statement) == SQLITE_ROW) {
        if (out[0]) strncat(out, ",", size - strlen(out) - 1);
        strncat(out, (const char *)sqlite3_column_text(statement, 0), size - strlen(out) - 1);
    }
    sqlite3_finalize(statement);
    sqlite3_close(db);
}

int main(void) {
    if (!scratch_begin("order-test")) return 2;
    cdm_model *v1 = NULL, *v2 = NULL;
    CHECK_RC(cdm_model_from_json(MODEL_V1, &v1), 0);
    CHECK_RC(cdm_model_from_json(MODEL_V2, &v2), 0);

    /* The source: L0's items are I2, I0, I3, I1 (not the order they were made in). */
    const char *source = path_in_dir("lists.sqlite");
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(v1, source, &store), 0);
    cdm_object *list = NULL, *items[4] = {NULL};
    CHECK_RC(cdm_store_insert(store, "List", &list), 0);
    CHECK_RC(cdm_object_set_text(list, "name", "L0", 2), 0);
    for (int i = 0; i < 4; i++) {
        char name[4];
        snprintf(name, sizeof name, "I%d", i);
        CHECK_RC(cdm_store_insert(store, "Item", &items[i]), 0);
        CHECK_RC(cdm_object_set_text(items[i], "name", name, strlen(name)), 0);
    }
    const int order[4] = {2, 0, 3, 1};
    for (int i = 0; i < 4; i++) CHECK_RC(cdm_object_add_object(list, "items", items[order[i]]), 0);
    CHECK_RC(cdm_store_save(store), 0);
    cdm_store_close(store);
    char names[64];
    items_of(source, "L0", names, sizeof names);
    CHECK_STR(names, "I2,I0,I3,I1");

    /* The migration keeps that order. */
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json(MAPPING, &mapping), 0);
    cdm_migration *migration = NULL;
    CHECK_RC(cdm_migration_new(v1, v2, &mapping, 1, &migration), 0);
    const char *destination = path_in_dir("lists-v2.sqlite");
    CHECK_RC(cdm_migration_run(migration, source, destination), 0);
    items_of(destination, "L0", names, sizeof names);
    CHECK_STR(names, "I2,I0,I3,I1");
    cdm_migration_free(migration);

    /* Two mapping models for v1 → v2 and no migration-passes.json: said, in the order they run. */
    char folder[512];
    snprintf(folder, sizeof folder, "%s/set", dir);
    CHECK(mkdir(folder, 0700) == 0);
    char file[600];
    snprintf(file, sizeof file, "%s/v1.json", folder);
    CHECK(write_text(file, MODEL_V1));
    snprintf(file, sizeof file, "%s/v2.json", folder);
    CHECK(write_text(file, MODEL_V2));
    snprintf(file, sizeof file, "%s/lists.mapping.json", folder);
    CHECK(write_text(file, MAPPING));
    snprintf(file, sizeof file, "%s/extra.mapping.json", folder);
    CHECK(write_text(file, EXTRA));
    char *set = NULL;
    CHECK_RC(cdm_model_set_json(folder, &set), 0);
    CHECK_HAS(set, "v1 → v2: 2 mapping models match and no 'migration-passes.json' orders them, so they run as passes in file-name order: 1. 'extra'");
    cdm_free(set);
    char *plan = NULL;
    CHECK_RC(cdm_chain_plan(folder, source, NULL, &plan), 0);
    CHECK_HAS(plan, "\"mappingModels\":[\"extra\",\"lists\"]");
    CHECK_HAS(plan, "file-name order: 1. 'extra'");
    cdm_free(plan);
    /* Ordered by migration-passes.json: nothing to say. */
    snprintf(file, sizeof file, "%s/migration-passes.json", folder);
    CHECK(write_text(file, "{\"steps\": [{\"from\": \"v1\", \"to\": \"v2\", \"passes\": [\"lists\", \"extra\"]}]}"));
    plan = NULL;
    CHECK_RC(cdm_chain_plan(folder, source, NULL, &plan), 0);
    CHECK_HAS(plan, "\"mappingModels\":[\"lists\",\"extra\"]");
    CHECK(plan && !strstr(plan, "file-name order"));
    cdm_free(plan);

    cdm_mapping_free(mapping);
    cdm_model_free(v1);
    cdm_model_free(v2);
    return scratch_end("order_test: ");
}
