/* Progressive migration from C: cdm_chain_plan, cdm_migrate_chain and cdm_model_set_json over Apple's own stores
** (Tests/Fixtures/apple-stores/renames: one store per version, every version renaming the
** attribute, so every step is Core Data's inferred mapping), run from Tests/c. */
#include "scratch.h"
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#define RENAMES "../Fixtures/apple-stores/renames"

/* Copies a fixture store with its -wal and -shm into dir; returns its path in `path`. */
static void copy_store(const char *dir, const char *version, char *path, size_t size) {
    const char *suffixes[] = {"", "-wal", "-shm"};
    snprintf(path, size, "%s/Example_v%s.sqlite", dir, version);
    for (int i = 0; i < 3; i++) {
        char from[512], to[512];
        snprintf(from, sizeof from, RENAMES "/Example_v%s.sqlite%s", version, suffixes[i]);
        snprintf(to, sizeof to, "%s%s", path, suffixes[i]);
        CHECK(copy_file(from, to) >= 0);
    }
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

#define ITEM(type) "{\"name\": \"M\", \"entities\": [{\"name\": \"Item\", \"attributes\": [{\"name\": \"n\", \"type\": \"" type "\"}]}]}"

/* v2 turns Item.n into a date, which cannot be inferred, and v3 turns it back: the plan takes
** Core Data's direct step v1 → v3 and says so. */
static void direct_step_is_taken(const char *dir) {
    char folder[512], file[600], store[600];
    snprintf(folder, sizeof folder, "%s/direct", dir);
    CHECK(mkdir(folder, 0700) == 0);
    const char *versions[][2] = {{"v1", ITEM("string")}, {"v2", ITEM("date")}, {"v3", ITEM("string")}};
    for (int i = 0; i < 3; i++) {
        snprintf(file, sizeof file, "%s/%s.json", folder, versions[i][0]);
        CHECK(write_text(file, versions[i][1]));
    }
    cdm_model *v1 = NULL;
    CHECK_RC(cdm_model_from_json(versions[0][1], &v1), CDM_OK);
    snprintf(store, sizeof store, "%s/direct-v1.sqlite", dir);
    cdm_store *created = NULL;
    CHECK_RC(cdm_store_create(v1, store, &created), CDM_OK);
    CHECK_RC(cdm_store_save(created), CDM_OK);
    cdm_store_close(created);
    char *plan = NULL;
    CHECK_RC(cdm_chain_plan(folder, store, NULL, &plan), 0);
    CHECK_HAS(plan, "{\"from\":\"v1\",\"to\":\"v3\",\"inferred\":true");
    CHECK_HAS(plan, "v1 → v2 cannot be inferred");
    CHECK_HAS(plan, "\"direct\":true}");
    CHECK_HAS(plan, "\"directStep\":null");
    cdm_free(plan);
    cdm_model_free(v1);
}

static int entries(const char *dir) {
    DIR *d = opendir(dir);
    int count = 0;
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d))) if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) count++;
    closedir(d);
    return count;
}

