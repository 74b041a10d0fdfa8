/* The loss report through the C API: a chain whose v2 → v3 mapping model is missing runs an
** inferred step that drops Post.color; the report JSON's "losses" says so, and with
** cdm_migration_set_fail_on_unintended_loss the run fails before the hand-over, nothing written.
** A mapping that declares the drop (userInfo cdmigrate.intendedLosses) passes a strict run. */
#include "scratch.h"
#include <sys/stat.h>
#include <unistd.h>

#define POSTS 1001
#define MODEL(version, post_attributes) \
    "{\"name\": \"Blog\", \"versionIdentifier\": \"" version "\", \"entities\": [" \
    "{\"name\": \"Folder\", \"attributes\": [{\"name\": \"name\", \"type\": \"string\", \"optional\": true}]," \
    " \"relationships\": [{\"name\": \"posts\", \"destination\": \"Post\", \"inverse\": \"folder\", \"toMany\": true}]}," \
    "{\"name\": \"Post\", \"attributes\": [" post_attributes "]," \
    " \"relationships\": [{\"name\": \"folder\", \"destination\": \"Folder\", \"inverse\": \"posts\", \"toMany\": false, \"optional\": true}]}]}"
#define TITLE "{\"name\": \"title\", \"type\": \"string\", \"optional\": true}"
#define COLOR "{\"name\": \"color\", \"type\": \"string\", \"optional\": true}"
#define HUE "{\"name\": \"hue\", \"type\": \"string\", \"optional\": true}"
#define SUBTITLE "{\"name\": \"subtitle\", \"type\": \"string\", \"optional\": true}"
#define FOLDER_TO_FOLDER \
    "{\"name\": \"FolderToFolder\", \"sourceEntity\": \"Folder\", \"destinationEntity\": \"Folder\", \"predicate\": \"TRUEPREDICATE\"," \
    " \"attributeMappings\": {\"name\": \"$source.name\"}}"
#define POST_TO_POST(attributes, extra) \
    "{\"name\": \"PostToPost\", \"sourceEntity\": \"Post\", \"destinationEntity\": \"Post\", \"predicate\": \"TRUEPREDICATE\"," \
    " \"attributeMappings\": {" attributes "}, \"relationshipMappings\": {\"folder\": \"FUNCTION($manager, " \
    "\\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"FolderToFolder\\\", $source.folder)\"}" extra "}"

static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

static void make_store(const char *model_path, const char *path) {
    cdm_model *model = NULL;
    CHECK_RC(cdm_model_from_file(model_path, &model), CDM_OK);
    cdm_store *store = NULL;
    CHECK_RC(cdm_store_create(model, path, &store), CDM_OK);
    cdm_object *folder = NULL;
    CHECK_RC(cdm_store_insert(store, "Folder", &folder), CDM_OK);
    CHECK_RC(cdm_object_set_text(folder, "name", "Inbox", CDM_NUL_TERMINATED), CDM_OK);
    for (int i = 0; i < POSTS; i++) {
        cdm_object *post = NULL;
        char title[32];
        snprintf(title, sizeof title, "Post %d", i);
        if (cdm_store_insert(store, "Post", &post) != CDM_OK) { CHECK(0); break; }
        cdm_object_set_text(post, "title", title, CDM_NUL_TERMINATED);
        cdm_object_set_text(post, "color", i % 2 ? "red" : "blue", CDM_NUL_TERMINATED);
        cdm_object_set_object(post, "folder", folder);
    }
    CHECK_RC(cdm_store_save(store), CDM_OK);
    cdm_store_close(store);
    cdm_model_free(model);
}