int main(void) {
    if (!scratch_begin("chain-test")) return 2;
    const char *models = RENAMES "/Model.xcdatamodeld";
    char store[512], destination[512];
    copy_store(dir, "1.0.0", store, sizeof store);
    snprintf(destination, sizeof destination, "%s/current.sqlite", dir);
    int before = entries(dir);

    /* The source's UUID, which every step keeps (Core Data's migrations keep it). */
    char source_uuid[64] = "";
    cdm_store_metadata *metadata = NULL;
    CHECK_RC(cdm_store_metadata_read(store, &metadata), CDM_OK);
    const char *uuid = NULL;
    CHECK_RC(cdm_store_metadata_uuid(metadata, &uuid), CDM_OK);
    CHECK(uuid != NULL && strlen(uuid) == 36);
    if (uuid) snprintf(source_uuid, sizeof source_uuid, "%s", uuid);
    cdm_store_metadata_free(metadata);

    /* The plan: four inferred steps from v1.0.0 to the current v2.0.0. */
    char *plan = NULL;
    CHECK_RC(cdm_chain_plan(models, store, NULL, &plan), 0);
    CHECK_HAS(plan, "\"storeVersion\":\"v1.0.0\"");
    CHECK_HAS(plan, "\"targetVersion\":\"v2.0.0\"");
    CHECK_HAS(plan, "{\"from\":\"v1.2.0\",\"to\":\"v2.0.0\",\"inferred\":true,\"mappingModels\":[\"inferred\"]");
    CHECK_HAS(plan, "\"direct\":false}");
    /* Every step inferred: Core Data's direct step is offered beside them. */
    CHECK_HAS(plan, "\"directStep\":{\"from\":\"v1.0.0\",\"to\":\"v2.0.0\",\"inferable\":");
    cdm_free(plan);
    plan = NULL;
    CHECK_RC(cdm_chain_plan(models, store, "v1.1.0", &plan), 0);
    CHECK_HAS(plan, "\"directStep\":null");   /* one step: nothing to offer */
    CHECK_HAS(plan, "\"targetVersion\":\"v1.1.0\"");
    cdm_free(plan);

    /* The run: the result is at v2.0.0, nothing else is left. */
    char *report = NULL;
    CHECK_RC(cdm_migrate_chain(models, store, NULL, destination, &report), 0);
    CHECK_HAS(report, "\"alreadyAtTarget\":false");
    CHECK_HAS(report, "\"destinationCounts\":{\"BasicEntity\":1}");
    cdm_free(report);
    CHECK(access(destination, F_OK) == 0);
    CHECK(entries(dir) == before + 1);
    metadata = NULL;
    CHECK_RC(cdm_store_metadata_read(destination, &metadata), CDM_OK);
    uuid = NULL;
    CHECK_RC(cdm_store_metadata_uuid(metadata, &uuid), CDM_OK);
    CHECK_STR(uuid, source_uuid);
    cdm_store_metadata_free(metadata);

    /* The four inferred steps fuse into one pass; without fusing, one pass per step, the same store. */
    plan = NULL;
    CHECK_RC(cdm_chain_plan_with_options(models, NULL, store, NULL, 1, &plan), 0);
    CHECK_HAS(plan, "\"passes\":[{\"from\":\"v1.0.0\",\"to\":\"v2.0.0\",\"steps\":[0,1,2,3],\"fused\":true");
    cdm_free(plan);
    plan = NULL;
    CHECK_RC(cdm_chain_plan_with_options(models, NULL, store, NULL, 0, &plan), 0);
    CHECK_HAS(plan, "{\"from\":\"v1.0.0\",\"to\":\"v1.1.0\",\"steps\":[0],\"fused\":false");
    cdm_free(plan);
    char fused_copy[4096], steps_copy[4096];
    snprintf(fused_copy, sizeof fused_copy, "%s/fused.sqlite", dir);
    snprintf(steps_copy, sizeof steps_copy, "%s/steps.sqlite", dir);
    report = NULL;
    CHECK_RC(cdm_migrate_chain_with_options(models, NULL, store, NULL, fused_copy, 1, &report), 0);
    CHECK_HAS(report, "\"fusedSteps\":[{\"from\":\"v1.0.0\",\"to\":\"v1.1.0\",\"inferred\":true");
    CHECK_HAS(report, "\"destinationCounts\":{\"BasicEntity\":1}");
    cdm_free(report);
    report = NULL;
    CHECK_RC(cdm_migrate_chain_with_options(models, NULL, store, NULL, steps_copy, 0, &report), 0);
    CHECK_HAS(report, "{\"from\":\"v1.2.0\",\"to\":\"v2.0.0\",\"inferred\":true,\"mappingModels\":[\"inferred\"],\"direct\":false,\"fusedSteps\":[]");
    cdm_free(report);
    CHECK(unlink(fused_copy) == 0);
    CHECK(unlink(steps_copy) == 0);
    cdm_migration *steps_chain = NULL;
    CHECK_RC(cdm_migration_new_chain(models, NULL, &steps_chain), CDM_OK);
    CHECK_RC(cdm_migration_set_fuse_steps(steps_chain, 0), CDM_OK);
    CHECK_RC(cdm_migration_run(steps_chain, store, steps_copy), CDM_OK);
    char *chain_report = NULL;
    CHECK_RC(cdm_migration_report_json(steps_chain, &chain_report), CDM_OK);
    CHECK_HAS(chain_report, "\"to\":\"v1.1.0\",\"inferred\":true,\"mappingModels\":[\"inferred\"],\"direct\":false,\"fusedSteps\":[]");
    cdm_free(chain_report);
    cdm_migration_free(steps_chain);
    CHECK(unlink(steps_copy) == 0);

    /* The destination exists now: refused, nothing changes. */
    CHECK_RC(cdm_migrate_chain(models, store, NULL, destination, NULL), CDM_MIGRATION_MANAGER_DESTINATION_STORE);
    CHECK(entries(dir) == before + 1);

    /* The result is at the target: in place does nothing. */
    report = NULL;
    CHECK_RC(cdm_migrate_chain(models, destination, NULL, NULL, &report), 0);
    CHECK_HAS(report, "\"alreadyAtTarget\":true");
    cdm_free(report);

    /* A store of another model: 134130 naming the store's entity. */
    plan = NULL;
    CHECK_RC(cdm_chain_plan("../../examples/4-uncloudnotes", store, NULL, &plan), CDM_MIGRATION_MISSING_SOURCE_MODEL);
    CHECK(plan == NULL);
    CHECK_HAS(cdm_last_errmsg(), "BasicEntity");
    CHECK_RC(cdm_chain_plan(models, store, "v9", &plan), CDM_INVALID_ARGUMENT);

    /* The whole set as a folder's files: every version, the Xcode mapping models bound to the
    ** versions they name (with those versions' entity hashes) and current-version. */
    char *set = NULL;
    const char *uncloudnotes = "../Fixtures/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld";
    CHECK_RC(cdm_model_set_json(uncloudnotes, &set), 0);
    CHECK(set != NULL);
    if (set) {
        CHECK_HAS(set, "\"name\":\"UnCloudNotesDataModel_v4.json\"");
        CHECK_HAS(set, "\"name\":\"UnCloudNotesMappingModel_v2_to_v3.mapping.json\"");
        CHECK_HAS(set, "{\"name\":\"UnCloudNotesMappingModel_v3_to_v4\",\"from\":\"UnCloudNotesDataModel_v3\",\"to\":\"UnCloudNotesDataModel_v4\"}");
        CHECK_HAS(set, "\"name\":\"current-version\",\"text\":\"UnCloudNotesDataModel_v4\\n\"");
        CHECK_HAS(set, "sourceEntityVersionHash");
        cdm_free(set);
    }
    set = NULL;
    CHECK(cdm_model_set_json("../Fixtures/no-such.xcdatamodeld", &set) != 0);
    CHECK(set == NULL);
    CHECK_HAS(cdm_last_errmsg(), "no-such.xcdatamodeld");
    CHECK_RC(cdm_model_set_json(NULL, &set), CDM_MISUSE);
    CHECK_RC(cdm_model_set_json(uncloudnotes, NULL), CDM_MISUSE);

    /* Mapping models kept in another folder (here two levels down): found when the folder is
    ** given, and the set says where it looked when they are not. */
    char command[1600];
    snprintf(command, sizeof command,
             "mkdir -p '%s/App/Migrations/Deep' && cp -R ../Fixtures/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld '%s/App/' && "
             "cp -R ../Fixtures/xcode/UnCloudNotes/UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel '%s/App/Migrations/Deep/'", dir, dir, dir);
    CHECK(system(command) == 0);
    char app_models[512], app_mappings[512];
    snprintf(app_models, sizeof app_models, "%s/App/UnCloudNotesDataModel.xcdatamodeld", dir);
    snprintf(app_mappings, sizeof app_mappings, "%s/App/Migrations", dir);
    const char *mapping_dirs[] = {app_mappings, NULL};
    set = NULL;
    CHECK_RC(cdm_model_set_json_with_mappings(app_models, NULL, &set), 0);
    CHECK_HAS(set, "\"mappingModels\":[]");
    CHECK_HAS(set, "found 0 mapping models");
    cdm_free(set);
    set = NULL;
    CHECK_RC(cdm_model_set_json_with_mappings(app_models, mapping_dirs, &set), 0);
    CHECK_HAS(set, "{\"name\":\"UnCloudNotesMappingModel_v3_to_v4\",\"from\":\"UnCloudNotesDataModel_v3\",\"to\":\"UnCloudNotesDataModel_v4\"}");
    cdm_free(set);
    cdm_migration *chain = NULL;
    CHECK_RC(cdm_migration_new_chain_with_mappings(app_models, mapping_dirs, "UnCloudNotesDataModel_v4", &chain), 0);
    cdm_migration_free(chain);
    const char *missing_dirs[] = {"../Fixtures/no-such-folder", NULL};
    plan = NULL;
    CHECK_RC(cdm_chain_plan_with_mappings(app_models, missing_dirs, store, NULL, &plan), CDM_IO);
    CHECK_HAS(cdm_last_errmsg(), "no-such-folder");
    CHECK_RC(cdm_migrate_chain_with_mappings(app_models, missing_dirs, store, NULL, destination, NULL), CDM_IO);

    /* Misuse: NULL arguments are errors, not crashes. */
    CHECK_RC(cdm_chain_plan(NULL, store, NULL, &plan), CDM_MISUSE);
    CHECK_RC(cdm_chain_plan(models, store, NULL, NULL), CDM_MISUSE);
    CHECK_RC(cdm_migrate_chain(models, NULL, NULL, destination, NULL), CDM_MISUSE);

    direct_step_is_taken(dir);
    return scratch_end("chain_test: ");
}