int main(void) {
    if (!scratch_begin("loss-report-test")) return 2;
    char models[512];
    snprintf(models, sizeof models, "%s/models", dir);
    CHECK(mkdir(models, 0700) == 0);
    char path[600];
    snprintf(path, sizeof path, "%s/v1.json", models);
    CHECK(write_file(path, MODEL("1", TITLE ", " COLOR)));
    snprintf(path, sizeof path, "%s/v2.json", models);
    CHECK(write_file(path, MODEL("2", TITLE ", " COLOR ", " SUBTITLE)));
    snprintf(path, sizeof path, "%s/v3.json", models);
    CHECK(write_file(path, MODEL("3", TITLE ", " HUE ", " SUBTITLE)));
    snprintf(path, sizeof path, "%s/v1-to-v2.mapping.json", models);
    CHECK(write_file(path, "{\"sourceModel\": \"v1\", \"destinationModel\": \"v2\", \"entityMappings\": [" FOLDER_TO_FOLDER ", "
                           POST_TO_POST("\"title\": \"$source.title\", \"color\": \"$source.color\"", "") "]}"));
    snprintf(path, sizeof path, "%s/v1.json", models);
    char *store = path_in_dir("blog.sqlite");
    make_store(path, store);

    /* A chain: the inferred v2 → v3 step drops Post.color, and the report says so. */
    cdm_migration *chain = NULL;
    CHECK_RC(cdm_migration_new_chain(models, NULL, &chain), CDM_OK);
    CHECK_RC(cdm_migration_run(chain, store, path_in_dir("out.sqlite")), CDM_OK);
    char *report = NULL;
    CHECK_RC(cdm_migration_report_json(chain, &report), CDM_OK);
    CHECK_HAS(report, "\"losses\":[]");   /* the written v1 → v2 step loses nothing */
    CHECK_HAS(report, "\"losses\":[{\"kind\":\"attribute\",\"entity\":\"Post\",\"property\":\"color\",\"entityMapping\":\"IEM_Transform_Post\",\"pass\":0,\"count\":1001,\"intended\":false}]");
    cdm_free(report);

    /* Strict: the run fails before the hand-over; nothing is written at the destination. */
    CHECK_RC(cdm_migration_set_fail_on_unintended_loss(chain, 1), CDM_OK);
    CHECK_RC(cdm_migration_run(chain, store, path_in_dir("strict.sqlite")), CDM_MIGRATION);
    CHECK_HAS(cdm_migration_errmsg(chain), "v2 → v3 (inferred): ");
    CHECK_HAS(cdm_migration_errmsg(chain), "Post.color: 1001 values that no property mapping reads");
    CHECK(access(path_in_dir("strict.sqlite"), F_OK) != 0);
    cdm_migration_free(chain);

    /* One step whose mapping declares the drop: a strict run passes and marks it intended. */
    cdm_model *v1 = NULL, *v2 = NULL;
    snprintf(path, sizeof path, "%s/v1.json", models);
    CHECK_RC(cdm_model_from_file(path, &v1), CDM_OK);
    snprintf(path, sizeof path, "%s/v2.json", models);
    CHECK_RC(cdm_model_from_file(path, &v2), CDM_OK);
    cdm_mapping *mapping = NULL;
    CHECK_RC(cdm_mapping_from_json("{\"entityMappings\": [" FOLDER_TO_FOLDER ", "
                                   POST_TO_POST("\"title\": \"$source.title\"", ", \"userInfo\": {\"cdmigrate.intendedLosses\": \"color\"}") "]}", &mapping), CDM_OK);
    cdm_migration *step = NULL;
    CHECK_RC(cdm_migration_new(v1, v2, &mapping, 1, &step), CDM_OK);
    CHECK_RC(cdm_migration_set_fail_on_unintended_loss(step, 1), CDM_OK);
    CHECK_RC(cdm_migration_run(step, store, path_in_dir("declared.sqlite")), CDM_OK);
    CHECK_RC(cdm_migration_report_json(step, &report), CDM_OK);
    CHECK_HAS(report, "\"losses\":[{\"kind\":\"attribute\",\"entity\":\"Post\",\"property\":\"color\",\"entityMapping\":\"PostToPost\",\"pass\":0,\"count\":1001,\"intended\":true}]");
    cdm_free(report);
    CHECK_RC(cdm_migration_set_fail_on_unintended_loss(NULL, 1), CDM_MISUSE);
    cdm_migration_free(step);
    cdm_mapping_free(mapping);
    cdm_model_free(v1);
    cdm_model_free(v2);
    return scratch_end("loss_report_test: ");
}
